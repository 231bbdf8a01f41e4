# isort: skip_file
"""Diagnosis: findings and advice worded in one place, for warnings, the command line and JSON. Imports
only :mod:`..core`.

Its front door: the names below are what other layers may use, each loaded from its module on
first access; no module outside this folder imports one of its private modules."""

from __future__ import annotations

from ..core import FrontDoor

# Not ``typing.TYPE_CHECKING``: the door stays as cheap as the modules it opens. Type checkers read it as True.
TYPE_CHECKING = False
if TYPE_CHECKING:  # explicit re-exports, for type checkers
    from ._advice import (
        first_party_install as first_party_install,
        reinstall as reinstall,
        reinstall_by_hand as reinstall_by_hand,
        remove_by_hand as remove_by_hand,
        uninstall as uninstall,
    )
    from ._check_words import (
        ambiguous_problem as ambiguous_problem,
        client_problem as client_problem,
        device_kind_problem as device_kind_problem,
        duplicate_distribution_problem as duplicate_distribution_problem,
        lock_drift_problem as lock_drift_problem,
        lock_record as lock_record,
        missing_build_function_problem as missing_build_function_problem,
        missing_codegen_problem as missing_codegen_problem,
        missing_hook_problem as missing_hook_problem,
        no_core_requirement_problem as no_core_requirement_problem,
        plugin_cannot_build_fix as plugin_cannot_build_fix,
        printed_note as printed_note,
        route_unused_problem as route_unused_problem,
        tilelang_requirement_problem as tilelang_requirement_problem,
        tvm_conflict_problem as tvm_conflict_problem,
        unknown_kind_problem as unknown_kind_problem,
    )
    from ._control_words import no_time_bound as no_time_bound
    from ._findings import Finding as Finding, warn as warn, warn_activation_failed as warn_activation_failed
    from ._plugin_words import (
        did_you_mean as did_you_mean,
        plugin_advice as plugin_advice,
        plugin_failure as plugin_failure,
        plugin_state as plugin_state,
        what_failed as what_failed,
        wrong_entry_point as wrong_entry_point,
    )
    from ._words import (
        cannot_build as cannot_build,
        held_by as held_by,
        native_calls as native_calls,
        verdict as verdict,
        words as words,
    )

_DOOR = FrontDoor(__name__, {
    "_advice": ("first_party_install", "reinstall", "reinstall_by_hand", "remove_by_hand", "uninstall"),
    "_check_words": ("ambiguous_problem", "client_problem", "device_kind_problem", "duplicate_distribution_problem",
                     "lock_drift_problem", "lock_record", "missing_build_function_problem", "missing_codegen_problem",
                     "missing_hook_problem", "no_core_requirement_problem", "plugin_cannot_build_fix", "printed_note",
                     "route_unused_problem", "tilelang_requirement_problem", "tvm_conflict_problem",
                     "unknown_kind_problem"),
    "_control_words": ("no_time_bound",),
    "_findings": ("Finding", "warn", "warn_activation_failed"),
    "_plugin_words": ("did_you_mean", "plugin_advice", "plugin_failure", "plugin_state", "what_failed",
                       "wrong_entry_point"),
    "_words": ("cannot_build", "held_by", "native_calls", "verdict", "words"),
})
__all__ = _DOOR.names


def __getattr__(name: str) -> object:
    return _DOOR.open(name, globals())


def __dir__() -> list[str]:
    return list(__all__)
