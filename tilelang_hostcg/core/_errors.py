"""Every exception of the package (one tree, typed fields), and :func:`shown` (outside text made
printable). The warnings are :mod:`._warnings`'s."""

from __future__ import annotations

import re
import sys


class HostCodegenError(ValueError):
    """The root of the package's exceptions. Each is also the standard type it is (a ``ValueError``,
    and ``ImportError`` or ``TypeError`` where that is what it is), and carries typed fields."""


class NoHostCodegenError(HostCodegenError):
    """No registered host codegen matches the host target (``available``: the kind's names)."""

    def __init__(self, message: str, *, kind: str, available: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.kind = kind
        self.available = available


class AmbiguousHostCodegenError(HostCodegenError):
    """Codegens of several distributions match with equal top priority (``(name, distribution)`` pairs)."""

    def __init__(self, message: str, *, kind: str, candidates: tuple[tuple[str, str], ...]) -> None:
        super().__init__(message)
        self.kind = kind
        self.candidates = candidates


class PluginLoadError(HostCodegenError):
    """A plugin could not be loaded; ``__cause__`` is the original exception, ``origin`` its ``Origin``."""

    def __init__(self, message: str, *, kind: str, origin: object) -> None:
        super().__init__(message)
        self.kind = kind
        self.origin = origin


class DuplicateRegistrationError(HostCodegenError):
    """A different codegen or hook with the same name is already registered for the kind
    (``existing``: that registration's ``Origin``)."""

    def __init__(self, message: str, *, kind: str, name: str, existing: object = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.name = name
        self.existing = existing  # the registration already there (its origin names the other plugin)


class PluginCallbackError(HostCodegenError, TypeError):
    """A plugin's callback (a codegen's build, a hook) returned something it must not."""

    def __init__(self, message: str, *, name: str, origin: object) -> None:
        super().__init__(message)
        self.name = name
        self.origin = origin


class TargetParseError(HostCodegenError):
    """A target given as text is neither a known kind name nor TVM's JSON form."""


class NativeDefaultError(HostCodegenError, TypeError):
    """A compiler passed ``tilelang_hostcg.native`` a default codegen or hook it cannot call."""


class MissingGlobalFuncError(HostCodegenError):
    """The TVM global function behind a codegen is not in the TVM in use."""

    def __init__(self, message: str, *, global_func_name: str) -> None:
        super().__init__(message)
        self.global_func_name = global_func_name


class TVMNotFoundError(HostCodegenError, ImportError):
    """No TVM can be imported: neither ``import tvm`` nor ``import tilelang`` gives one
    (``installed``: whether a TVM is installed, but fails to import)."""

    def __init__(self, message: str, *, installed: bool = True) -> None:
        super().__init__(message)
        self.installed = installed


class UnsupportedTileLangError(HostCodegenError):
    """No TileLang is installed, or it lacks an integration point (``tilelang._points.POINTS``)."""


class UnsupportedTVMError(HostCodegenError):
    """The TVM in use lacks an integration point, or another package replaced its ``tir_to_runtime``."""


def text_of(exc: BaseException) -> str:
    """``str(exc)``, or a placeholder for a plugin's exception that cannot be printed."""
    try:
        return str(exc)
    except Exception:
        return f"<{type(exc).__name__} whose str() raised>"


_JOINED = "_tilelang_hostcg_joined_notes"  # on Python 3.10: the notes add_note joined to the message


def notes_apart(exc: BaseException) -> list[str]:
    """``exc``'s notes that its message does not hold: all of them, but on Python 3.10 those that
    :func:`add_note` joined to it (told by the note objects it recorded, not by the message's text)."""
    joined = getattr(exc, _JOINED, ())
    return [str(n) for n in getattr(exc, "__notes__", ()) if not any(n is j for j in joined)]


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
        setattr(exc, _JOINED, [*getattr(exc, _JOINED, ()), note])
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
    """A kind named on the command line is unknown, or of the wrong sort for its option."""

    def __init__(self, message: str, *, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


class DeviceAsHostError(InputError, HostCodegenError):
    """A device target (``cuda``, ...) was given where a host target is needed (a target's host, ``--host``)."""

    def __init__(self, message: str, *, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


CLI_PROG = "tilelang-hostcg"
"""The command line's name, as its messages start."""


class CliError(HostCodegenError):
    """An error the command line reports as one line on stderr; ``exit_code`` is its status."""

    exit_code = 1

    def __init__(self, message: str, *, exit_code: int | None = None, prog: str = CLI_PROG) -> None:
        super().__init__(message)
        self.prog = prog
        if exit_code is not None:
            self.exit_code = exit_code


class UsageError(CliError):
    """Bad arguments or unusable input given by the user (exit status 2)."""

    exit_code = 2


# C0 controls (newline and tab too: a field stays one line), DEL, C1 and bidirectional controls.
_INTERPRETED = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}
# A byte that was not UTF-8, as ``repr`` writes its surrogate escape.
_SURROGATE_REPR = re.compile(r"(?<!\\)\\udc([89a-f][0-9a-f])")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


_CUT_NOTE = "... ({} characters)"


def cut(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, saying so and how long it was: the one way a long text is shortened."""
    return text if len(text) <= limit else f"{text[:limit]}{_CUT_NOTE.format(len(text))}"


def shown(text: str, limit: int | None = None) -> str:
    """``text`` safe to print: controls, DEL, C1, bidi controls and non-UTF-8 bytes escaped; ``limit``: quoted, cut."""
    if limit is not None:
        quoted = f"'{shown(text[:limit])}'"
        return quoted if len(text) <= limit else f"{quoted}{_CUT_NOTE.format(len(text))}"
    text = _INTERPRETED.sub(_escape, _SURROGATE_REPR.sub(r"\\x\1", text))
    try:
        data = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a surrogate that stands for no byte
        return text.encode("utf-8", "backslashreplace").decode("utf-8")
    return data.decode("utf-8", "backslashreplace")
