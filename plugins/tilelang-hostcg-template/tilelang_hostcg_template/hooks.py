"""The hooks of the ``ext_dev`` device kind; advertised as
``ext_dev = tilelang_hostcg_template.hooks:ACME_HOOKS`` (nothing registers on import:
``tilelang_hostcg`` registers the objects the entry point names)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tilelang_hostcg import HostCodegenError, HostCodegenHook

if TYPE_CHECKING:
    from tvm.ir import IRModule
    from tvm.target import Target

__all__ = ["ACME_HOOKS", "DEVICE_ATTR", "annotate_acme_device"]

DEVICE_ATTR = "tilelang_hostcg_template.device"
"""Host ``IRModule`` attribute naming the device kind the host code launches kernels on."""


def annotate_acme_device(mod: IRModule, target_host: Target, target: Target) -> IRModule:
    """Record the device kind on the host module; reject a host that is not ``llvm``.

    A hook gets ``(host module, host target, device target)`` and returns the host
    module (``IRModule`` is immutable: ``with_attr`` returns a new one).
    """
    if target_host is not None and target_host.kind.name != "llvm":
        raise HostCodegenError(
            f"Acme devices need an 'llvm' host, not {target_host.kind.name!r}; build with "
            "Target('ext_dev', host={'kind': 'llvm', 'mtriple': 'x86_64-acme-linux-gnu'})")
    return mod.with_attr(DEVICE_ATTR, target.kind.name)


ACME_HOOKS = (HostCodegenHook("acme_device", annotate_acme_device),)
"""The hooks of the ``ext_dev`` kind: a tuple, so more can follow."""
