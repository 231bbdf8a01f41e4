"""Hooks that prepare the host module of ROCm device targets (``hip``/``rocm``).

Advertised as ``hip = tilelang_hostcg_rocm.hooks:ROCM_HOOKS``. In the order they run:

1. ``rocm_host_pairing`` (priority 100): ROCm kernels are HSA code objects that the
   TVM runtime's ROCm module loads and launches, so the host must be one that calls
   the TVM runtime: ``llvm`` or ``c`` (TileLang's ROCm backend builds host code with
   exactly these two). Any other host (``cuda_host``, whose wrappers call the CUDA
   runtime, or a host kind of another backend) is rejected before host codegen.
2. ``rocm_device_record``: checks that the target's ``mcpu`` is a ``gfx``
   architecture and records the device (architecture, features, triple, wavefront
   size) on the host module, read back with :func:`tilelang_hostcg_rocm.rocm_device_info`.

Skip them with ``TILELANG_HOSTCG_DISABLE=tilelang-hostcg-rocm``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tilelang_hostcg import HostCodegenHook

from ._errors import IncompatibleHostError
from ._target import DEVICE_ATTR, RocmDeviceInfo

if TYPE_CHECKING:
    from tvm.ir import IRModule
    from tvm.target import Target

__all__ = [
    "ROCM_HOOKS",
    "ROCM_LAUNCH_HOST_KINDS",
    "check_rocm_host_pairing",
    "record_rocm_device",
]

ROCM_LAUNCH_HOST_KINDS: tuple[str, ...] = ("llvm", "c")
"""Host kinds that can launch kernels of a ``rocm`` (``hip``) device target."""


def check_rocm_host_pairing(mod: IRModule, target_host: Target, target: Target) -> IRModule:
    """Raise :class:`~tilelang_hostcg_rocm.IncompatibleHostError` unless the host kind is
    one of :data:`ROCM_LAUNCH_HOST_KINDS`; return ``mod`` unchanged."""
    host = target_host if target_host is not None else target.host
    if host is None or host.kind.name in ROCM_LAUNCH_HOST_KINDS:
        return mod
    host_kind, device_kind = host.kind.name, target.kind.name
    hint = (" (cuda_host wrappers launch CUDA kernels through the CUDA runtime)"
            if host_kind == "cuda_host" else "")
    raise IncompatibleHostError(
        f"Target host {host_kind!r} cannot launch the kernels of device target {device_kind!r}"
        f"{hint}: ROCm code objects are loaded and launched by the TVM runtime, which an "
        f"'llvm' or 'c' host calls. Use Target({{'kind': 'rocm', 'mcpu': 'gfx942'}}, "
        "host='llvm') (or host='c'); to skip this check, set "
        "TILELANG_HOSTCG_DISABLE=tilelang-hostcg-rocm",
        host_kind=host_kind, device_kind=device_kind, supported=ROCM_LAUNCH_HOST_KINDS)


def record_rocm_device(mod: IRModule, target_host: Target, target: Target) -> IRModule:
    """Return ``mod`` with :data:`~tilelang_hostcg_rocm.DEVICE_ATTR` describing ``target``.

    Raises :class:`~tilelang_hostcg_rocm.RocmArchError` when the target's ``mcpu`` is not
    a ``gfx`` architecture.
    """
    return mod.with_attr(DEVICE_ATTR, RocmDeviceInfo.from_target(target).to_attr())


ROCM_HOOKS: tuple[HostCodegenHook, ...] = (
    HostCodegenHook("rocm_host_pairing", check_rocm_host_pairing, priority=100),
    HostCodegenHook("rocm_device_record", record_rocm_device),
)
"""The hooks of the ``hip``/``rocm`` device kind, in the order they run."""
