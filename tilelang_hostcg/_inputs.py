"""Errors for input given by the user to the command line (exit status 2)."""

from __future__ import annotations

__all__ = ["DeviceHostError", "InputError", "LockFileError", "UnknownKindError"]


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


class DeviceHostError(InputError):
    """A host target (``--host``, or a target's ``host``) is a device target."""

    def __init__(self, message: str, *, kind: str) -> None:
        super().__init__(message)
        self.kind = kind
