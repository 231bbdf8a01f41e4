"""The exception tree (errors of the registry, and of input given by the user: exit status 2 on
the command line), the warning category of the package, and :func:`shown`: text from outside
(plugins, metadata, the environment) as shown to people, never interpreted by the terminal."""

from __future__ import annotations

import re
import sys
import threading
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import FrameType

__all__ = ["AmbiguousHostCodegenError", "DeviceAsHostError", "DuplicateRegistrationError",
           "HostCodegenError", "InputError", "LockFileError", "MissingGlobalFuncError",
           "NoHostCodegenError", "PluginCallbackError", "PluginLoadError", "PluginWarning",
           "TargetParseError", "UnknownKindError", "UnsupportedTileLangError", "add_note", "at_import", "text_of",
           "shown", "warn_once", "warn_plugin"]


class HostCodegenError(ValueError):
    """The root of every exception class of ``tilelang_hostcg``: each also derives from the
    standard type it is (``ValueError`` here; ``ImportError``, ``TypeError`` where it is one)."""


class NoHostCodegenError(HostCodegenError):
    """No registered host codegen matches the host target (``kind``; ``available``: the names
    registered for it)."""

    def __init__(self, message: str, *, kind: str, available: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.kind = kind
        self.available = tuple(available)


class AmbiguousHostCodegenError(HostCodegenError):
    """Several distributions provide matching codegens of equal top priority (``candidates``:
    ``(codegen name, distribution)`` pairs)."""

    def __init__(self, message: str, *, kind: str, candidates: Sequence[tuple[str, str]]) -> None:
        super().__init__(message)
        self.kind = kind
        self.candidates = tuple(candidates)


class PluginLoadError(HostCodegenError):
    """A plugin could not be loaded; ``__cause__`` holds the original exception, ``origin`` the
    :class:`~tilelang_hostcg.Origin` of the failing entry point."""

    def __init__(self, message: str, *, kind: str, origin: object) -> None:
        super().__init__(message)
        self.kind = kind
        self.origin = origin


class DuplicateRegistrationError(HostCodegenError):
    """A different codegen or hook with the same name is already registered for the kind."""

    def __init__(self, message: str, *, kind: str, name: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.name = name


class PluginCallbackError(HostCodegenError, TypeError):
    """A plugin's callback (a codegen's build, a hook) returned something it must not (also a
    ``TypeError``); ``name`` is the codegen's or hook's name, ``origin`` its ``Origin``."""

    def __init__(self, message: str, *, name: str, origin: object) -> None:
        super().__init__(message)
        self.name = name
        self.origin = origin


class TargetParseError(HostCodegenError):
    """A target given as text is neither a known kind name nor TVM's JSON form."""


class MissingGlobalFuncError(HostCodegenError):
    """The TVM global function behind a codegen is not in the TVM in use."""

    def __init__(self, message: str, *, global_func_name: str) -> None:
        super().__init__(message)
        self.global_func_name = global_func_name


class UnsupportedTileLangError(HostCodegenError):
    """No TileLang is installed, or it lacks an integration point the integration relies on
    (``tilelang_hostcg.tilelang._points.POINTS``)."""


class PluginWarning(UserWarning):
    """A plugin was skipped (broken, incompatible, duplicated) while something else served."""


_PACKAGE = __name__.rpartition(".")[0]

# ---------------------------------------------------------------- the caller's line
# Modules a warning looks past to reach the user's line: ours (the package and its
# start-up hook), TileLang's (after tilelang_hostcg.tilelang.install(), TileLang calls
# us from inside its compiler and kernel cache), TVM's (its ``tvm.backends`` autoload runs
# the TVM integration's activation inside ``import tvm``, and routed builds call us from
# inside ``tvm.compile``), the import system's (activation is in ``import tilelang``) and contextlib's.
_PASSED = (_PACKAGE, "_tilelang_hostcg_hook", "tilelang", "tvm", "importlib", "contextlib")


def _outside(frame: FrameType | None, level: int = 2) -> tuple[int, FrameType | None]:
    """The ``stacklevel`` of the first frame, from ``frame`` (at ``level``) outwards, whose
    module is neither ours, TileLang's, TVM's nor the import system's (the user's line), and it."""
    while frame is not None:
        name = frame.f_globals.get("__name__")
        if not (isinstance(name, str) and any(name == p or name.startswith(p + ".") for p in _PASSED)):
            break
        frame = frame.f_back
        # ``warnings`` does not count the import system's frozen frames (its rule): neither do we.
        while frame is not None and "importlib" in (path := frame.f_code.co_filename) and "_bootstrap" in path:
            frame = frame.f_back
        level += 1
    return level, frame


_IMPORTING = threading.local()  # .on: this thread runs an activation


@contextmanager
def at_import() -> Iterator[None]:
    """Where no code can catch a warning (activation): one the filters make an error is shown, not raised."""
    before, _IMPORTING.on = getattr(_IMPORTING, "on", False), True
    try:
        yield
    finally:
        _IMPORTING.on = before


def warn_plugin(message: str, category: type[Warning] = PluginWarning) -> None:
    """Warn, pointing at the user's line, with the text of plugins and metadata in ``message``
    escaped (:func:`shown`: our messages are one line); the filters apply (``-W error`` raises
    it there), but under :func:`at_import`."""
    level, frame = _outside(sys._getframe(1))
    try:
        warnings.warn(shown(message), category, stacklevel=level)
    except category as raised:
        if not getattr(_IMPORTING, "on", False):
            raise
        where = frame or sys._getframe()
        warnings.showwarning(raised, category, where.f_code.co_filename, where.f_lineno)


_WARNED: set[str] = set()


def warn_once(message: str, category: type[Warning] = PluginWarning) -> None:
    """:func:`warn_plugin`, once per process for each message."""
    if message not in _WARNED:
        warn_plugin(message, category)  # raised as an error (``-W error``): not yet shown
        _WARNED.add(message)


def text_of(exc: BaseException) -> str:
    """``str(exc)``, or a placeholder for a plugin's exception that cannot be printed."""
    try:
        return str(exc)
    except Exception:
        return f"<{type(exc).__name__} whose str() raised>"


def add_note(exc: BaseException, note: str) -> None:
    """Add ``note`` to ``exc`` as PEP 678 says (``add_note`` on Python 3.11 and later). On
    Python 3.10 the note also joins the message (the first of ``args``, when it is text),
    so that it shows in the traceback; the exception keeps its type."""
    if sys.version_info >= (3, 11):
        exc.add_note(note)
        return
    notes = getattr(exc, "__notes__", None)
    try:
        exc.__notes__ = [*notes, note] if isinstance(notes, list) else [note]  # type: ignore[attr-defined]
        if exc.args and isinstance(exc.args[0], str):
            exc.args = (f"{exc.args[0]}\n{note}", *exc.args[1:])
        elif not exc.args:
            exc.args = (note,)
    except (AttributeError, TypeError):  # an exception type that refuses new attributes
        pass


class InputError(HostCodegenError):
    """Input given by the user cannot be used (exit status 2 on the command line)."""


class LockFileError(InputError):
    """A lock file is missing, unreadable, not written, or not a lock file; ``path`` names it."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path


class UnknownKindError(InputError):
    """A kind named on the command line is neither a TVM target kind nor advertised, or is
    of the wrong sort for its option (a device kind for ``--require``, a host kind for
    ``--require-hook``)."""

    def __init__(self, message: str, *, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


class DeviceAsHostError(InputError, HostCodegenError):
    """A device target (``cuda``, ``rocm``, ...) was given where a host target is needed:
    a target's ``host``, or ``--host`` on the command line. ``kind`` is its kind."""

    def __init__(self, message: str, *, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


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
