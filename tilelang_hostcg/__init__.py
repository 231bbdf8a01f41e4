"""tilelang-hostcg: pip-installable host code generators for TileLang/TVM backends.

Importing it is cheap (no TVM, no ``importlib.metadata``, no entry points read): names load
on first access."""

from __future__ import annotations

__version__ = "0.1.0"  # the distribution's version too (pyproject.toml reads it from here)

# Not ``from typing import TYPE_CHECKING``: ``import tilelang_hostcg`` alone stays under a
# millisecond, where importing ``typing`` (which imports ``re``) costs several. Type
# checkers read this name as True.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from ._api import (
        allowed_host_codegens_for_target,
        apply_host_codegen_hooks,
        build,
        build_host,
        default_registry,
        refresh,
        register_host_codegen,
        register_host_codegen_hook,
        register_lazy_host_codegen,
        register_lazy_host_codegen_hooks,
        resolve_host_codegen,
    )
    from ._errors import (
        AmbiguousHostCodegenError,
        DeviceAsHostError,
        DuplicateRegistrationError,
        HostCodegenError,
        MissingGlobalFuncError,
        NoHostCodegenError,
        PluginCallbackError,
        PluginLoadError,
        PluginWarning,
        TargetParseError,
        UnsupportedTileLangError,
    )
    from ._registry import Registry
    from ._resolution import Candidate, Resolution
    from ._sources import SourceInfo
    from ._table import Registration
    from ._targets import global_func_host_codegen, parse_target
    from ._tvm import TVMNotFoundError
    from ._types import (
        HostCodegen,
        HostCodegenFunc,
        HostCodegenHook,
        HostCodegenHookFunc,
        Origin,
        TargetPredicate,
    )
    from .discovery._controls import Controls

__all__ = ["AmbiguousHostCodegenError", "Candidate", "Controls", "DeviceAsHostError", "DuplicateRegistrationError",
           "HostCodegen", "HostCodegenError", "HostCodegenFunc", "HostCodegenHook", "HostCodegenHookFunc",
           "MissingGlobalFuncError", "NoHostCodegenError", "Origin", "PluginCallbackError", "PluginLoadError",
           "PluginWarning", "Registration", "Registry", "Resolution", "SourceInfo", "TVMNotFoundError",
           "TargetParseError", "TargetPredicate", "UnsupportedTileLangError", "__version__",
           "allowed_host_codegens_for_target", "apply_host_codegen_hooks", "build", "build_host", "default_registry",
           "global_func_host_codegen", "parse_target", "refresh", "register_host_codegen",
           "register_host_codegen_hook", "register_lazy_host_codegen", "register_lazy_host_codegen_hooks",
           "resolve_host_codegen"]

_WHERE = {
    "_api": ("allowed_host_codegens_for_target", "apply_host_codegen_hooks", "build",
             "build_host", "default_registry", "refresh", "register_host_codegen",
             "register_host_codegen_hook", "register_lazy_host_codegen",
             "register_lazy_host_codegen_hooks", "resolve_host_codegen"),
    "discovery._controls": ("Controls",),
    "_errors": ("AmbiguousHostCodegenError", "DuplicateRegistrationError", "HostCodegenError",
                "MissingGlobalFuncError", "NoHostCodegenError", "PluginCallbackError", "PluginLoadError",
                "PluginWarning", "TargetParseError", "UnsupportedTileLangError", "DeviceAsHostError"),
    "_registry": ("Registry",),
    "_resolution": ("Candidate", "Resolution"),
    "_sources": ("SourceInfo",),
    "_table": ("Registration",),
    "_targets": ("global_func_host_codegen", "parse_target"),
    "_tvm": ("TVMNotFoundError",),
    "_types": ("HostCodegen", "HostCodegenFunc", "HostCodegenHook", "HostCodegenHookFunc",
               "Origin", "TargetPredicate"),
}
_MODULE_OF = {name: module for module, names in _WHERE.items() for name in names}


def __getattr__(name: str) -> object:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'tilelang_hostcg' has no attribute {name!r}")
    value = getattr(__import__(f"{__name__}.{module}", fromlist=[name]), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(__all__)
