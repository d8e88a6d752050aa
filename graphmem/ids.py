"""The id policy: which strings may be a user, session or turn id.

Ids are opaque, compared exactly (case-sensitive, no folding) and never rewritten: an id that
would change under a normalisation is refused rather than silently normalised, so the id a client
sends is the id it reads back and two ids that look alike can never become one user. Refused
(422 ``INVALID_<WHAT>``):

* empty, or longer than the limit (characters);
* not NFC (``"Rene\\u0301"``; send ``"Ren\\u00e9"``): canonically equivalent spellings would be two users;
* leading or trailing whitespace (``" carol"`` would look like ``"carol"``);
* control characters (Cc), invisible format characters (Cf: zero-width, bidi controls, BOM, soft
  hyphen), lone surrogates (Cs), line/paragraph separators, noncharacters and U+FFFD (the
  replacement character: the sender's bytes were already lost);
* ``.`` and ``..`` (dot path segments), and for user ids any ``/`` (a user id is one URL path segment).

Over HTTP a path whose bytes are not valid UTF-8 is refused before this check (graphmem/api/limits.py), so
``Ren%E9`` and ``Ren%FF`` never both decode to ``Ren\\ufffd``.
"""

from __future__ import annotations

import unicodedata

from .errors import InvalidInput

_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Zl", "Zp"})


def _bad_char(ch: str) -> bool:
    cp = ord(ch)
    if unicodedata.category(ch) in _REFUSED_CATEGORIES or ch == "\ufffd":
        return True
    return 0xFDD0 <= cp <= 0xFDEF or (cp & 0xFFFE) == 0xFFFE  # noncharacters


def check_id(value: object, what: str, max_length: int, *, path_segment: bool = False) -> str:
    """``value`` if it is a valid id, else InvalidInput with code ``INVALID_<WHAT>``."""
    code = f"INVALID_{what.upper()}"
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{what} must be a non-empty string", code=code)
    if len(value) > max_length:
        raise InvalidInput(f"{what} is longer than {max_length} characters", code=code)
    bad = next((ch for ch in value if _bad_char(ch)), None)
    if bad is not None:
        raise InvalidInput(
            f"{what} contains an invisible, control, bidi or invalid character "
            f"(U+{ord(bad):04X}); ids must be visible text",
            code=code,
        )
    if value != value.strip():
        raise InvalidInput(f"{what} has leading or trailing whitespace", code=code)
    if not unicodedata.is_normalized("NFC", value):
        raise InvalidInput(
            f"{what} is not in Unicode normal form NFC; send {unicodedata.normalize('NFC', value)!r} instead", code=code
        )
    if value in (".", ".."):
        raise InvalidInput(f"{what} cannot be '.' or '..' (URL path segments)", code=code)
    if path_segment and "/" in value:
        raise InvalidInput(f"{what} cannot contain '/': it is one segment of the URL path", code=code)
    return value
