"""The exception tree and the warning category of the package."""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "AmbiguousHostCodegenError",
    "DuplicateRegistrationError",
    "HostCodegenError",
    "NoHostCodegenError",
    "PluginLoadError",
    "PluginWarning",
    "TargetParseError",
]


class HostCodegenError(ValueError):
    """Base of every error raised by ``tilelang_hostcg``."""


class NoHostCodegenError(HostCodegenError):
    """No registered host codegen matches the host target.

    ``kind`` is the host target kind, ``available`` the names registered for it.
    """

    def __init__(self, message: str, *, kind: str, available: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.kind = kind
        self.available = tuple(available)


class AmbiguousHostCodegenError(HostCodegenError):
    """Several distributions provide matching codegens of equal top priority.

    ``candidates`` holds ``(codegen name, distribution)`` pairs.
    """

    def __init__(self, message: str, *, kind: str, candidates: Sequence[tuple[str, str]]) -> None:
        super().__init__(message)
        self.kind = kind
        self.candidates = tuple(candidates)


class PluginLoadError(HostCodegenError):
    """A plugin could not be loaded; ``__cause__`` holds the original exception.

    ``origin`` is the :class:`~tilelang_hostcg.Origin` of the failing entry point.
    """

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


class TargetParseError(HostCodegenError):
    """A target given as text is neither a known kind name nor TVM's JSON form."""


class PluginWarning(UserWarning):
    """A plugin was skipped (broken, incompatible, duplicated) while something else served."""
