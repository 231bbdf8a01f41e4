# isort: skip_file
"""The bottom layer: the names everyone agrees on, the public value types, and every error and
warning of the package, and the process's state. Imports nothing else of the package.

Its front door: the names below are what other layers may use, each loaded from its module on
first access; no module outside this folder imports one of its private modules."""

from __future__ import annotations

from ._doors import FrontDoor

# Not ``typing.TYPE_CHECKING``: the door stays as cheap as the modules it opens. Type checkers read it as True.
TYPE_CHECKING = False
if TYPE_CHECKING:  # explicit re-exports, for type checkers
    from ._errors import (
        AmbiguousHostCodegenError as AmbiguousHostCodegenError,
        CLI_PROG as CLI_PROG,
        CliError as CliError,
        DeviceAsHostError as DeviceAsHostError,
        DuplicateRegistrationError as DuplicateRegistrationError,
        HostCodegenError as HostCodegenError,
        InputError as InputError,
        LockFileError as LockFileError,
        MissingGlobalFuncError as MissingGlobalFuncError,
        NativeDefaultError as NativeDefaultError,
        NoHostCodegenError as NoHostCodegenError,
        PluginCallbackError as PluginCallbackError,
        PluginLoadError as PluginLoadError,
        TVMNotFoundError as TVMNotFoundError,
        TargetParseError as TargetParseError,
        UnknownKindError as UnknownKindError,
        UnsupportedTVMError as UnsupportedTVMError,
        UnsupportedTileLangError as UnsupportedTileLangError,
        UsageError as UsageError,
        add_note as add_note,
        cut as cut,
        notes_apart as notes_apart,
        shown as shown,
        text_of as text_of,
    )
    from ._names import (
        APACHE_TVM as APACHE_TVM,
        CODEGEN_GROUP as CODEGEN_GROUP,
        CORE_DISTRIBUTION as CORE_DISTRIBUTION,
        CORE_ENTRY_POINTS as CORE_ENTRY_POINTS,
        GROUPS as GROUPS,
        HOOK_GROUP as HOOK_GROUP,
        NATIVE_API_VERSION as NATIVE_API_VERSION,
        NATIVE_DECLARATION as NATIVE_DECLARATION,
        PlanState as PlanState,
        SourceState as SourceState,
        TILELANG as TILELANG,
        is_core as is_core,
        normalize_name as normalize_name,
    )
    from ._process import (
        ClientDefaults as ClientDefaults,
        PROCESS as PROCESS,
        Process as Process,
        ThreadState as ThreadState,
        at_import as at_import,
    )
    from ._types import (
        CODE_ORIGIN as CODE_ORIGIN,
        HostCodegen as HostCodegen,
        HostCodegenFunc as HostCodegenFunc,
        HostCodegenHook as HostCodegenHook,
        HostCodegenHookFunc as HostCodegenHookFunc,
        Origin as Origin,
        TVMInfo as TVMInfo,
        TargetLike as TargetLike,  # an annotation only: not in the door
        TargetPredicate as TargetPredicate,
        Verdict as Verdict,
    )
    from ._warnings import (
        ActivationFailedPluginWarning as ActivationFailedPluginWarning,
        BypassedPluginWarning as BypassedPluginWarning,
        ControlPluginWarning as ControlPluginWarning,
        ExtensionPointTakenPluginWarning as ExtensionPointTakenPluginWarning,
        Facts as Facts,
        LeftInPlacePluginWarning as LeftInPlacePluginWarning,
        MetadataPluginWarning as MetadataPluginWarning,
        NativeDeclarationPluginWarning as NativeDeclarationPluginWarning,
        NativeUndeclaredPluginWarning as NativeUndeclaredPluginWarning,
        NearMissPluginWarning as NearMissPluginWarning,
        PatchesNothingPluginWarning as PatchesNothingPluginWarning,
        PluginWarning as PluginWarning,
        PredicatePluginWarning as PredicatePluginWarning,
        SkippedPluginWarning as SkippedPluginWarning,
        TileLangBuildsPluginWarning as TileLangBuildsPluginWarning,
        UnservedArgumentsPluginWarning as UnservedArgumentsPluginWarning,
        warn_once as warn_once,
        warn_plugin as warn_plugin,
        warning_class as warning_class,
    )

_DOOR = FrontDoor(__name__, {
    "_errors": ("AmbiguousHostCodegenError", "CLI_PROG", "CliError", "DeviceAsHostError", "DuplicateRegistrationError",
                "HostCodegenError", "InputError", "LockFileError", "MissingGlobalFuncError", "NativeDefaultError",
                "NoHostCodegenError", "PluginCallbackError", "PluginLoadError", "TVMNotFoundError", "TargetParseError",
                "UnknownKindError", "UnsupportedTVMError", "UnsupportedTileLangError", "UsageError", "add_note", "cut",
                "notes_apart", "shown", "text_of"),
    "_names": ("APACHE_TVM", "CODEGEN_GROUP", "CORE_DISTRIBUTION", "CORE_ENTRY_POINTS", "GROUPS", "HOOK_GROUP",
               "NATIVE_API_VERSION", "NATIVE_DECLARATION", "PlanState", "SourceState", "TILELANG", "is_core",
               "normalize_name"),
    "_process": ("ClientDefaults", "PROCESS", "Process", "ThreadState", "at_import"),
    "_types": ("CODE_ORIGIN", "HostCodegen", "HostCodegenFunc", "HostCodegenHook", "HostCodegenHookFunc", "Origin",
               "TVMInfo", "TargetPredicate", "Verdict"),
    "_warnings": ("ActivationFailedPluginWarning", "BypassedPluginWarning", "ControlPluginWarning",
                  "ExtensionPointTakenPluginWarning", "Facts", "LeftInPlacePluginWarning", "MetadataPluginWarning",
                  "NativeDeclarationPluginWarning", "NativeUndeclaredPluginWarning", "NearMissPluginWarning",
                  "PatchesNothingPluginWarning", "PluginWarning", "PredicatePluginWarning", "SkippedPluginWarning",
                  "TileLangBuildsPluginWarning", "UnservedArgumentsPluginWarning", "warn_once",
                  "warn_plugin", "warning_class"),
})
__all__ = ["FrontDoor", *_DOOR.names]


def __getattr__(name: str) -> object:
    return _DOOR.open(name, globals())


def __dir__() -> list[str]:
    return list(__all__)
