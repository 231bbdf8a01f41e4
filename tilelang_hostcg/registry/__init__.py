# isort: skip_file
"""The registry: the registration table, lazy sources and their loading, failures as records,
the one resolution rule, and the build that asks it. Imports the layers below it
(:mod:`..core`, :mod:`..environment`, :mod:`..discovery`), never a client or the command line.

Its front door: the names below are what other layers may use, each loaded from its module on
first access; no module outside this folder imports one of its private modules."""

from __future__ import annotations

from ..core import FrontDoor

# Not ``typing.TYPE_CHECKING``: the door stays as cheap as the modules it opens. Type checkers read it as True.
TYPE_CHECKING = False
if TYPE_CHECKING:  # explicit re-exports, for type checkers
    from ._build import build as build, build_split as build_split
    from ._failures import (
        advice as advice,
        capture as capture,
        error_message as error_message,
        failure_site as failure_site,
        failure_text as failure_text,
        install_record as install_record,
        plugin_traceback as plugin_traceback,
        reinstall_advice as reinstall_advice,
        reinstall_command as reinstall_command,
        state_text as state_text,
        wrong_entry_point as wrong_entry_point,
    )
    from ._registry import Registry as Registry
    from ._resolution import (
        Candidate as Candidate,
        Resolution as Resolution,
        Standing as Standing,
        Why as Why,
        can_build_text as can_build_text,
        cannot_build_text as cannot_build_text,
        missing_build as missing_build,
        verdict_text as verdict_text,
    )
    from ._shared import REGISTRIES as REGISTRIES, Registries as Registries
    from ._skipped import AUTOLOAD_OFF_TEXT as AUTOLOAD_OFF_TEXT
    from ._sources import SourceInfo as SourceInfo, current_load as current_load, module_of as module_of
    from ._table import Registration as Registration, run_order as run_order

_DOOR = FrontDoor(__name__, {
    "_build": ("build", "build_split"),
    "_failures": ("advice", "capture", "error_message", "failure_site", "failure_text", "install_record",
                  "plugin_traceback", "reinstall_advice", "reinstall_command", "state_text", "wrong_entry_point"),
    "_registry": ("Registry",),
    "_resolution": ("Candidate", "Resolution", "Standing", "Why", "can_build_text", "cannot_build_text",
                    "missing_build", "verdict_text"),
    "_shared": ("REGISTRIES", "Registries"),
    "_skipped": ("AUTOLOAD_OFF_TEXT",),
    "_sources": ("SourceInfo", "current_load", "module_of"),
    "_table": ("Registration", "run_order"),
})
__all__ = _DOOR.names


def __getattr__(name: str) -> object:
    return _DOOR.open(name, globals())


def __dir__() -> list[str]:
    return list(__all__)
