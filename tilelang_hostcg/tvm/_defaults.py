"""TVM's own host codegens as registry defaults, and the routed build (imported at the first build)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._build import build_split
from .._names import APACHE_TVM, CODEGEN_GROUP
from .._targets import GlobalFuncBuild, parse_target
from .._types import HostCodegen, Origin
from ._points import DEFAULT_PREFIX, KINDS

if TYPE_CHECKING:
    from .._registry import Registry
    from ._route import State

__all__ = ["register_defaults", "remove_defaults", "routed"]


def _origin() -> Origin:
    from .._tvm import tvm_info

    info = tvm_info()
    return Origin(APACHE_TVM, info.provider_version or info.version)


def register_defaults(registry: Registry, held: dict[str, HostCodegen], kinds: tuple[str, ...] = KINDS) -> None:
    """Register TVM's ``target.build.<kind>`` for each of ``kinds`` in ``registry`` as a default
    with origin ``apache-tvm``, once per kind (``held``: those already registered)."""
    origin = _origin()
    for kind in kinds:
        if kind in held:
            continue
        codegen = HostCodegen(DEFAULT_PREFIX + kind, GlobalFuncBuild("target.build." + kind))
        registry.register_host_codegen(kind, codegen, origin=origin, default=True)
        held[kind] = codegen


def remove_defaults(registry: Registry, held: dict[str, HostCodegen]) -> None:
    """Remove what :func:`register_defaults` registered (and only that)."""
    for kind, codegen in held.items():
        if any(r.obj is codegen for r in registry.registrations(CODEGEN_GROUP, kind)):
            registry.unregister_host_codegen(kind, codegen.name)
    held.clear()


def _ready(state: State, kind: str) -> Registry:
    """The registry of ``state`` with TVM's defaults registered (also for ``kind``)."""
    registry = state.used
    if registry is not None and kind in state.codegens:
        return registry
    with state.lock:
        if state.used is None:
            if state.registry is None:
                from .._api import default_registry

                state.used = default_registry()
            else:
                state.used = state.registry
            register_defaults(state.used, state.codegens)
        if kind not in state.codegens:
            register_defaults(state.used, state.codegens, (kind,))
        return state.used


def routed(state: State, host_mod: Any, device_mod_dict: Any, target_host: Any) -> Any:
    """``tir_to_runtime`` through the registry: device modules by TVM's own ``codegen_build``,
    in TVM's order; the registry's hooks; the host module by the host target's codegen."""
    host = parse_target(target_host)
    registry = _ready(state, host.kind.name)
    return build_split(registry, host_mod, device_mod_dict.items(), host, state.module.codegen_build)
