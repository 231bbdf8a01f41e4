"""How the integration enters each of TileLang's layouts (checked first, :mod:`._points`): its own
codegens and hooks become registry defaults, and the functions that choose them are replaced
(``registry``, 0.1.12-0.1.13: two names in ``tilelang.engine.lower``; ``backend``, 0.1.14 on: two
``BackendModule`` methods). :func:`undo` puts back the original objects and removes the defaults;
an attribute another package has put in place of ours since is theirs, and left (ours, where their
function still calls it, then hands every call to TileLang's original)."""

from __future__ import annotations

import contextvars
import inspect
from dataclasses import dataclass, field
from importlib import import_module
from typing import TYPE_CHECKING, Any

from .._errors import warn_plugin
from .._names import CODEGEN_GROUP, HOOK_GROUP
from .._types import HostCodegen, HostCodegenHook, Origin
from ._points import Mode

if TYPE_CHECKING:
    from collections.abc import Callable

    from .._registry import Registry

DEFAULT_PREFIX = "tilelang-"
"""Names of TileLang's own codegens and hooks in the registry: ``tilelang-<kind>``."""

_BACKEND: contextvars.ContextVar[Any] = contextvars.ContextVar("tilelang_hostcg_backend", default=None)


@dataclass(eq=False, slots=True)
class State:
    """What one :func:`enter` did (replaced attributes, defaults registered, checked wrappers);
    :func:`undo` empties it and ends ``active``."""

    registry: Registry
    mode: Mode
    origin: Origin  # TileLang's distribution and version: the defaults' origin
    patches: list[tuple[Any, str, Any, Any]] = field(default_factory=list)  # owner, name, original, ours
    codegens: dict[str, HostCodegen] = field(default_factory=dict)
    hooks: dict[str, HostCodegenHook] = field(default_factory=dict)
    checked: dict[int, tuple[HostCodegen, HostCodegen]] = field(default_factory=dict)
    active: bool = True  # False: a replacement of ours another package's wrapper still holds calls TileLang's own


def enter(state: State, *, patch_tilelang: bool) -> None:
    """Register TileLang's own codegens and hooks as defaults and, with ``patch_tilelang``, replace
    TileLang's functions so that they use the registry. On failure the caller runs :func:`undo`."""
    enter_layout = _enter_registry_mode if state.mode == "registry" else _enter_backend_mode
    enter_layout(state, patch_tilelang=patch_tilelang)


def undo(state: State) -> None:
    """Put TileLang's original attributes back where ours are still in place, and remove TileLang's
    defaults. An attribute another package has set since (wrapping ours, or replacing it) is left as
    it is, with a warning naming it and that package."""
    state.active = False
    for owner, name, original, ours in reversed(state.patches):
        now = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None)
        if now is ours:
            setattr(owner, name, original)
        else:
            warn_plugin(_left_text(owner, name, now, ours))
    state.patches.clear()
    registry = state.registry
    for group, held, unregister in (
            (CODEGEN_GROUP, state.codegens, registry.unregister_host_codegen),
            (HOOK_GROUP, state.hooks, registry.unregister_host_codegen_hook)):
        for kind, obj in held.items():
            if any(r.obj is obj for r in registry.registrations(group, kind)):
                unregister(kind, obj.name)
        held.clear()


def _left_text(owner: Any, name: str, now: Any, ours: Any) -> str:
    """Why :func:`undo` leaves ``owner.name`` (``now``, another package's) as it is, and what to do."""
    from .._routing import owner_of, reaches
    where = f"{owner.__module__}.{owner.__qualname__}" if isinstance(owner, type) else owner.__name__
    held = {True: "around tilelang_hostcg's replacement, which from now on hands every call to TileLang's original",
            False: "in place of tilelang_hostcg's replacement (which it does not call)"}[reaches(now, ours)]
    return (f"tilelang_hostcg.tilelang.uninstall() left {where}.{name} as it is: another package put a function of "
            f"{owner_of(now)} there, {held}. That change is the other package's to undo; to have TileLang's own "
            f"{name} back, undo it as that package documents (or uninstall that package)")


def patch(state: State, owner: Any, name: str, value: Any) -> None:
    """Replace ``owner.name`` with ``value`` (``__wrapped__``: the original) until :func:`undo`."""
    original = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
    value.__wrapped__ = original
    state.patches.append((owner, name, original, value))
    setattr(owner, name, value)


def _closure_global_func(build: Any) -> str | None:
    """The TVM global function a ``global_func_host_codegen`` closure of TileLang calls."""
    try:
        value = inspect.getclosurevars(build).nonlocals.get("global_func_name")
    except TypeError:  # not a Python function
        return None
    return value if isinstance(value, str) else None


def _add_default(state: State, kind: str, stock_build: Callable[..., Any], func_name: str | None) -> None:
    """Register TileLang's own codegen for ``kind`` as a default (of TileLang's origin), once;
    ``func_name``: the TVM global function it calls, so that a missing one makes it not match."""
    if kind in state.codegens:
        return
    codegen = HostCodegen(DEFAULT_PREFIX + kind, stock_build, global_funcs=(func_name,) if func_name else ())
    state.registry.register_host_codegen(kind, codegen, origin=state.origin, default=True)
    state.codegens[kind] = codegen


def _add_hook(state: State, kind: str, apply: Callable[..., Any]) -> None:
    """Register a hook that runs TileLang's own hooks of ``kind``, once."""
    if kind in state.hooks:
        return
    hook = HostCodegenHook(DEFAULT_PREFIX + kind, apply)
    state.registry.register_host_codegen_hook(kind, hook, origin=state.origin)
    state.hooks[kind] = hook


def _chosen(state: State, target_host: Any) -> HostCodegen | None:
    """The registry's codegen for ``target_host`` as TileLang calls it, building through
    ``registry.build_host`` (which checks the result, naming the codegen), one object per
    codegen; ``None`` where it is TileLang's own."""
    chosen = state.registry.resolve_host_codegen(target_host)
    if any(chosen is c for c in state.codegens.values()):
        return None
    held = state.checked.get(id(chosen))
    if held is not None and held[0] is chosen:
        return held[1]
    wrapper = HostCodegen(chosen.name, state.registry.build_host, chosen.supports_target, chosen.priority)
    state.checked[id(chosen)] = (chosen, wrapper)
    return wrapper


def _enter_registry_mode(state: State, *, patch_tilelang: bool) -> None:
    # By module path: ``tilelang.engine.lower`` as an attribute is the function ``lower``.
    hc = import_module("tilelang.backend.host_codegen")
    lower = import_module("tilelang.engine.lower")

    stock_resolve = lower.resolve_host_codegen
    stock_apply = lower.apply_host_codegen_hooks
    registry = state.registry

    def sync_codegens(kind: str) -> None:
        if kind in state.codegens or not (kind in hc._LAZY_HOST_CODEGENS or kind in hc._HOST_CODEGENS):
            return
        if kind not in hc._HOST_CODEGENS:  # imported as TileLang would; its _LOADED_HOST_CODEGENS stays its own
            import_module(hc._LAZY_HOST_CODEGENS[kind])
        names = {_closure_global_func(c.build) for c in hc._HOST_CODEGENS.get(kind, ())}
        func_name = names.pop() if len(names) == 1 else None

        def build(mod: Any, target_host: Any) -> Any:
            return stock_resolve(target_host).lower(mod, target_host)

        _add_default(state, kind, build, func_name)

    def sync_hooks(kind: str) -> None:
        if kind in hc._LAZY_HOST_CODEGEN_HOOKS or kind in hc._HOST_CODEGEN_HOOKS:
            _add_hook(state, kind, stock_apply)

    def resolve_host_codegen(target_host: Any) -> Any:
        if not state.active:  # uninstalled, still called by another package's wrapper
            return stock_resolve(target_host)
        sync_codegens(target_host.kind.name)
        ours = _chosen(state, target_host)
        return stock_resolve(target_host) if ours is None else ours

    def apply_host_codegen_hooks(mod: Any, target_host: Any, target: Any) -> Any:
        if not state.active:
            return stock_apply(mod, target_host, target)
        if target is None:
            return mod
        sync_hooks(target.kind.name)
        return registry.apply_host_codegen_hooks(mod, target_host, target)

    for kind in sorted(set(hc._LAZY_HOST_CODEGENS) | set(hc._HOST_CODEGENS)):
        sync_codegens(kind)
    for kind in sorted(set(hc._LAZY_HOST_CODEGEN_HOOKS) | set(hc._HOST_CODEGEN_HOOKS)):
        sync_hooks(kind)
    if patch_tilelang:
        patch(state, lower, "resolve_host_codegen", resolve_host_codegen)
        patch(state, lower, "apply_host_codegen_hooks", apply_host_codegen_hooks)


def _enter_backend_mode(state: State, *, patch_tilelang: bool) -> None:
    backend_module = import_module("tilelang.backend.module")
    cls = backend_module.BackendModule
    stock_get = cls.__dict__["get_host_codegen"]
    stock_pre = cls.__dict__["preprocess_host_codegen"]
    registry = state.registry

    def run_stock_hooks(mod: Any, target_host: Any, target: Any) -> Any:
        backend = _BACKEND.get()
        if backend is None:  # called outside TileLang (e.g. tilelang_hostcg.build)
            backend = next((b for b in backend_module.list_backends().values() if b.matches(target)), None)
        return mod if backend is None else stock_pre(backend, mod, target_host, target)

    def sync(backend: Any) -> None:
        for kind, codegen in backend.host_codegens.items():
            _add_default(state, kind, codegen.build, _closure_global_func(codegen.build))
        for kind in backend.host_codegen_hooks:
            _add_hook(state, kind, run_stock_hooks)

    def get_host_codegen(self: Any, target_host: Any) -> Any:
        if not state.active:  # uninstalled, still called by another package's wrapper
            return stock_get(self, target_host)
        sync(self)
        ours = _chosen(state, target_host)
        return stock_get(self, target_host) if ours is None else ours

    def preprocess_host_codegen(self: Any, mod: Any, target_host: Any, target: Any) -> Any:
        if not state.active:
            return stock_pre(self, mod, target_host, target)
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
        patch(state, cls, "get_host_codegen", get_host_codegen)
        patch(state, cls, "preprocess_host_codegen", preprocess_host_codegen)
