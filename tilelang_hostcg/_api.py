"""Module-level façades over the default :class:`Registry`, or the registry loading a plugin in this thread."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .core import PROCESS
from .registry import REGISTRIES, Registry, current_load

if TYPE_CHECKING:
    from tvm.ir import IRModule
    from tvm.runtime import Module

    from .core import HostCodegen, HostCodegenHook, TargetLike


def default_registry() -> Registry:
    """The process-wide registry the module-level functions use (discovers plugins; a client that routes
    builds into it has its own codegens join it before it decides)."""
    made = REGISTRIES.default
    if made is None:
        with REGISTRIES.default_lock:
            made = REGISTRIES.default
            if made is None:
                made = REGISTRIES.default = Registry(discover=True, client_defaults=PROCESS.client_defaults)
    return made


def made_default_registry() -> Registry | None:
    """The default registry where this process has made it (registered in code, or asked it), else ``None``."""
    return REGISTRIES.default


def _current() -> Registry:
    """The registry loading a plugin in this thread, else the default one."""
    load = current_load()
    return load.registry if load is not None else default_registry()


def resolve_host_codegen(target_host: TargetLike) -> HostCodegen:
    """Resolve the host codegen for ``target_host`` (see :meth:`Registry.resolve_host_codegen`)."""
    made = REGISTRIES.default
    if made is not None and not REGISTRIES.active:  # the hot path: no plugin is being loaded anywhere
        return made.resolve_host_codegen(target_host)
    return _current().resolve_host_codegen(target_host)


def allowed_host_codegens_for_target(target_host: TargetLike) -> list[str]:
    """Names of the codegens matching ``target_host``, best first."""
    return _current().allowed_host_codegens_for_target(target_host)


def apply_host_codegen_hooks(mod: IRModule, target_host: TargetLike, target: TargetLike | None) -> IRModule:
    """Run the device kind's hooks on ``mod``; ``target=None`` returns ``mod`` unchanged."""
    return _current().apply_host_codegen_hooks(mod, target_host, target)


def register_host_codegen(target_host_kind: str, codegen: HostCodegen, *, override: bool = False) -> HostCodegen:
    """Register ``codegen`` for a host kind; duplicate names raise unless ``override``."""
    return _current().register_host_codegen(target_host_kind, codegen, override=override)


def register_lazy_host_codegen(target_host_kind: str, import_path: str) -> None:
    """Import ``import_path`` when ``target_host_kind`` is first used."""
    _current().register_lazy_host_codegen(target_host_kind, import_path)


def register_host_codegen_hook(target_kind: str, hook: HostCodegenHook, *, override: bool = False) -> HostCodegenHook:
    """Register ``hook`` for a device kind; duplicate names raise unless ``override``."""
    return _current().register_host_codegen_hook(target_kind, hook, override=override)


def register_lazy_host_codegen_hooks(target_kind: str, import_path: str) -> None:
    """Import ``import_path`` before hooks of ``target_kind`` are first applied."""
    _current().register_lazy_host_codegen_hooks(target_kind, import_path)


def refresh() -> None:
    """Re-read installed entry points in the default registry (after ``pip install``)."""
    default_registry().refresh()


def build_host(host_mod: IRModule, target_host: TargetLike, target: TargetLike | None = None) -> Module:
    """Apply hooks, resolve the host codegen and build ``host_mod``."""
    return _current().build_host(host_mod, target_host, target)


def build(func_or_mod: Any, target: Any = None, pipeline: Any = "default", *,
          registry: Registry | None = None) -> Module:
    """Compile like ``tvm.tirx.build``, building host code through ``registry`` (default: the default one)."""
    from .registry import build as drive  # here: the first resolution never needs the driver
    return drive(registry or _current(), func_or_mod, target, pipeline)
