# isort: skip_file
"""What every compiler client shares: the :class:`._interface.Client` interface and the one routing
answer, and a client's routes (:mod:`._routes`: the integration points checked by shape, what an
install did and the watch on its builds). The
clients themselves are :mod:`tilelang_hostcg.tilelang` and :mod:`tilelang_hostcg.tvm`.

Its front door: the names below are what other layers may use, each loaded from its module on
first access; no module outside this folder imports one of its private modules."""

from __future__ import annotations

from ..core import FrontDoor

# Not ``typing.TYPE_CHECKING``: the door stays as cheap as the modules it opens. Type checkers read it as True.
TYPE_CHECKING = False
if TYPE_CHECKING:  # explicit re-exports, for type checkers
    from ._interface import (
        Client as Client,
        Native as Native,
        remove_defaults as remove_defaults,
        routing as routing,
        tilelang_takes_builds as tilelang_takes_builds,
    )
    from ._native import fingerprint as fingerprint, plan as plan
    from ._native_state import NATIVE as NATIVE
    from ._plan import HostPlan as HostPlan, call_apply as call_apply, make_plan as make_plan
    from ._probe import (
        ENDED as ENDED,
        GARBLED as GARBLED,
        PRINTED as PRINTED,
        Probe as Probe,
        ProbeFailure as ProbeFailure,
        RAISED as RAISED,
        Running as Running,
        TIMED_OUT as TIMED_OUT,
        error_line as error_line,
        probe as probe,
        takes_probe as takes_probe,
    )
    from ._routes import (
        ClientState as ClientState,
        Point as Point,
        Route as Route,
        hand_on as hand_on,
        owner_of as owner_of,
        watch_builds as watch_builds,
    )

_DOOR = FrontDoor(__name__, {
    "_interface": ("Client", "Native", "remove_defaults", "routing", "tilelang_takes_builds"),
    "_native": ("fingerprint", "plan"),
    "_native_state": ("NATIVE",),
    "_plan": ("HostPlan", "call_apply", "make_plan"),
    "_probe": ("ENDED", "GARBLED", "PRINTED", "Probe", "ProbeFailure", "RAISED", "Running", "TIMED_OUT", "error_line",
               "probe", "takes_probe"),
    "_routes": ("ClientState", "Point", "Route", "hand_on", "owner_of", "watch_builds"),
})
__all__ = _DOOR.names


def __getattr__(name: str) -> object:
    return _DOOR.open(name, globals())


def __dir__() -> list[str]:
    return list(__all__)
