# isort: skip_file
"""tilelang-hostcg: pip-installable host code generators for TileLang/TVM backends.

Importing it is cheap (no TVM, no ``importlib.metadata``, no entry points read): names load
on first access."""

from __future__ import annotations

__version__ = "0.1.0"  # the distribution's version too (pyproject.toml reads it from here)

from .core import FrontDoor  # the layers' doors: this one too (it imports nothing else)

# Not ``typing.TYPE_CHECKING``: importing ``typing`` costs milliseconds. Type checkers read it as True.
TYPE_CHECKING = False
if TYPE_CHECKING:  # explicit re-exports, for type checkers
    from ._api import allowed_host_codegens_for_target as allowed_host_codegens_for_target
    from ._api import apply_host_codegen_hooks as apply_host_codegen_hooks, build as build, build_host as build_host
    from ._api import default_registry as default_registry, refresh as refresh
    from ._api import register_host_codegen as register_host_codegen
    from ._api import register_host_codegen_hook as register_host_codegen_hook
    from ._api import register_lazy_host_codegen as register_lazy_host_codegen
    from ._api import register_lazy_host_codegen_hooks as register_lazy_host_codegen_hooks
    from ._api import resolve_host_codegen as resolve_host_codegen
    from .core import AmbiguousHostCodegenError as AmbiguousHostCodegenError
    from .core import DeviceAsHostError as DeviceAsHostError
    from .core import DuplicateRegistrationError as DuplicateRegistrationError
    from .core import HostCodegenError as HostCodegenError, MissingGlobalFuncError as MissingGlobalFuncError
    from .core import NativeDefaultError as NativeDefaultError
    from .core import NoHostCodegenError as NoHostCodegenError, PluginCallbackError as PluginCallbackError
    from .core import PluginLoadError as PluginLoadError, PluginWarning as PluginWarning
    from .core import TargetParseError as TargetParseError, UnsupportedTileLangError as UnsupportedTileLangError
    from .registry import Registry as Registry
    from .registry import Candidate as Candidate, Resolution as Resolution
    from .registry import SourceInfo as SourceInfo
    from .registry import Registration as Registration
    from .environment import global_func_host_codegen as global_func_host_codegen, parse_target as parse_target
    from .core import TVMNotFoundError as TVMNotFoundError
    from .core import HostCodegen as HostCodegen, HostCodegenFunc as HostCodegenFunc
    from .core import HostCodegenHook as HostCodegenHook, HostCodegenHookFunc as HostCodegenHookFunc
    from .core import Origin as Origin, TargetPredicate as TargetPredicate
    from .discovery import Controls as Controls

# Where each public name lives: this package's `_api`, else the door of its layer (the block above says the
# same to type checkers; a test compares).
_DOOR = FrontDoor(__name__, {
    "_api": ("allowed_host_codegens_for_target", "apply_host_codegen_hooks", "build",
             "build_host", "default_registry", "refresh", "register_host_codegen",
             "register_host_codegen_hook", "register_lazy_host_codegen",
             "register_lazy_host_codegen_hooks", "resolve_host_codegen"),
    "core": ("AmbiguousHostCodegenError", "DeviceAsHostError", "DuplicateRegistrationError", "HostCodegenError",
             "MissingGlobalFuncError", "NativeDefaultError", "NoHostCodegenError", "PluginCallbackError",
             "PluginLoadError", "PluginWarning", "TargetParseError", "TVMNotFoundError", "UnsupportedTileLangError",
             "HostCodegen", "HostCodegenFunc", "HostCodegenHook", "HostCodegenHookFunc", "Origin",
             "TargetPredicate"),
    "discovery": ("Controls",),
    "environment": ("global_func_host_codegen", "parse_target"),
    "registry": ("Candidate", "Registration", "Registry", "Resolution", "SourceInfo"),
})
__all__ = ["__version__", *_DOOR.names]


def __getattr__(name: str) -> object:
    return _DOOR.open(name, globals())


def __dir__() -> list[str]:
    return sorted(__all__)
