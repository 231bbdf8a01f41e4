"""Errors of the ROCm plugin; each is also the standard exception type it is."""

from __future__ import annotations

from collections.abc import Sequence

from tilelang_hostcg import HostCodegenError

__all__ = ["IncompatibleHostError", "RocmArchError"]


class IncompatibleHostError(HostCodegenError):
    """The host target cannot launch ROCm kernels (raised by the pairing hook).

    ``host_kind`` and ``device_kind`` name the pair, ``supported`` the host kinds
    that would work.
    """

    def __init__(self, message: str, *, host_kind: str, device_kind: str,
                 supported: Sequence[str]) -> None:
        super().__init__(message)
        self.host_kind = host_kind
        self.device_kind = device_kind
        self.supported = tuple(supported)


class RocmArchError(HostCodegenError):
    """The target's ``mcpu`` is not an AMD GPU architecture (``gfx...``); ``mcpu`` is it."""

    def __init__(self, message: str, *, mcpu: object) -> None:
        super().__init__(message)
        self.mcpu = mcpu
