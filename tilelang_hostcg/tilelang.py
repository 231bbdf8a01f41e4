"""TileLang integration: route TileLang's host-codegen choice and hooks through the registry.

Turn it on in the program that drives TileLang (nothing is patched at import)::

    import tilelang_hostcg.tilelang

    tilelang_hostcg.tilelang.install()

After :func:`install`, TileLang resolves its host codegen and runs its host-codegen
hooks through :func:`tilelang_hostcg.default_registry` (entry points of installed
plugins included); :func:`uninstall` puts TileLang back exactly as it was.

- TileLang 0.1.12-0.1.13: ``tilelang.engine.lower`` imports ``resolve_host_codegen``
  and ``apply_host_codegen_hooks`` from ``tilelang.backend.host_codegen`` by name;
  those two names in ``tilelang.engine.lower`` are replaced.
- TileLang 0.1.14-0.1.15: ``BackendModule.get_host_codegen`` and
  ``BackendModule.preprocess_host_codegen`` are replaced.
- Both: ``KernelCache._generate_key`` also hashes the plugin set (see
  :func:`plugin_fingerprint`), so a kernel cached before a plugin was installed,
  upgraded or removed is never served for the new set, and the same set in a fresh
  process still hits the cache.
- Any other version: :class:`UnsupportedTileLangError`, before anything is touched.

TileLang's own host codegens are registered as *defaults* (named ``tilelang-<kind>``,
distribution ``tilelang``): they serve only when no other codegen of the kind matches,
and then TileLang's own object builds the host code, so with no plugin the output is
byte-identical to stock TileLang. A plugin codegen that matches (whatever its
priority), or a codegen registered in code, wins over them. TileLang's own hooks are
registered as ``tilelang-<kind>`` hooks and always run (at priority 0, before the
plugins' hooks of equal priority), because a device backend needs them.
"""

from __future__ import annotations

import contextvars
import threading
from dataclasses import dataclass, field

from ._errors import HostCodegenError
from ._global_func import GlobalFuncBuild
from ._types import HostCodegen, HostCodegenHook, Origin

TYPE_CHECKING = False  # typing costs import time; type checkers treat this name as True
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

    from ._registry import Registry

__all__ = ["SUPPORTED", "UnsupportedTileLangError", "add_defaults", "install", "is_installed",
           "plugin_fingerprint", "uninstall"]

SUPPORTED = ">=0.1.12,<0.1.16"
"""The TileLang versions :func:`install` supports (0.1.12 to 0.1.15)."""

DEFAULT_PREFIX = "tilelang-"
"""Names of TileLang's own codegens and hooks in the registry: ``tilelang-<kind>``."""


class UnsupportedTileLangError(HostCodegenError):
    """The installed TileLang is missing or outside :data:`SUPPORTED`."""


class _StockBuild(GlobalFuncBuild):
    """TileLang's own build callback, with the TVM global function it calls (when known)
    so that a missing function makes the default not match."""

    __slots__ = ("stock",)

    def __init__(self, global_func_name: str, stock: Callable[..., Any]) -> None:
        super().__init__(global_func_name)
        self.stock = stock

    def __call__(self, mod: Any, target_host: Any) -> Any:
        return self.stock(mod, target_host)

    def __repr__(self) -> str:
        return f"tilelang({self.global_func_name!r})"


@dataclass
class _State:
    registry: Registry
    version: str
    mode: str  # "registry" (0.1.12-0.1.13) or "backend" (0.1.14-0.1.15)
    origin: Origin
    patches: list[tuple[Any, str, Any]] = field(default_factory=list)
    codegens: dict[str, HostCodegen] = field(default_factory=dict)
    hooks: dict[str, HostCodegenHook] = field(default_factory=dict)
    stock: dict[str, Any] = field(default_factory=dict)
    checked: dict[int, tuple[HostCodegen, HostCodegen]] = field(default_factory=dict)


_LOCK = threading.RLock()
_STATE: list[_State] = []
_BACKEND: contextvars.ContextVar[Any] = contextvars.ContextVar("tilelang_hostcg_backend", default=None)


def is_installed() -> bool:
    """Whether :func:`install` is in effect."""
    return bool(_STATE)


def _tilelang_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return str(version("tilelang"))
    except PackageNotFoundError:
        raise UnsupportedTileLangError(
            f"TileLang is not installed; tilelang_hostcg.tilelang supports tilelang{SUPPORTED} "
            "(0.1.12 to 0.1.15): `pip install tilelang-hostcg[tilelang]`") from None


def _mode(version: str) -> str:
    from packaging.version import InvalidVersion, Version

    try:
        release = Version(version).release[:3]
    except InvalidVersion:
        release = ()
    if (0, 1, 12) <= release < (0, 1, 14):
        return "registry"
    if (0, 1, 14) <= release < (0, 1, 16):
        return "backend"
    raise UnsupportedTileLangError(
        f"TileLang {version} is not supported by tilelang_hostcg.tilelang: it supports "
        f"tilelang{SUPPORTED} (0.1.12 to 0.1.15). Install a supported TileLang "
        "(`pip install 'tilelang>=0.1.12,<0.1.16'`), or use tilelang_hostcg.build() without "
        "the integration")


def install(*, registry: Registry | None = None) -> None:
    """Route TileLang's host-codegen choice and hooks through ``registry`` (default: the
    default registry). Idempotent; raises :class:`UnsupportedTileLangError` for a TileLang
    outside :data:`SUPPORTED`, having changed nothing."""
    with _LOCK:
        if _STATE:
            return
        version = _tilelang_version()
        mode = _mode(version)
        import tilelang  # noqa: F401  # its TVM becomes the TVM in use

        if registry is None:
            from ._api import default_registry

            registry = default_registry()
        state = _State(registry, version, mode, Origin("tilelang", version))
        try:
            if mode == "registry":
                _install_registry_mode(state, patch=True)
            else:
                _install_backend_mode(state, patch=True)
            _patch_cache_key(state)
        except BaseException:
            _undo(state)
            raise
        _STATE.append(state)


def add_defaults(registry: Registry) -> None:
    """Register TileLang's own codegens and hooks in ``registry`` as :func:`install` does,
    without touching TileLang (the CLI's ``check`` and ``explain`` use it to answer as
    TileLang would after :func:`install`)."""
    version = _tilelang_version()
    mode = _mode(version)
    state = _State(registry, version, mode, Origin("tilelang", version))
    if mode == "registry":
        _install_registry_mode(state, patch=False)
    else:
        _install_backend_mode(state, patch=False)


def uninstall() -> None:
    """Undo :func:`install`: TileLang's original attributes are put back (the same
    objects) and TileLang's defaults leave the registry. No-op when not installed."""
    with _LOCK:
        if _STATE:
            _undo(_STATE.pop())


def _undo(state: _State) -> None:
    for owner, name, original in reversed(state.patches):
        setattr(owner, name, original)
    state.patches.clear()
    for kind, codegen in state.codegens.items():
        if any(r.obj is codegen for r in state.registry.registrations(kind=kind)):
            state.registry.unregister_host_codegen(kind, codegen.name)
    for kind, hook in state.hooks.items():
        from ._types import HOOK_GROUP

        if any(r.obj is hook for r in state.registry.registrations(HOOK_GROUP, kind)):
            state.registry.unregister_host_codegen_hook(kind, hook.name)
    state.codegens.clear()
    state.hooks.clear()


def _patch(state: _State, owner: Any, name: str, value: Any) -> None:
    """Replace ``owner.name`` with ``value`` (its ``__wrapped__`` is the original), to be
    put back by ``uninstall()``."""
    original = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
    value.__wrapped__ = original
    state.patches.append((owner, name, original))
    setattr(owner, name, value)


def _closure_global_func(build: Any) -> str | None:
    """The TVM global function a ``global_func_host_codegen`` closure of TileLang calls."""
    code = getattr(build, "__code__", None)
    cells = getattr(build, "__closure__", None)
    if code is None or not cells or "global_func_name" not in code.co_freevars:
        return None
    value = cells[code.co_freevars.index("global_func_name")].cell_contents
    return value if isinstance(value, str) else None


def _add_default(state: _State, kind: str, stock_build: Callable[..., Any], func_name: str | None,
                 ) -> None:
    """Register TileLang's own codegen for ``kind`` as a default, once."""
    if kind in state.codegens:
        return
    build: Callable[..., Any] = (_StockBuild(func_name, stock_build) if func_name else stock_build)
    codegen = HostCodegen(DEFAULT_PREFIX + kind, build)
    state.registry.register_host_codegen(kind, codegen, origin=state.origin, default=True)
    state.codegens[kind] = codegen


def _add_hook(state: _State, kind: str, apply: Callable[..., Any]) -> None:
    """Register a hook that runs TileLang's own hooks of ``kind``, once."""
    if kind in state.hooks:
        return
    hook = HostCodegenHook(DEFAULT_PREFIX + kind, apply)
    state.registry.register_host_codegen_hook(kind, hook, origin=state.origin)
    state.hooks[kind] = hook


def _is_default(state: _State, codegen: Any) -> bool:
    return any(codegen is c for c in state.codegens.values())


def _checked(state: _State, chosen: HostCodegen) -> HostCodegen:
    """``chosen`` as TileLang calls it (``.lower(mod, target_host)``), building through the
    registry's ``build_host`` so that a build returning anything but a runtime ``Module``
    is a :class:`~tilelang_hostcg.PluginCallbackError` naming the codegen and its origin,
    before TileLang or TVM sees the value. One object per codegen."""
    held = state.checked.get(id(chosen))
    if held is not None and held[0] is chosen:
        return held[1]
    registry = state.registry

    def build(mod: Any, target_host: Any) -> Any:
        return registry.build_host(mod, target_host)

    wrapper = HostCodegen(chosen.name, build, chosen.supports_target, chosen.priority)
    state.checked[id(chosen)] = (chosen, wrapper)
    return wrapper


# ---------------------------------------------------------------- 0.1.12-0.1.13
def _install_registry_mode(state: _State, *, patch: bool) -> None:
    from importlib import import_module

    # By module path: ``tilelang.engine.lower`` as an attribute is the function ``lower``.
    hc = import_module("tilelang.backend.host_codegen")
    lower = import_module("tilelang.engine.lower")

    stock_resolve = lower.resolve_host_codegen
    stock_apply = lower.apply_host_codegen_hooks
    registry = state.registry

    def sync_codegens(kind: str) -> None:
        if kind in state.codegens or not (kind in hc._LAZY_HOST_CODEGENS or kind in hc._HOST_CODEGENS):
            return
        hc._ensure_host_codegens_loaded(kind)  # what TileLang does at first use of the kind
        names = {_closure_global_func(c.build) for c in hc._HOST_CODEGENS.get(kind, ())}
        func_name = names.pop() if len(names) == 1 else None

        def build(mod: Any, target_host: Any) -> Any:
            return stock_resolve(target_host).lower(mod, target_host)

        _add_default(state, kind, build, func_name)

    def sync_hooks(kind: str) -> None:
        if kind in state.hooks or not (kind in hc._LAZY_HOST_CODEGEN_HOOKS
                                       or kind in hc._HOST_CODEGEN_HOOKS):
            return
        _add_hook(state, kind, stock_apply)

    def resolve_host_codegen(target_host: Any) -> Any:
        sync_codegens(target_host.kind.name)
        chosen = registry.resolve_host_codegen(target_host)
        return stock_resolve(target_host) if _is_default(state, chosen) else _checked(state, chosen)

    def apply_host_codegen_hooks(mod: Any, target_host: Any, target: Any) -> Any:
        if target is None:
            return mod
        sync_hooks(target.kind.name)
        return registry.apply_host_codegen_hooks(mod, target_host, target)

    for kind in sorted(set(hc._LAZY_HOST_CODEGENS) | set(hc._HOST_CODEGENS)):
        sync_codegens(kind)
    for kind in sorted(set(hc._LAZY_HOST_CODEGEN_HOOKS) | set(hc._HOST_CODEGEN_HOOKS)):
        sync_hooks(kind)
    if not patch:
        return
    _patch(state, lower, "resolve_host_codegen", resolve_host_codegen)
    _patch(state, lower, "apply_host_codegen_hooks", apply_host_codegen_hooks)


# ---------------------------------------------------------------- 0.1.14-0.1.15
def _install_backend_mode(state: _State, *, patch: bool) -> None:
    from tilelang.backend import module as backend_module

    cls = backend_module.BackendModule
    stock_get = cls.__dict__["get_host_codegen"]
    stock_pre = cls.__dict__["preprocess_host_codegen"]
    registry = state.registry

    def run_stock_hooks(mod: Any, target_host: Any, target: Any) -> Any:
        backend = _BACKEND.get()
        if backend is None:  # called outside TileLang (e.g. tilelang_hostcg.build)
            backend = next((b for b in backend_module.list_backends().values()
                            if b.matches(target)), None)
            if backend is None:
                return mod
        return stock_pre(backend, mod, target_host, target)

    def sync(backend: Any) -> None:
        for kind, codegen in backend.host_codegens.items():
            _add_default(state, kind, codegen.build, _closure_global_func(codegen.build))
        for kind in backend.host_codegen_hooks:
            _add_hook(state, kind, run_stock_hooks)

    def get_host_codegen(self: Any, target_host: Any) -> Any:
        sync(self)
        chosen = registry.resolve_host_codegen(target_host)
        return stock_get(self, target_host) if _is_default(state, chosen) else _checked(state, chosen)

    def preprocess_host_codegen(self: Any, mod: Any, target_host: Any, target: Any) -> Any:
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
    if not patch:
        return
    _patch(state, cls, "get_host_codegen", get_host_codegen)
    _patch(state, cls, "preprocess_host_codegen", preprocess_host_codegen)


# ---------------------------------------------------------------- kernel cache
def plugin_fingerprint(target: Any = None, target_host: Any = None, *,
                       registry: Registry | None = None) -> dict[str, Any]:
    """What of the plugin set decides host code for ``target``/``target_host``: every
    installed plugin distribution (name, version, state), and the codegen and hooks
    chosen (name and origin). JSON-ready and the same in every process with the same
    plugin set; TileLang's kernel cache key includes it after :func:`install`."""
    if registry is None:
        registry = _STATE[0].registry if _STATE else None
        if registry is None:
            from ._api import default_registry

            registry = default_registry()
    # "on"/"off", not the loading state: which kinds this process has used so far must
    # not change the key (a fresh process with the same plugin set hits the cache).
    plugins = sorted({(s.origin.distribution or "", s.origin.version or "", s.group, s.kind, s.value,
                       "off" if s.state in ("disabled", "incompatible") else "on")
                      for s in registry.sources()})
    doc: dict[str, Any] = {"plugins": [list(p) for p in plugins]}
    try:
        from ._targets import default_host, is_host_target, parse_target

        device = parse_target(target) if target is not None and str(target) != "auto" else None
        if target_host is not None and str(target_host) != "":
            host = parse_target(target_host)
        elif device is not None and device.host is not None:
            host = device.host
        elif device is not None and is_host_target(device):
            host = device
        else:
            host = default_host()
        doc["codegen"] = _describe(registry, registry.resolve_host_codegen(host), "codegen")
        if device is not None and not is_host_target(device):
            doc["hooks"] = [_describe(registry, r.obj, "hook") for r in registry.matching_hooks(device)]
    except Exception as exc:  # the compile itself reports it; the key records the failure
        doc["error"] = f"{type(exc).__name__}: {exc}"
    return doc


def _describe(registry: Registry, obj: Any, what: str) -> list[str]:
    from ._types import CODEGEN_GROUP, HOOK_GROUP

    group = CODEGEN_GROUP if what == "codegen" else HOOK_GROUP
    for reg in registry.registrations(group):
        if reg.obj is obj:
            o = reg.origin
            return [reg.kind, reg.name, str(reg.priority), o.distribution or "", o.version or "",
                    o.entry_point or ""]
    return ["?", getattr(obj, "name", "?")]


def _patch_cache_key(state: _State) -> None:
    from tilelang.cache.kernel_cache import KernelCache

    stock = KernelCache.__dict__["_generate_key"]

    def _generate_key(self: Any, *args: Any, **kwargs: Any) -> str:
        key = stock(self, *args, **kwargs)
        import hashlib
        import json

        fingerprint = plugin_fingerprint(kwargs.get("target"), kwargs.get("target_host"),
                                         registry=state.registry)
        text = json.dumps({"key": key, "tilelang-hostcg": fingerprint}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    _patch(state, KernelCache, "_generate_key", _generate_key)
