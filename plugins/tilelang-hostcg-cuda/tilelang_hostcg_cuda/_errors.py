"""Errors of the CUDA plugin; each is also the standard exception type it is."""

from __future__ import annotations

from collections.abc import Sequence

from tilelang_hostcg import HostCodegenError

__all__ = ["CudaArchError", "CudaCompileError", "IncompatibleHostError", "NvccNotFoundError"]


class IncompatibleHostError(HostCodegenError):
    """The host target cannot serve the device target (raised by a pairing hook).

    ``host_kind`` and ``device_kind`` name the pair, ``supported`` the host kinds
    that would work for ``device_kind``.
    """

    def __init__(self, message: str, *, host_kind: str, device_kind: str,
                 supported: Sequence[str]) -> None:
        super().__init__(message)
        self.host_kind = host_kind
        self.device_kind = device_kind
        self.supported = tuple(supported)


class CudaArchError(HostCodegenError):
    """A CUDA architecture is malformed or could not be determined; ``arch`` is the value."""

    def __init__(self, message: str, *, arch: object = None) -> None:
        super().__init__(message)
        self.arch = arch


class NvccNotFoundError(FileNotFoundError):
    """No ``nvcc`` was found; ``tried`` lists the places looked at, in order."""

    def __init__(self, message: str, *, tried: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.tried = tuple(tried)

    def __str__(self) -> str:
        return str(self.args[0])


class CudaCompileError(RuntimeError):
    """``nvcc`` failed; ``command`` is what ran, ``output`` what it printed."""

    def __init__(self, message: str, *, command: Sequence[str], returncode: int,
                 output: str) -> None:
        super().__init__(message)
        self.command = tuple(command)
        self.returncode = returncode
        self.output = output
