"""TileLang's cache keys (kernel cache, autotuner), extended by what of the plugin set decides a
kernel's host code: a function of the installed set and the kernel's targets only, never of what
this process has loaded so far."""

from __future__ import annotations

import hashlib
import json
from importlib import import_module
from typing import TYPE_CHECKING, Any

from ..core._names import CODEGEN_GROUP, HOOK_GROUP
from ..environment._targets import default_host, host_of, is_host_target, parse_target
from ..registry._registry import plugin_set
from ._layouts import State, patch

if TYPE_CHECKING:
    from ..registry._registry import Registry

def fingerprint(registry: Registry, target: Any = None, target_host: Any = None) -> dict[str, Any]:
    """See :func:`tilelang_hostcg.tilelang.plugin_fingerprint`."""
    doc: dict[str, Any] = {"plugins": plugin_set(registry)}
    try:
        device = parse_target(target) if target is not None and str(target) != "auto" else None
        if target_host is not None and str(target_host) != "":
            host = parse_target(target_host)
        elif device is not None and device.host is not None:
            host = device.host
        else:
            host = default_host() if device is None else host_of(device)
        doc["codegen"] = _describe(registry, CODEGEN_GROUP, registry.resolve_host_codegen(host))
        if device is not None and not is_host_target(device):
            doc["hooks"] = [_describe(registry, HOOK_GROUP, r.obj) for r in registry.matching_hooks(device)]
    except Exception as exc:  # the compile itself reports it; the key records the failure
        doc["error"] = f"{type(exc).__name__}: {exc}"
    return doc


def _describe(registry: Registry, group: str, obj: Any) -> list[str]:
    for reg in registry.registrations(group):
        if reg.obj is obj:
            o = reg.origin
            return [reg.kind, reg.name, str(reg.priority), o.distribution or "", o.version or "",
                    o.entry_point or ""]
    return ["?", getattr(obj, "name", "?")]


def patch_cache_key(state: State) -> None:
    """Make TileLang's kernel cache and autotuner keys (``None``: not cached) hash the plugin set too."""
    registry = state.registry
    assert registry is not None

    def keyed(key: str, target: Any, target_host: Any) -> str:
        doc = fingerprint(registry, target, target_host)
        text = json.dumps({"key": key, "tilelang-hostcg": doc}, sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()

    kernel_cache = import_module("tilelang.cache.kernel_cache").KernelCache
    stock_kernel_key = kernel_cache.__dict__["_generate_key"]

    def _generate_key(self: Any, *args: Any, **kwargs: Any) -> str:
        if not state.active:  # uninstalled, still called by another package's wrapper
            return stock_kernel_key(self, *args, **kwargs)  # type: ignore[no-any-return]
        return keyed(stock_kernel_key(self, *args, **kwargs), kwargs.get("target"),
                     kwargs.get("target_host"))

    tuner = import_module("tilelang.autotuner.tuner").AutoTuner
    stock_tuner_key = tuner.__dict__["generate_cache_key"]

    def generate_cache_key(self: Any, *args: Any, **kwargs: Any) -> str | None:
        key = stock_tuner_key(self, *args, **kwargs)
        if not state.active:
            return key  # type: ignore[no-any-return]
        compile_args = getattr(self, "compile_args", None)
        return None if key is None else keyed(key, getattr(compile_args, "target", None),
                                              getattr(compile_args, "target_host", None))

    patch(state, kernel_cache, "_generate_key", _generate_key, carries_builds=False)
    patch(state, tuner, "generate_cache_key", generate_cache_key, carries_builds=False)
