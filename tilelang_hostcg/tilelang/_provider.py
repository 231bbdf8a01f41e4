"""tilelang-hostcg as one provider of TileLang's own host-codegen extension point: the entry point
``tilelang_hostcg`` of TileLang's group ``tilelang.host_codegen_providers``. TileLang reads that group
once per process and calls each provider when it creates a compilation's ``BackendContext``, with the
selected backend manifest and the normalized targets; the context carries the providers' choices and
their cache-key fingerprint. This provider resolves once per context with
:func:`tilelang_hostcg.native.plan` (the backend's own codegens and hooks as the compiler's own) and
changes nothing where nothing third-party runs, so the context, the host code and every cache key are
TileLang's own. Nothing of TileLang is replaced; where the imported TileLang has this point it is the
integration point (:func:`point`), and a build that runs a plan confirms it."""

from __future__ import annotations

import sys
from typing import Any

from _tilelang_hostcg_switch import activation_off

GROUP = "tilelang.host_codegen_providers"
"""TileLang's entry-point group of host-codegen providers, as ``tilelang.backend.module`` names it."""
POINT_MODULE = "tilelang.backend.module"
POINT_NAME = "HOST_CODEGEN_PROVIDER_GROUP"
CLIENT_PREFIX = "tilelang-"
"""A plan's client is ``tilelang-<backend>``: each backend's own codegens serve its own builds."""


def point() -> str | None:
    """Where the imported TileLang calls this provider (its module naming our group), else ``None``."""
    module = sys.modules.get(POINT_MODULE)
    if module is None or getattr(module, POINT_NAME, None) != GROUP:
        return None
    return f"{POINT_MODULE} calls the providers of its entry-point group {GROUP!r}, tilelang-hostcg's among them"


def provide(module: Any, target: Any, target_host: Any) -> Any:
    """TileLang's call at ``create_backend_context``: ``None`` where nothing third-party runs for these
    targets (TileLang's own codegen and hooks, as they are), else a ``HostCodegenChoice`` whose codegen
    and hook run this compilation's plan, with the plan's fingerprint."""
    if activation_off():
        return None
    from ..native import plan
    kind = target.kind.name
    made = plan(target_host, target, codegens=module.host_codegens, hooks=module.host_codegen_hooks.get(kind, ()),
                client=CLIENT_PREFIX + module.name)
    if not made.third_party:
        return None
    from tilelang.backend.host_codegen import HostCodegen, HostCodegenHook
    from tilelang.backend.module import HostCodegenChoice

    def build(mod: Any, target_host: Any) -> Any:
        return made.build(mod)

    def apply(mod: Any, target_host: Any, target: Any) -> Any:
        return made.apply_hooks(mod)

    codegen = HostCodegen(made.codegen or "tilelang-hostcg", build=build)
    hooks = (HostCodegenHook("+".join(made.hooks), apply=apply),) if made.hooks else ()
    return HostCodegenChoice(made.fingerprint, host_codegen=codegen, host_codegen_hooks=hooks)
