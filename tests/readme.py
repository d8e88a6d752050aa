"""The README's code examples, read at test time so the tests run exactly what the README shows."""

from __future__ import annotations

import re

from graphmem.settings import PROJECT_ROOT


def readme_block(test_file: str) -> str:
    """The fenced block right after `<!-- test: {test_file} runs this block -->` in README.md."""
    text = (PROJECT_ROOT / "README.md").read_text(encoding="utf-8")
    marker = f"<!-- test: {test_file} runs this block -->"
    match = re.search(re.escape(marker) + r"\s*```\w*\n(.*?)```", text, re.S)
    assert match, f"README.md has no code block after {marker!r}"
    return match.group(1)


def localised(code: str, base_url: str, key: str, user_id: str) -> str:
    """The example pointed at the test's API, key and user (the only substitutions made)."""
    for old, new in (("http://127.0.0.1:8000", base_url), ('"my-key"', repr(key)), ('"xiaoming"', repr(user_id))):
        assert old in code, f"the README example no longer contains {old}"
        code = code.replace(old, new)
    return code
