"""What :mod:`tilelang_hostcg.native` does at a call (imported at the first one): where the
registry decides and where the compiler's own defaults decide alone, the defaults as client
defaults of the default registry, and the fingerprint."""

from __future__ import annotations

import contextvars
import hashlib
import json
import os
import sys
import threading
from typing import TYPE_CHECKING, Any

from _tilelang_hostcg_switch import activation_off

from ..core._errors import NativeDefaultError, NoHostCodegenError, warn_once
from ..core._names import CODEGEN_GROUP, HOOK_GROUP
from ..core._types import HostCodegen, HostCodegenHook, Origin
from ..environment._targets import closure_global_func
from ._interface import newer_api_text

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from ..registry._registry import Registry

_LOCK = threading.Lock()
_PLANNED: list[bool] = []  # once: whether a third-party plugin the controls keep is installed
# What the current native call of this thread passed: (client, kind, defaults), for the registered defaults.
_CALL: contextvars.ContextVar[tuple[str, str, Any] | None] = contextvars.ContextVar(
    "tilelang_hostcg_native_call", default=None)
_HELD: dict[tuple[int, str, str, str], Any] = {}  # (registry, group, client, kind) -> our registered default


def registry() -> Registry | None:
    """The registry a native call asks, or ``None`` where the compiler's defaults decide alone: the
    off switch, or no third-party plugin the controls keep and nothing registered in code."""
    if activation_off(os.environ):
        return None
    api = sys.modules.get("tilelang_hostcg._api")  # not imported here: without a plugin, no registry is
    made = api.made_default_registry() if api is not None else None
    if made is not None:  # the program registered in code, or asked the registry
        return made  # type: ignore[no-any-return]
    if not _PLANNED:
        with _LOCK:
            if not _PLANNED:
                from ..discovery._planning import Controls, third_party_planned
                _PLANNED.append(third_party_planned(Controls.from_environ()))
    if not _PLANNED[0]:
        return None
    from .._api import default_registry
    return default_registry()


def _host(target_host: Any) -> Any:
    if hasattr(target_host, "kind"):
        return target_host
    from ..environment._targets import parse_target
    return parse_target(target_host)


def _build_with(default: Any, mod: Any, target_host: Any) -> Any:
    """Build with one of the compiler's codegens as it holds it (``build``, or a callable)."""
    build = getattr(default, "build", None)
    if callable(build):
        return build(mod, target_host)
    if callable(default):
        return default(mod, target_host)
    raise NativeDefaultError(f"the compiler's host codegen {default!r} passed to tilelang_hostcg.native.build_host "
                             "has no build(mod, target_host) and is not callable; pass an object with a name and "
                             "build, or a callable (mod, target_host)")


def _apply_with(default: Any, mod: Any, target_host: Any, target: Any) -> Any:
    """Apply one of the compiler's hooks as it holds it (``apply``, or a callable)."""
    apply = getattr(default, "apply", None)
    if callable(apply):
        return apply(mod, target_host, target)
    if callable(default):
        return default(mod, target_host, target)
    raise NativeDefaultError(f"the compiler's host codegen hook {default!r} passed to "
                             "tilelang_hostcg.native.apply_hooks has no apply(mod, target_host, target) and is "
                             "not callable; pass an object with a name and apply, or a callable")


def _build_default(defaults: Mapping[str, Any], kind: str, mod: Any, host: Any, client: str) -> Any:
    default = defaults.get(kind)
    if default is None:
        raise NoHostCodegenError(
            f"no host codegen for host target kind {kind!r}: {client} has none (it has "
            f"{', '.join(sorted(defaults)) or 'none'}) and no installed plugin provides one. Build for one of "
            f"those host kinds, or install a plugin distribution that provides {kind!r}",
            kind=kind, available=tuple(sorted(defaults)))
    return _build_with(default, mod, host)


def _origin(client: str) -> Origin:
    """The defaults' origin: the client, as a distribution where one of that name is installed."""
    try:
        from importlib.metadata import version
        return Origin(client, version(client))
    except Exception:  # no such distribution (a name only), or unreadable metadata
        return Origin(client)


def _registered_default(reg: Registry, group: str, client: str, kind: str, default: Any) -> Any:
    """Our default of ``client`` for ``kind`` in ``reg`` (registered once, as a client default)."""
    key = (id(reg), group, client, kind)
    held = _HELD.get(key)
    if held is not None:
        return held
    with _LOCK:
        held = _HELD.get(key)
        if held is not None:
            return held
        name = f"{client}-{kind}"
        if group == CODEGEN_GROUP:
            func = closure_global_func(getattr(default, "build", default))
            held = HostCodegen(name, _current_codegen, global_funcs=(func,) if func else ())
            reg.register_host_codegen(kind, held, origin=_origin(client), default=True)
        else:
            held = HostCodegenHook(name, _current_hooks)
            reg.register_host_codegen_hook(kind, held, origin=_origin(client))
        _HELD[key] = held
        return held


def _current_codegen(mod: Any, target_host: Any) -> Any:
    """A registered default's build: the current call's default (outside a call, ``build()``: none)."""
    call = _CALL.get()
    if call is None:
        raise NoHostCodegenError("a compiler's own host codegen is only built by that compiler's native call; "
                                 "build through the compiler", kind=target_host.kind.name)
    client, kind, defaults = call
    return _build_default(defaults, kind, mod, target_host, client)


def _current_hooks(mod: Any, target_host: Any, target: Any) -> Any:
    """A registered default hook: the current call's hooks, in order (outside a call: none)."""
    call = _CALL.get()
    for hook in call[2] if call is not None else ():
        mod = _apply_with(hook, mod, target_host, target)
    return mod


def build_host(mod: Any, target_host: Any, defaults: Mapping[str, Any], client: str) -> Any:
    """See :func:`tilelang_hostcg.native.build_host`."""
    host = _host(target_host)
    kind = host.kind.name
    reg = registry()
    if reg is None:
        return _build_default(defaults, kind, mod, host, client)
    for each, default in defaults.items():
        _registered_default(reg, CODEGEN_GROUP, client, each, default)
    chosen = reg.resolve_host_codegen(host)
    token = _CALL.set((client, kind, defaults))
    try:
        if any(chosen is held for held in _HELD.values()):  # the compiler's own: called as it is
            return _build_default(defaults, kind, mod, host, client)
        return reg.build_host(mod, host)  # checks what the plugin's codegen returns, naming it
    finally:
        _CALL.reset(token)


def apply_hooks(mod: Any, target_host: Any, target: Any, defaults: Sequence[Any], client: str) -> Any:
    """See :func:`tilelang_hostcg.native.apply_hooks`."""
    reg = registry() if target is not None else None
    if reg is None:
        for hook in defaults:
            mod = _apply_with(hook, mod, target_host, target)
        return mod
    device = _host(target)
    kind = device.kind.name
    # Registered even with no default hook: a broken plugin's hooks then never fail the compile.
    _registered_default(reg, HOOK_GROUP, client, kind, None)
    token = _CALL.set((client, kind, tuple(defaults)))
    try:
        return reg.apply_host_codegen_hooks(mod, target_host, device)
    finally:
        _CALL.reset(token)


def fingerprint() -> str:
    """See :func:`tilelang_hostcg.native.fingerprint`."""
    reg = registry()
    if reg is None:
        return "stock"
    from ..discovery._controls import ENV_PREFER
    from ..registry._registry import plugin_set
    ours = {id(obj) for obj in _HELD.values()}
    in_code = sorted([group, r.kind, r.name, str(r.priority)] for group in (CODEGEN_GROUP, HOOK_GROUP)
                     for r in reg.registrations(group) if r.origin.group is None and id(r.obj) not in ours
                     and not r.default)
    doc = {"plugins": plugin_set(reg), "prefer": os.environ.get(ENV_PREFER, ""), "code": in_code}
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:16]


def newer_api(declared: object, module: object) -> None:
    """One warning for a caller written for an API this one is not (a newer one)."""
    text = newer_api_text(declared, str(module))
    if text is not None:
        warn_once(text)
