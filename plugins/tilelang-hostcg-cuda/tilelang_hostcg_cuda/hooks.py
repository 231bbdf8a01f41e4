"""Hooks that prepare the host module of CUDA device targets.

Advertised as ``cuda = tilelang_hostcg_cuda.hooks:CUDA_HOOKS`` and
``nvptx = tilelang_hostcg_cuda.hooks:NVPTX_HOOKS``. In the order they run:

1. ``cuda_host_pairing`` (priority 100): rejects, before host codegen, a host target
   that cannot launch the device's kernels. CUDA C++ kernels (``cuda``) are launched by
   the TVM runtime from an ``llvm`` or ``c`` host, or directly by the wrappers of a
   ``cuda_host`` host. PTX kernels (``nvptx``) need the TVM runtime's CUDA module, so
   only ``llvm`` and ``c`` hosts serve them: a ``cuda_host`` translation unit has no
   CUDA C++ source to bundle for them.
2. ``cuda_host_requirements`` (``cuda`` only): for a ``cuda_host`` host, records on
   the host module what its translation unit needs to compile (the device ``arch``,
   the C++ standard, the libraries), read back with
   :func:`tilelang_hostcg_cuda.cuda_host_requirements`.

A third party that has a reason to pair differently can skip these hooks with
``TILELANG_HOSTCG_DISABLE=tilelang-hostcg-cuda:cuda``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tilelang_hostcg import HostCodegenHook

from ._errors import IncompatibleHostError
from ._requirements import REQUIREMENTS_ATTR, CudaHostRequirements

if TYPE_CHECKING:
    from tvm.ir import IRModule
    from tvm.target import Target

__all__ = [
    "CUDA_HOOKS",
    "CUDA_LAUNCH_HOST_KINDS",
    "NVPTX_HOOKS",
    "PTX_LAUNCH_HOST_KINDS",
    "check_cuda_host_pairing",
    "check_nvptx_host_pairing",
    "record_cuda_host_requirements",
]

CUDA_LAUNCH_HOST_KINDS: tuple[str, ...] = ("llvm", "c", "cuda_host")
"""Host kinds that can launch kernels of a ``cuda`` device target."""

PTX_LAUNCH_HOST_KINDS: tuple[str, ...] = ("llvm", "c")
"""Host kinds that can launch kernels of an ``nvptx`` device target."""

_DISABLE_HINT = "TILELANG_HOSTCG_DISABLE=tilelang-hostcg-cuda:{kind}"


def _host(target_host: Target | None, target: Target) -> Target | None:
    return target_host if target_host is not None else target.host


def _check_pairing(target_host: Target | None, target: Target, supported: tuple[str, ...],
                   why: str) -> None:
    host = _host(target_host, target)
    if host is None:  # TVM's default host (llvm or c) serves every CUDA device kind
        return
    host_kind, device_kind = host.kind.name, target.kind.name
    if host_kind in supported:
        return
    choices = ", ".join(repr(k) for k in supported)
    raise IncompatibleHostError(
        f"Target host {host_kind!r} cannot launch the kernels of device target {device_kind!r}: "
        f"{why}. Use a host of one of the kinds {choices}, e.g. "
        f"Target({{'kind': {device_kind!r}, ...}}, host={supported[0]!r}); to skip this check, set "
        f"{_DISABLE_HINT.format(kind=device_kind)}",
        host_kind=host_kind, device_kind=device_kind, supported=supported)


def check_cuda_host_pairing(mod: IRModule, target_host: Target, target: Target) -> IRModule:
    """Raise :class:`~tilelang_hostcg_cuda.IncompatibleHostError` unless the host kind is
    one of :data:`CUDA_LAUNCH_HOST_KINDS`; return ``mod`` unchanged."""
    _check_pairing(target_host, target, CUDA_LAUNCH_HOST_KINDS,
                   "CUDA kernels are launched through the TVM runtime (llvm, c hosts) or by "
                   "the CUDA runtime calls of a cuda_host host")
    return mod


def check_nvptx_host_pairing(mod: IRModule, target_host: Target, target: Target) -> IRModule:
    """Raise :class:`~tilelang_hostcg_cuda.IncompatibleHostError` unless the host kind is
    one of :data:`PTX_LAUNCH_HOST_KINDS`; return ``mod`` unchanged."""
    _check_pairing(target_host, target, PTX_LAUNCH_HOST_KINDS,
                   "nvptx kernels are PTX loaded by the TVM runtime's CUDA module, and a "
                   "cuda_host translation unit can only bundle CUDA C++ kernels (use the "
                   "'cuda' device kind for cuda_host)")
    return mod


def record_cuda_host_requirements(mod: IRModule, target_host: Target,
                                  target: Target) -> IRModule:
    """For a ``cuda_host`` host, return ``mod`` with :data:`~tilelang_hostcg_cuda.REQUIREMENTS_ATTR`
    set from the device target; other hosts get ``mod`` unchanged.

    Raises :class:`~tilelang_hostcg_cuda.CudaArchError` when the target's ``arch`` is
    not an ``sm_XX`` name.
    """
    host = _host(target_host, target)
    if host is None or host.kind.name != "cuda_host":
        return mod
    requirements = CudaHostRequirements(arch=str(target.attrs.get("arch", "")),
                                        device_kind=target.kind.name)
    return mod.with_attr(REQUIREMENTS_ATTR, requirements.to_attr())


CUDA_HOOKS: tuple[HostCodegenHook, ...] = (
    HostCodegenHook("cuda_host_pairing", check_cuda_host_pairing, priority=100),
    HostCodegenHook("cuda_host_requirements", record_cuda_host_requirements),
)
"""The hooks of the ``cuda`` device kind, in the order they run."""

NVPTX_HOOKS: tuple[HostCodegenHook, ...] = (
    HostCodegenHook("nvptx_host_pairing", check_nvptx_host_pairing, priority=100),
)
"""The hooks of the ``nvptx`` device kind."""
