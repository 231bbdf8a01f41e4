"""The hooks of the ``cuda`` device kind; advertised as
``cuda = tilelang_hostcg_stamp.hooks:STAMP_HOOKS`` (nothing registers on import:
``tilelang_hostcg`` registers the objects the entry point names)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tilelang_hostcg import HostCodegenHook

from . import HOOK_SYMBOL, add_stamp

if TYPE_CHECKING:
    from tvm.target import Target

__all__ = ["STAMP_HOOKS", "stamp_host_module"]


def stamp_host_module(mod: Any, target_host: Target, target: Target) -> Any:
    """Add :data:`HOOK_SYMBOL` to the host module of a CUDA build.

    A hook gets ``(host module, host target, device target)`` and returns the host
    module; it runs before the host codegen.
    """
    return add_stamp(mod, target_host, HOOK_SYMBOL)


STAMP_HOOKS = (HostCodegenHook("stamp_cuda", stamp_host_module),)
"""The hooks of the ``cuda`` kind."""
