"""The exception tree and the warning category of the package."""

from __future__ import annotations

import sys
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import FrameType

__all__ = ["AmbiguousHostCodegenError", "DuplicateRegistrationError", "HostCodegenError", "MissingGlobalFuncError",
           "NoHostCodegenError", "PluginCallbackError", "PluginLoadError", "PluginWarning", "TargetParseError",
           "UnsupportedTileLangError", "add_note", "outside_level", "warn_once", "warn_plugin"]


class HostCodegenError(ValueError):
    """Base of every error raised by ``tilelang_hostcg``."""


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
    """The installed TileLang is missing or outside the versions the integration supports
    (``tilelang_hostcg.tilelang.SUPPORTED``)."""


class PluginWarning(UserWarning):
    """A plugin was skipped (broken, incompatible, duplicated) while something else served."""


_PACKAGE = __name__.rpartition(".")[0]

# ---------------------------------------------------------------- the caller's line
# Modules a warning looks past to reach the user's line: ours (the package and its
# start-up hook), TileLang's (after tilelang_hostcg.tilelang.install(), TileLang calls
# us from inside its compiler and kernel cache) and the import system's (activation
# runs inside ``import tilelang``).
_PASSED = (_PACKAGE, "_tilelang_hostcg_hook", "tilelang", "importlib")


def outside_level(frame: FrameType | None, level: int = 2) -> int:
    """The ``stacklevel`` of the first frame, from ``frame`` (at ``level``) outwards, whose
    module is neither ours, TileLang's nor the import system's: the user's line."""
    while frame is not None:
        name = frame.f_globals.get("__name__")
        if not (isinstance(name, str) and any(name == p or name.startswith(p + ".") for p in _PASSED)):
            break
        frame = frame.f_back
        # ``warnings`` does not count the import system's frozen frames (its rule): neither do we.
        while frame is not None and "importlib" in (path := frame.f_code.co_filename) and "_bootstrap" in path:
            frame = frame.f_back
        level += 1
    return level


def warn_plugin(message: str, category: type[Warning] = PluginWarning) -> None:
    """Warn, pointing at the user's line (see :func:`outside_level`), with the text of
    plugins and metadata in ``message`` escaped (:func:`~tilelang_hostcg._text.shown`: our
    messages are one line)."""
    from ._text import shown  # loaded when there is something to warn about

    warnings.warn(shown(message), category, stacklevel=outside_level(sys._getframe(1)))


_WARNED: set[str] = set()


def warn_once(message: str, category: type[Warning] = PluginWarning) -> None:
    """:func:`warn_plugin`, once per process for each message."""
    if message not in _WARNED:
        _WARNED.add(message)
        warn_plugin(message, category)


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
