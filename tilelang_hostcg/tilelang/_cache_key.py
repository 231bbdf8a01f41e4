"""TileLang's cache keys (kernel cache, autotuner), extended by what of the plugin set decides a
kernel's host code: the plan of its targets (:mod:`tilelang_hostcg.clients._plan`, the rule the
native API's fingerprint follows), a function of the installed set, the controls and the kernel's
targets only, never of what this process has loaded so far. Where nothing third-party runs for a
kernel, its key is TileLang's own, byte for byte."""

from __future__ import annotations

import hashlib
import json
from importlib import import_module
from typing import TYPE_CHECKING, Any

from ..clients import make_plan
from ..environment import default_host, host_of, is_host_target, parse_target
from ._layouts import State, patch

if TYPE_CHECKING:
    from ..core import HostCodegen, HostCodegenHook
    from ..registry import Registry


def fingerprint(registry: Registry, target: Any = None, target_host: Any = None,
                codegens: dict[str, HostCodegen] | None = None,
                hooks: dict[str, HostCodegenHook] | None = None) -> dict[str, Any]:
    """See :func:`tilelang_hostcg.tilelang.plugin_fingerprint` (``codegens``, ``hooks``: TileLang's own,
    as the integration registered them, by kind)."""
    try:
        device = parse_target(target) if target is not None and str(target) != "auto" else None
        if target_host is not None and str(target_host) != "":
            host = parse_target(target_host)
        elif device is not None and device.host is not None:
            host = device.host
        else:
            host = default_host() if device is None else host_of(device)
        if device is not None and is_host_target(device):
            device = None
        own_hooks = (hooks or {}).get(device.kind.name) if device is not None else None
        plan = make_plan(registry, host, device, codegens or {}, (own_hooks,) if own_hooks is not None else (),
                         "tilelang")
    except Exception as exc:  # the compile itself reports it; the key records the failure
        return {"third_party": True, "fingerprint": None, "error": f"{type(exc).__name__}: {exc}"}
    return {"third_party": plan.third_party, "fingerprint": plan.fingerprint, **plan.document()}


def patch_cache_key(state: State) -> None:
    """Make TileLang's kernel cache and autotuner keys (``None``: not cached) hash the plugin set too."""
    registry = state.registry
    assert registry is not None

    def keyed(key: str, target: Any, target_host: Any) -> str:
        doc = fingerprint(registry, target, target_host, state.codegens, state.hooks)
        if not doc["third_party"]:
            return key  # nothing third-party runs: TileLang's own key
        text = json.dumps({"key": key, "tilelang-hostcg": doc.get("fingerprint") or doc}, sort_keys=True)
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
