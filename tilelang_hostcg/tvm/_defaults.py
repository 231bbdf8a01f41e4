"""The routed build (imported at the first build): TVM's defaults in the registry, then the build through it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..environment import parse_target
from ..registry import build_split
from ._registering import join_defaults

if TYPE_CHECKING:
    from ..registry import Registry
    from ._route import State


def routed(state: State, host_mod: Any, device_mod_dict: Any, target_host: Any) -> Any:
    """``tir_to_runtime`` through the registry: device modules by TVM's own ``codegen_build``,
    in TVM's order; the registry's hooks; the host module by the host target's codegen. ``None``
    where ``state`` was uninstalled before its defaults were in: the caller builds with TVM's original."""
    host = parse_target(target_host)
    kind = host.kind.name
    registry = state.registry
    if registry is None or kind not in state.codegens:
        registry = _defaults_in(state, kind)
        if registry is None:
            return None
    return build_split(registry, host_mod, device_mod_dict.items(), host, state.module.codegen_build)  # type: ignore[union-attr]


def _defaults_in(state: State, kind: str) -> Registry | None:
    """The registry of ``state`` with TVM's defaults (``kind``'s too) in it, registered under the
    client's lock, which ``uninstall()`` holds to take them out; ``None`` once ``state`` is uninstalled
    (defaults registered then would outlive it and collide with the next ``install()``'s)."""
    requested = state.requested
    if state.registry is None and requested is None:
        from .. import default_registry

        requested = default_registry()  # outside the lock: it may load plugins
    with state.lock:
        registry = state.registry if state.registry is not None else requested
        assert registry is not None
        return registry if join_defaults(state, registry, kind) else None
