"""What the command line writes to the terminal: text safe for any encoding, one JSON
document, the wording of list entries, warnings and notes on stderr, and calls whose
own printing must not reach stdout.

Names are shown with bytes that were not UTF-8 as ``\\xNN`` (see :func:`shown`), so that
no name or path can make a command fail.
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

__all__ = ["Doc", "describe_distribution", "describe_flags", "describe_state", "err",
           "note_tilelang", "out", "quietly", "shown", "warn_all", "write_json",
           "write_mapping"]

_T = TypeVar("_T")
Doc = dict[str, Any]

_SURROGATE_REPR = re.compile(r"(?<!\\)\\udc([89a-f][0-9a-f])")


def shown(text: str) -> str:
    """``text`` for the terminal: bytes that were not UTF-8 (surrogate escapes, raw or as
    written by ``repr``) become ``\\xNN``, as the library shows environment values."""
    text = _SURROGATE_REPR.sub(r"\\x\1", text)
    try:
        data = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that stands for no byte
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return data.decode("utf-8", "backslashreplace")


def out(text: str = "") -> None:
    """Write one line of ``text`` on stdout."""
    sys.stdout.write(shown(text) + "\n")


def err(text: str) -> None:
    """Write one line of ``text`` on stderr."""
    sys.stderr.write(shown(text) + "\n")


def write_json(doc: Doc) -> None:
    """Write ``doc`` as one JSON document on stdout."""
    sys.stdout.write(json.dumps(doc, indent=2, sort_keys=True, default=str) + "\n")


def write_mapping(info: Any, indent: str = "") -> None:
    """Write a mapping as aligned ``key: value`` lines, nested mappings indented."""
    width = max((len(str(k)) for k in info), default=0)
    for key, value in info.items():
        label = f"{indent}{str(key) + ':':<{width + 1}}"
        if isinstance(value, dict):
            out(label.rstrip())
            write_mapping(value, indent + "  ")
        elif isinstance(value, (list, tuple)):
            out(f"{label} " + (", ".join(map(str, value)) if value else "(none)"))
        else:
            out(f"{label} {value}")


def describe_distribution(item: Doc) -> str:
    """The distribution and version an entry or registration comes from."""
    if item.get("distribution") is None:
        return "registered in code"
    return f"{item['distribution']} {item.get('version') or '?'}"


def describe_flags(item: Doc) -> str:
    """How an entry or registration stands to the core, as a bracketed suffix."""
    if item.get("core"):
        return "  [core]"
    if item.get("replaces_core"):
        return "  [replaces core]"
    if item.get("extends_core"):
        return "  [overrides/extends core]"
    return ""


def describe_state(entry: Doc) -> str:
    """An entry point's state, with its error or reason."""
    state = str(entry["state"])
    if entry.get("error"):
        return f"{state}: {entry['error']['type']}: {entry['error']['message']}"
    if entry.get("reason"):
        return f"{state}: {entry['reason']}"
    return state


def quietly(build: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    """Call ``build`` with whatever it prints (TVM and plugins print, e.g. "ROCm not
    detected") sent to stderr, so that stdout holds only the command's output."""
    sys.stdout.flush()
    with contextlib.redirect_stdout(sys.stderr):
        return build(*args, **kwargs)


def warn_all(texts: Sequence[str]) -> None:
    """Write each of ``texts`` on stderr as a warning."""
    for text in texts:
        err(f"warning: {text}")


def note_tilelang(doc: Doc) -> None:
    """Say on stderr when the TVM in use is a TileLang the integration does not support:
    the answers are then for :func:`tilelang_hostcg.build` with its TVM."""
    tvm = doc.get("tvm") or {}
    if tvm.get("provider") != "tilelang":
        return
    from ..tilelang.gate import SUPPORTED, UnsupportedTileLangError, mode_of

    version = str(tvm.get("provider_version") or "?")
    try:
        mode_of(version)
    except UnsupportedTileLangError:
        err(f"note: TileLang {version} is not supported by tilelang_hostcg.tilelang "
            f"(tilelang{SUPPORTED}); these answers are for tilelang_hostcg.build() with its "
            "TVM, and TileLang's own compiler does not use the plugins")
