"""Text from outside (plugins, metadata, the environment) as shown to people: never
interpreted by the terminal. :func:`shown` is the one rule, for the command line's text and
the library's warnings; JSON documents keep the exact text."""

from __future__ import annotations

import re

__all__ = ["shown"]

# C0 controls (newline and tab too: one field stays one line), DEL, C1 controls, and the
# bidirectional marks, embeddings, overrides and isolates that reorder what follows.
_INTERPRETED = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
# A byte that was not UTF-8, as ``repr`` writes its surrogate escape.
_SURROGATE_REPR = re.compile(r"(?<!\\)\\udc([89a-f][0-9a-f])")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def shown(text: str) -> str:
    """``text`` safe to print: control characters (``\\n`` and ``\\t`` included), DEL, C1
    controls and bidirectional controls escaped (``\\x1b``, ``\\u202e``), and bytes that
    were not UTF-8 (surrogate escapes, raw or as ``repr`` writes them) as ``\\xNN``."""
    text = _INTERPRETED.sub(_escape, _SURROGATE_REPR.sub(r"\\x\1", text))
    try:
        data = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that stands for no byte
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return data.decode("utf-8", "backslashreplace")
