# isort: skip_file
"""Discovery: installed metadata and the ``TILELANG_HOSTCG_*`` controls -> planned sources, in one
``importlib.metadata`` scan (no cache) that imports nothing of the registry.
Imports only :mod:`..core` and :mod:`..environment`.

Its front door: the names below are what other layers may use, each loaded from its module on
first access; no module outside this folder imports one of its private modules."""

from __future__ import annotations

from ..core import FrontDoor

# Not ``typing.TYPE_CHECKING``: the door stays as cheap as the modules it opens. Type checkers read it as True.
TYPE_CHECKING = False
if TYPE_CHECKING:  # explicit re-exports, for type checkers
    from ._controls import (
        ControlProblem as ControlProblem,
        Controls as Controls,
        ENV_AUTOLOAD_OFF as ENV_AUTOLOAD_OFF,
        ENV_DISABLE as ENV_DISABLE,
        ENV_ONLY as ENV_ONLY,
        ENV_PREFER as ENV_PREFER,
        ENV_PROBE_TIMEOUT as ENV_PROBE_TIMEOUT,
        PREFIX as PREFIX,
        PROBE_TIMEOUT_DEFAULT as PROBE_TIMEOUT_DEFAULT,
        auto_install_problem as auto_install_problem,
        closest as closest,
        is_utf8_text as is_utf8_text,
        probe_timeout_error as probe_timeout_error,
        warn_control_problems as warn_control_problems,
    )
    from ._planning import (
        AdvertisedEntryPoint as AdvertisedEntryPoint,
        DiscoveryIndex as DiscoveryIndex,
        PlannedSource as PlannedSource,
        declaration_problems as declaration_problems,
        discover as discover,
        plan_sources as plan_sources,
        planned_sources as planned_sources,
        third_party_planned as third_party_planned,
    )

_DOOR = FrontDoor(__name__, {
    "_controls": ("ControlProblem", "Controls", "ENV_AUTOLOAD_OFF", "ENV_DISABLE", "ENV_ONLY", "ENV_PREFER",
                  "ENV_PROBE_TIMEOUT", "PREFIX", "PROBE_TIMEOUT_DEFAULT", "auto_install_problem", "closest",
                  "is_utf8_text", "probe_timeout_error", "warn_control_problems"),
    "_planning": ("AdvertisedEntryPoint", "DiscoveryIndex", "PlannedSource", "declaration_problems", "discover",
                  "plan_sources", "planned_sources", "third_party_planned"),
})
__all__ = _DOOR.names


def __getattr__(name: str) -> object:
    return _DOOR.open(name, globals())


def __dir__() -> list[str]:
    return list(__all__)
