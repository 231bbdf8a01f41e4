"""What the command line writes: one JSON document, or lines made safe by
:func:`~tilelang_hostcg._text.shown`; warnings and notes on stderr; and :func:`held_output`,
which keeps what loading prints off stdout; and the errors of the command line (one line
on stderr and the exit status)."""

from __future__ import annotations

import contextlib
import json
import os
import re
import sys
import tempfile
from typing import TYPE_CHECKING, Any, TypeVar

from .._errors import shown

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Sequence


__all__ = ["CliError", "Doc", "PROG", "UsageError", "describe_distribution", "describe_flags", "err",
           "held_output", "note_tilelang", "out", "quietly", "shown", "warn_all", "write_json",
           "write_traceback"]

PROG = "tilelang-hostcg"


class CliError(Exception):
    """An error the command line reports as one line on stderr; ``exit_code`` is its status."""

    exit_code = 1

    def __init__(self, message: str, *, exit_code: int | None = None, prog: str = PROG,
                 ) -> None:
        super().__init__(message)
        self.prog = prog
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(CliError):
    """Bad arguments or unusable input given by the user (exit status 2)."""

    exit_code = 2


_T = TypeVar("_T")
Doc = dict[str, Any]


def out(text: str = "") -> None:
    """Write ``text`` on stdout as one line (a newline in it is shown as ``\\n``)."""
    sys.stdout.write(shown(text) + "\n")


def err(text: str) -> None:
    """Write ``text`` on stderr as one line (a newline in it is shown as ``\\n``)."""
    sys.stderr.write(shown(text) + "\n")


def write_json(doc: Doc) -> None:
    """Write ``doc`` as one JSON document on stdout."""
    sys.stdout.write(json.dumps(doc, indent=2, sort_keys=True, default=str) + "\n")


def describe_distribution(item: Doc) -> str:
    """The distribution and version an entry or registration comes from."""
    if item.get("distribution") is None:
        return "registered in code"
    return f"{item['distribution']} {item.get('version') or '?'}"


def describe_flags(item: Doc) -> str:
    """How an entry or registration stands to the core, as a bracketed suffix."""
    if item.get("default"):
        return "  [default]"
    if item.get("core"):
        return "  [core]"
    if item.get("replaces_core"):
        return "  [replaces core]"
    if item.get("extends_core"):
        return "  [overrides/extends core]"
    return ""


# TVM's warning that it guessed the CUDA architecture of a target given without one: the
# command line makes such targets itself (the default ``Target(kind)``), so it is no news.
_TVM_ARCH_GUESS = re.compile(
    rb"^.*Warning: Unable to detect CUDA version, default to \"-(?:arch|mcpu)=sm_\d+\" instead\n",
    re.MULTILINE)


def _flush() -> None:
    for stream in (sys.stdout, sys.__stdout__, sys.stderr, sys.__stderr__):
        with contextlib.suppress(Exception):
            if stream is not None:
                stream.flush()


@contextlib.contextmanager
def held_output() -> Iterator[None]:
    """Hold what TVM and plugins write meanwhile (to ``sys.stdout``, ``sys.__stdout__``,
    descriptors 1 and 2) and write it on stderr afterwards, so stdout carries only the
    command's document; TVM's guess of a CUDA architecture is left out."""
    _flush()
    saved: list[tuple[int, int]] = []
    with tempfile.TemporaryFile() as held:
        try:
            for fd in (1, 2):
                with contextlib.suppress(OSError):  # a closed descriptor stays closed
                    copy = os.dup(fd)
                    saved.append((fd, copy))
                    os.dup2(held.fileno(), fd)
            with contextlib.redirect_stdout(sys.stderr):
                yield
        finally:
            _flush()
            for fd, copy in reversed(saved):
                os.dup2(copy, fd)
                os.close(copy)
            held.seek(0)
            data = _TVM_ARCH_GUESS.sub(b"", held.read())
            stream = getattr(sys.stderr, "buffer", None)  # the bytes as written, if it can
            if data and stream is not None:
                stream.write(data)
                stream.flush()
            elif data:
                sys.stderr.write(data.decode("utf-8", "backslashreplace"))


def write_traceback(item: Doc, wanted: bool, indent: str) -> None:
    """With ``--traceback``, the plugin's own traceback of ``item`` (an entry point or a
    problem), one escaped line each."""
    for line in (item.get("traceback") or ()) if wanted else ():
        out(indent + line)


def quietly(build: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    """``build(*args, **kwargs)`` inside :func:`held_output`."""
    with held_output():
        return build(*args, **kwargs)


def warn_all(texts: Sequence[str]) -> None:
    """Write each of ``texts`` on stderr as a warning."""
    for text in texts:
        err(f"warning: {text}")


def note_tilelang(doc: Doc) -> None:
    """Say on stderr when the TVM in use is a TileLang the integration does not support
    (the answers are then for :func:`tilelang_hostcg.build` with its TVM), and, for plain
    ``list`` under a supported one, that ``--load`` shows TileLang's defaults."""
    tvm = doc.get("tvm") or {}
    if tvm.get("provider") != "tilelang":
        return
    from ..tilelang.gate import SUPPORTED, UnsupportedTileLangError, mode_of

    version = str(tvm.get("provider_version") or "?")
    name = f"{tvm.get('distribution') or 'tilelang'} {version}"
    try:
        mode_of(version)
        if doc.get("loaded") is False:  # plain list: TileLang's codegens are not registered
            err(f"note: TileLang {version}'s own host codegens and hooks ({name}) are the "
                "defaults; `list --load` shows them")
    except UnsupportedTileLangError:
        err(f"note: TileLang {version} is not supported by tilelang_hostcg.tilelang (installed "
            f"as {name}; it supports TileLang{SUPPORTED}); these answers are for "
            "tilelang_hostcg.build() with its TVM, and TileLang's own compiler does not use the "
            "plugins")
