"""The exception tree, the package's warning and how it warns, and :func:`shown` (outside text made printable)."""

from __future__ import annotations

import re
import sys
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import FrameType

class HostCodegenError(ValueError):
    """The root of the package's exceptions; keyword arguments become attributes (``kind``, ``origin``)."""

    def __init__(self, message: str, **fields: object) -> None:
        super().__init__(message)
        self.__dict__.update(fields)


class NoHostCodegenError(HostCodegenError):
    """No registered host codegen matches the host target (``available``: the kind's names)."""

    kind: str
    available: tuple[str, ...] = ()


class AmbiguousHostCodegenError(HostCodegenError):
    """Codegens of several distributions match with equal top priority (``(name, distribution)`` pairs)."""

    kind: str
    candidates: tuple[tuple[str, str], ...]


class PluginLoadError(HostCodegenError):
    """A plugin could not be loaded; ``__cause__`` is the original exception, ``origin`` its ``Origin``."""

    kind: str
    origin: object


class DuplicateRegistrationError(HostCodegenError):
    """A different codegen or hook with the same name is already registered for the kind
    (``existing``: that registration's ``Origin``)."""

    kind: str
    name: str
    existing: object = None


class PluginCallbackError(HostCodegenError, TypeError):
    """A plugin's callback (a codegen's build, a hook) returned something it must not."""

    name: str
    origin: object


class TargetParseError(HostCodegenError):
    """A target given as text is neither a known kind name nor TVM's JSON form."""


class MissingGlobalFuncError(HostCodegenError):
    """The TVM global function behind a codegen is not in the TVM in use."""

    global_func_name: str


class UnsupportedTileLangError(HostCodegenError):
    """No TileLang is installed, or it lacks an integration point (``tilelang._points.POINTS``)."""


class PluginWarning(UserWarning):
    """A plugin was skipped (broken, incompatible, duplicated) while something else served."""


_PACKAGE = __name__.rpartition(".")[0]
# A warning looks past our frames, TileLang's and TVM's (they call us from their compilers and
# at import), the import system's and contextlib's, to reach the user's line.
_PASSED = (_PACKAGE, "_tilelang_hostcg_hook", "tilelang", "tvm", "importlib", "contextlib")


def _outside(frame: FrameType | None, level: int = 2) -> tuple[int, FrameType | None]:
    """The ``stacklevel`` of the user's line (the first frame not of :data:`_PASSED`), and it."""
    while frame is not None:
        name = frame.f_globals.get("__name__")
        if not (isinstance(name, str) and any(name == p or name.startswith(p + ".") for p in _PASSED)):
            break
        frame = frame.f_back
        # ``warnings`` does not count the import system's frozen frames: neither do we.
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
    """Warn at the user's line with ``message`` :func:`shown`; the filters apply, but under :func:`at_import`."""
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
    """Add ``note`` to ``exc`` (PEP 678); on Python 3.10 it also joins the message, to show in the traceback."""
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

    path: str


class UnknownKindError(InputError):
    """A kind named on the command line is unknown, or of the wrong sort for its option."""

    kind: str


class DeviceAsHostError(InputError, HostCodegenError):
    """A device target (``cuda``, ...) was given where a host target is needed (a target's host, ``--host``)."""

    kind: str


# C0 controls (newline and tab too: a field stays one line), DEL, C1 and bidirectional controls.
_INTERPRETED = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
# A byte that was not UTF-8, as ``repr`` writes its surrogate escape.
_SURROGATE_REPR = re.compile(r"(?<!\\)\\udc([89a-f][0-9a-f])")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def shown(text: str, limit: int | None = None) -> str:
    """``text`` safe to print: controls, DEL, C1, bidi controls and non-UTF-8 bytes escaped; ``limit``: quoted, cut."""
    if limit is not None:
        cut = f"'{shown(text[:limit])}'"
        return cut if len(text) <= limit else f"{cut}... ({len(text)} characters)"
    text = _INTERPRETED.sub(_escape, _SURROGATE_REPR.sub(r"\\x\1", text))
    try:
        data = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that stands for no byte
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return data.decode("utf-8", "backslashreplace")
