"""A fresh clone skips what it lacks, visibly; CI (GRAPHMEM_REQUIRE_*) fails instead (issue 14, item 10)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from graphmem.settings import PROJECT_ROOT
from tests import test_browser
from tests.requires import REQUIRE_BROWSER, REQUIRE_SHARED_DATA, missing

DATA_TEST = "tests/test_gaps.py::test_metacademy_has_no_two_cycles"  # pure, reads the shared data only


def _pytest(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMEM_REQUIRE_")}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=PROJECT_ROOT,
        env={**clean, "GRAPHMEM_SHARED_DATA": str(tmp_path / "absent"), **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_missing_shared_data_is_a_visible_skip(tmp_path: Path) -> None:
    run = _pytest(tmp_path, DATA_TEST)
    assert run.returncode == 0, run.stdout[-2000:]
    assert "1 skipped" in run.stdout
    assert f"shared evaluation data not found at {tmp_path / 'absent'}" in run.stdout  # -ra prints the reason
    assert f"set {REQUIRE_SHARED_DATA}=1" in run.stdout


def test_missing_shared_data_fails_when_required(tmp_path: Path) -> None:
    run = _pytest(tmp_path, DATA_TEST, **{REQUIRE_SHARED_DATA: "1"})
    assert run.returncode == 1, run.stdout[-2000:]
    assert "1 error" in run.stdout or "1 failed" in run.stdout
    assert f"{REQUIRE_SHARED_DATA} is set" in run.stdout


def test_data_backed_tests_carry_the_shared_data_marker(tmp_path: Path) -> None:
    run = _pytest(tmp_path, "--collect-only", "-m", "shared_data", "tests/test_gaps.py", "tests/test_quality.py")
    picked = [line for line in run.stdout.splitlines() if "::" in line]
    assert len(picked) == 6 and all("metacademy" in line or "test_quality.py" in line for line in picked), picked


def test_not_neo4j_deselects_tests_that_reach_neo4j_through_autouse_fixtures(tmp_path: Path) -> None:
    # test_quality.py's tests reach `store` only through an autouse fixture and carry no mark of their own.
    run = _pytest(tmp_path, "--collect-only", "-m", "not neo4j", "tests/test_quality.py", "tests/test_browser.py")
    assert "no tests collected" in run.stdout and "deselected" in run.stdout, run.stdout[-2000:]


def test_missing_chromium_skips_unless_required(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # Chromium cannot be uninstalled on a shared machine, so its path is pointed somewhere empty.
    monkeypatch.setattr(test_browser, "CHROMIUM", str(tmp_path / "chromium"))
    monkeypatch.delenv(REQUIRE_BROWSER, raising=False)
    with pytest.raises(pytest.skip.Exception, match="chromium is missing"):
        test_browser._require_chromium()
    monkeypatch.setenv(REQUIRE_BROWSER, "1")
    with pytest.raises(pytest.fail.Exception, match=f"{REQUIRE_BROWSER} is set"):
        test_browser._require_chromium()


@pytest.mark.parametrize(("value", "fails"), [("", False), ("0", False), ("false", False), ("1", True), ("yes", True)])
def test_missing_reads_the_variable(monkeypatch: pytest.MonkeyPatch, value: str, fails: bool) -> None:
    monkeypatch.setenv("GRAPHMEM_REQUIRE_X", value)
    expected = pytest.fail.Exception if fails else pytest.skip.Exception
    with pytest.raises(expected, match="the thing is absent"):
        missing("the thing is absent", "GRAPHMEM_REQUIRE_X")
