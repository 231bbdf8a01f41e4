"""How the integration enters each of TileLang's layouts (checked first, :mod:`._points`): its own
codegens and hooks become registry defaults, and the functions that choose them are replaced
(``registry``, 0.1.12-0.1.13: two names in ``tilelang.engine.lower``; ``backend``, 0.1.14 on: two
``BackendModule`` methods). :func:`undo` puts back the original objects and removes the defaults."""

from __future__ import annotations

import contextvars
from dataclasses import dataclass, field
from importlib import import_module
from typing import TYPE_CHECKING, Any

from ..clients import ClientState, Route, hand_on, remove_defaults, watch_builds
from ..core import HostCodegen, HostCodegenHook, Origin
from ..environment import closure_global_func
from ._points import Mode

if TYPE_CHECKING:
    from collections.abc import Callable


LOWERING = "tilelang.engine.lower"  # by module path: as an attribute, ``tilelang.engine.lower`` is a function
DEFAULT_PREFIX = "tilelang-"
"""Names of TileLang's own codegens and hooks in the registry: ``tilelang-<kind>``."""

_BACKEND: contextvars.ContextVar[Any] = contextvars.ContextVar("tilelang_hostcg_backend", default=None)


@dataclass(eq=False)
class State(ClientState):
    """What one :func:`enter` did: the client's state, TileLang's layout (``mode``), the defaults'
    ``origin`` (TileLang's distribution and version) and the checked wrappers of chosen codegens."""

    mode: Mode = "backend"
    origin: Origin = field(default_factory=lambda: Origin(None))
    checked: dict[int, tuple[HostCodegen, HostCodegen]] = field(default_factory=dict)


def enter(state: State, *, patch_tilelang: bool) -> None:
    """Register TileLang's own codegens and hooks as defaults and, with ``patch_tilelang``, replace
    TileLang's functions so that they use the registry. On failure the caller runs :func:`rollback`."""
    enter_layout = _enter_registry_mode if state.mode == "registry" else _enter_backend_mode
    enter_layout(state, patch_tilelang=patch_tilelang)


def rollback(state: State) -> None:
    """Put back every attribute :func:`enter` replaced and remove TileLang's defaults (a failed install)."""
    for route in reversed(state.routes):
        setattr(route.owner, route.name, route.original)
    state.routes.clear()
    if state.registry is not None:
        remove_defaults(state.registry, state.codegens, state.hooks)


def watch(state: State) -> None:
    """Watch the lowering's ``host_codegen``, the function each build of host code runs through, so
    that a build which completed without calling a route is noticed (:mod:`..clients._routes`)."""
    watch_builds(state, import_module(LOWERING), "host_codegen", client="tilelang", compiler="TileLang")


def _to_tilelang(state: State, route: Route, more: tuple[Any, ...], options: dict[str, Any]) -> None:
    """A call of ``route`` that the caller hands to TileLang's own function: the route is uninstalled
    (another package's wrapper still holds it), or the call passes arguments it was not written for
    (:func:`~..clients._routes.hand_on` tells it, once)."""
    if state.active:
        hand_on(state, route, more, options, client="tilelang", compiler="TileLang")


def patch(state: State, owner: Any, name: str, value: Any, *, carries_builds: bool = True) -> Route:
    """Replace ``owner.name`` with ``value`` (``__wrapped__``: the original), recorded as a route."""
    original = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
    value.__wrapped__ = original
    route = Route(owner, name, original, value, carries_builds)
    state.routes.append(route)
    setattr(owner, name, value)
    return route


def _add_default(state: State, kind: str, stock_build: Callable[..., Any], func_name: str | None) -> None:
    """Register TileLang's own codegen for ``kind`` as a default (of TileLang's origin), once;
    ``func_name``: the TVM global function it calls, so that a missing one makes it not match."""
    if kind in state.codegens:
        return
    codegen = HostCodegen(DEFAULT_PREFIX + kind, stock_build, global_funcs=(func_name,) if func_name else ())
    registry = state.registry
    assert registry is not None
    registry.register_host_codegen(kind, codegen, origin=state.origin, default=True)
    state.codegens[kind] = codegen


def _add_hook(state: State, kind: str, apply: Callable[..., Any]) -> None:
    """Register a hook that runs TileLang's own hooks of ``kind``, once."""
    if kind in state.hooks:
        return
    hook = HostCodegenHook(DEFAULT_PREFIX + kind, apply)
    registry = state.registry
    assert registry is not None
    registry.register_host_codegen_hook(kind, hook, origin=state.origin, default=True)
    state.hooks[kind] = hook


def _chosen(state: State, target_host: Any) -> HostCodegen | None:
    """The registry's codegen for ``target_host`` as TileLang calls it, building through
    ``registry.build_host`` (which checks the result, naming the codegen), one object per
    codegen; ``None`` where it is TileLang's own."""
    registry = state.registry
    assert registry is not None
    chosen = registry.resolve_host_codegen(target_host)
    if any(chosen is c for c in state.codegens.values()):
        return None
    held = state.checked.get(id(chosen))
    if held is not None and held[0] is chosen:
        return held[1]
    wrapper = HostCodegen(chosen.name, registry.build_host, chosen.supports_target, chosen.priority)
    state.checked[id(chosen)] = (chosen, wrapper)
    return wrapper


def _enter_registry_mode(state: State, *, patch_tilelang: bool) -> None:
    hc = import_module("tilelang.backend.host_codegen")
    lower = import_module(LOWERING)

    stock_resolve = lower.resolve_host_codegen
    stock_apply = lower.apply_host_codegen_hooks
    registry = state.registry
    assert registry is not None
    mine: list[Route] = []  # the two routes, once patched

    def sync_codegens(kind: str) -> None:
        if kind in state.codegens or not (kind in hc._LAZY_HOST_CODEGENS or kind in hc._HOST_CODEGENS):
            return
        if kind not in hc._HOST_CODEGENS:  # imported as TileLang would; its _LOADED_HOST_CODEGENS stays its own
            import_module(hc._LAZY_HOST_CODEGENS[kind])
        names = {closure_global_func(c.build) for c in hc._HOST_CODEGENS.get(kind, ())}
        func_name = names.pop() if len(names) == 1 else None

        def build(mod: Any, target_host: Any) -> Any:
            return stock_resolve(target_host).lower(mod, target_host)

        _add_default(state, kind, build, func_name)

    def sync_hooks(kind: str) -> None:
        if kind in hc._LAZY_HOST_CODEGEN_HOOKS or kind in hc._HOST_CODEGEN_HOOKS:
            _add_hook(state, kind, stock_apply)

    def resolve_host_codegen(target_host: Any, *more: Any, **options: Any) -> Any:
        if not state.active or more or options:
            _to_tilelang(state, mine[0], more, options)
            return stock_resolve(target_host, *more, **options)
        state.called(mine[0])
        sync_codegens(target_host.kind.name)
        ours = _chosen(state, target_host)
        return stock_resolve(target_host) if ours is None else ours

    def apply_host_codegen_hooks(mod: Any, target_host: Any, target: Any, *more: Any, **options: Any) -> Any:
        if not state.active or more or options:
            _to_tilelang(state, mine[1], more, options)
            return stock_apply(mod, target_host, target, *more, **options)
        state.called(mine[1])
        if target is None:
            return mod
        sync_hooks(target.kind.name)
        return registry.apply_host_codegen_hooks(mod, target_host, target)

    for kind in sorted(set(hc._LAZY_HOST_CODEGENS) | set(hc._HOST_CODEGENS)):
        sync_codegens(kind)
    for kind in sorted(set(hc._LAZY_HOST_CODEGEN_HOOKS) | set(hc._HOST_CODEGEN_HOOKS)):
        sync_hooks(kind)
    if patch_tilelang:
        mine.append(patch(state, lower, "resolve_host_codegen", resolve_host_codegen))
        mine.append(patch(state, lower, "apply_host_codegen_hooks", apply_host_codegen_hooks))


def _enter_backend_mode(state: State, *, patch_tilelang: bool) -> None:
    backend_module = import_module("tilelang.backend.module")
    cls = backend_module.BackendModule
    stock_get = cls.__dict__["get_host_codegen"]
    stock_pre = cls.__dict__["preprocess_host_codegen"]
    registry = state.registry
    assert registry is not None
    mine: list[Route] = []  # the two routes, once patched

    def run_stock_hooks(mod: Any, target_host: Any, target: Any) -> Any:
        backend = _BACKEND.get()
        if backend is None:  # called outside TileLang (e.g. tilelang_hostcg.build)
            backend = next((b for b in backend_module.list_backends().values() if b.matches(target)), None)
        return mod if backend is None else stock_pre(backend, mod, target_host, target)

    def sync(backend: Any) -> None:
        for kind, codegen in backend.host_codegens.items():
            _add_default(state, kind, codegen.build, closure_global_func(codegen.build))
        for kind in backend.host_codegen_hooks:
            _add_hook(state, kind, run_stock_hooks)

    def get_host_codegen(self: Any, target_host: Any, *more: Any, **options: Any) -> Any:
        if not state.active or more or options:
            _to_tilelang(state, mine[0], more, options)
            return stock_get(self, target_host, *more, **options)
        state.called(mine[0])
        sync(self)
        ours = _chosen(state, target_host)
        return stock_get(self, target_host) if ours is None else ours

    def preprocess_host_codegen(self: Any, mod: Any, target_host: Any, target: Any, *more: Any,
                                **options: Any) -> Any:
        if not state.active or more or options:
            _to_tilelang(state, mine[1], more, options)
            return stock_pre(self, mod, target_host, target, *more, **options)
        state.called(mine[1])
        sync(self)
        require = getattr(self, "_require_target", None)
        if require is not None:
            require(target)
        token = _BACKEND.set(self)
        try:
            return registry.apply_host_codegen_hooks(mod, target_host, target)
        finally:
            _BACKEND.reset(token)

    for backend in backend_module.list_backends().values():
        sync(backend)
    if patch_tilelang:
        mine.append(patch(state, cls, "get_host_codegen", get_host_codegen))
        mine.append(patch(state, cls, "preprocess_host_codegen", preprocess_host_codegen))
