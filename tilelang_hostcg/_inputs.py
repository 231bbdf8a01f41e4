"""Errors for input given by the user (exit status 2 on the command line)."""

from __future__ import annotations

from ._errors import HostCodegenError

__all__ = ["DeviceAsHostError", "InputError", "LockFileError", "UnknownKindError"]


class InputError(ValueError):
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
