"""TVM's own host codegens as registry defaults, and the routed build (imported at the first build)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._build import build_split
from .._names import APACHE_TVM
from .._targets import GlobalFuncBuild, parse_target
from .._tvm import import_tvm, tvm_info
from .._types import HostCodegen, Origin
from ._points import DEFAULT_PREFIX, KINDS

if TYPE_CHECKING:
    from .._registry import Registry
    from ._route import State

def register_defaults(registry: Registry, held: dict[str, HostCodegen], kinds: tuple[str, ...] = KINDS) -> None:
    """Register TVM's ``target.build.<kind>`` of each of ``kinds`` not in ``held`` and known to the TVM
    in use (0.26 has no ``cuda_host``) as a default (origin ``apache-tvm``), adding it to ``held``."""
    info = tvm_info()
    origin = Origin(APACHE_TVM, info.provider_version or info.version)
    known = set(import_tvm().target.Target.list_kinds())
    for kind in (k for k in kinds if k not in held and k in known):
        codegen = HostCodegen(DEFAULT_PREFIX + kind, GlobalFuncBuild("target.build." + kind))
        registry.register_host_codegen(kind, codegen, origin=origin, default=True)
        held[kind] = codegen


def routed(state: State, host_mod: Any, device_mod_dict: Any, target_host: Any) -> Any:
    """``tir_to_runtime`` through the registry: device modules by TVM's own ``codegen_build``,
    in TVM's order; the registry's hooks; the host module by the host target's codegen."""
    host = parse_target(target_host)
    kind = host.kind.name
    registry = state.registry
    if registry is None or kind not in state.codegens:
        with state.lock:
            if state.registry is None:
                from .._api import default_registry

                state.registry = default_registry() if state.requested is None else state.requested
                register_defaults(state.registry, state.codegens)
            register_defaults(state.registry, state.codegens, (kind,))
            registry = state.registry
    return build_split(registry, host_mod, device_mod_dict.items(), host, state.module.codegen_build)  # type: ignore[union-attr]
