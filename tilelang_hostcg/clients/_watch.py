"""Builds seen to their end, and calls a route cannot serve. The compiler's own function that a build
of host code runs through (TileLang's lowering's ``host_codegen``, TVM's ``tvm.tirx.build``) is handed
on unchanged by a watch (:func:`watch_builds`) that, once the function has returned, knows which of
the client's routes that build called: the first build that completed without one is one warning
naming it, and ``is_installed()`` goes by that build from then on (:meth:`~._interface.Client.live`).
A route called with arguments it was not written for (:func:`hand_on`) gives the call to the
compiler's own function, with one warning naming it: the user's compile never fails for it. Nothing
here reads the compiler's code: what a build did decides. Cheap to import."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from ..core import (
    BypassedPluginWarning,
    UnservedArgumentsPluginWarning,
)
from ._interface import owner_of
from ._state import ClientState, Route

__all__ = ["hand_on", "watch_builds"]


def watch_builds(state: ClientState, owner: Any, name: str, *, client: str, compiler: str,
                 skip: Callable[[], bool] | None = None) -> Route | None:
    """Put a watch on ``owner.name`` (the compiler's function a build of host code runs through), a
    route that carries no build (:meth:`~._interface.Client.uninstall` puts the function back);
    ``skip``: builds the client hands to the compiler on purpose (nested, another client's). ``None``
    where the compiler has no such function: then only a route's call shows a build."""
    original = owner.__dict__.get(name) if isinstance(owner, type) else getattr(owner, name, None)
    if not callable(original):
        return None

    def watched(*args: Any, **kwargs: Any) -> Any:
        if not state.active or (skip is not None and skip()):
            return original(*args, **kwargs)
        state.begin_build()
        try:
            built = original(*args, **kwargs)
        except BaseException:
            state.end_build(completed=False)
            raise
        missed = state.end_build(completed=True)
        if missed and state.active:  # uninstalled meanwhile: the routes handed the build to the compiler
            _notice(state, missed, client, compiler)
        return built

    functools.update_wrapper(watched, original)  # its name and docstring; ``__wrapped__``: the compiler's
    route = Route(owner, name, original, watched, carries_builds=False)
    state.routes.append(route)
    setattr(owner, name, watched)
    return route


def hand_on(state: ClientState, route: Route, more: tuple[Any, ...], options: dict[str, Any], *,
            client: str, compiler: str) -> None:
    """``route`` was called with ``more`` arguments by position and ``options`` by keyword beyond what
    it serves: the build reached it (so no second warning), the caller gives the call to the
    compiler's own function, and one warning (per install and arguments) names the point."""
    extra = [f"{len(more)} more positional argument{'s' if len(more) > 1 else ''}"] if more else []
    extra += [f"{key}=" for key in sorted(options)]
    what = ", ".join(extra)
    state.called(route, unserved=what)
    point = route.path()
    if f"{point}({what})" in state.noticed or state.probing:
        return
    state.noticed.add(f"{point}({what})")
    from ..diagnosis import Finding, warn  # a finding's words: only where one is given
    warn(Finding.of(UnservedArgumentsPluginWarning, client, client=client, point=point, arguments=what,
                    compiler=compiler, function=route.name), shown=True)


def _notice(state: ClientState, missed: list[Route], client: str, compiler: str) -> None:
    """A build completed without calling ``missed``: one warning for the points not warned of yet."""
    new = [route for route in missed if route.path() not in state.noticed]
    if not new or state.probing:
        return
    state.noticed.update(route.path() for route in new)
    from ..diagnosis import Finding, held_by, warn  # a finding's words: only where one is given
    holders = {route.path(): None if route.current() is route.ours else owner_of(route.current()) for route in new}
    points = " or ".join(held_by(path, holder, compiler) for path, holder in holders.items())
    held = None if all(holder is None for holder in holders.values()) else "another package"
    warn(Finding.of(BypassedPluginWarning, client, client=client, compiler=compiler, points=points, held=held),
         shown=True)
