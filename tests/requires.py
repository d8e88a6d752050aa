"""What a fresh clone may lack (the shared evaluation data, Chromium): a visible skip, or a failure in CI.

A developer who clones the project alone gets a green suite with the reason of every skip in pytest's
summary (``-ra``); ``.ci/run`` sets the ``GRAPHMEM_REQUIRE_*`` variables, which turn these skips into
failures, so CI never silently skips a data-backed or browser test.
"""

from __future__ import annotations

import os
from typing import NoReturn

import pytest

REQUIRE_SHARED_DATA = "GRAPHMEM_REQUIRE_SHARED_DATA"
REQUIRE_BROWSER = "GRAPHMEM_REQUIRE_BROWSER"


def required(variable: str) -> bool:
    return os.environ.get(variable, "").strip().lower() not in ("", "0", "false", "no")


def missing(what: str, variable: str) -> NoReturn:
    """Skips the test because ``what`` is absent, or fails it when ``variable`` says it is required."""
    if required(variable):
        pytest.fail(f"{what} ({variable} is set, so a missing requirement is a failure)")
    pytest.skip(f"{what} (set {variable}=1 to make this a failure)")
