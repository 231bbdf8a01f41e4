"""Whether this process's compiler builds host code through the registry, and if not, why:
:func:`routing`, the one answer activation, ``is_installed()`` and the command line's ``client``
give, asked of a :class:`~._interface.Client`. Cheap to import."""

from __future__ import annotations

import os
import sys
from typing import NamedTuple

from _tilelang_hostcg_switch import ENV_AUTO_INSTALL, activation_off

from ._interface import Client, ClientName, Liveness, Native

NO_PLUGIN = ("no third-party plugin is installed (or the controls skip them all): the compiler runs stock; "
             "tilelang_hostcg.build() uses the core's codegens")


class Routing(NamedTuple):
    """``routed`` (``None``: not known yet — nothing imported), ``reason``, ``blocker`` (what keeps an
    installed plugin from being used; not the user's switch), ``pending`` (activation installs);
    ``by_build``: ``routed`` is what the last build did (else what can be known before one)."""

    client: ClientName
    routed: bool | None
    reason: str
    blocker: str | None = None
    pending: bool = False
    by_build: bool = False


def routing(client: Client, *, import_it: bool = True, activating: bool = False) -> Routing:
    """Whether ``client``'s host builds go through the registry in this process, and if not, why.
    ``import_it=False`` imports no compiler (``routed=None`` where one is needed); ``activating``:
    activation asks (an earlier activation's failure is no answer)."""
    name = client.name
    live = client.live()
    if live.native is not None:
        return _native(client, live.native)
    aside = client.stands_aside()
    if live.installed and aside is None:
        if live.routed:
            return Routing(name, True, client.title, by_build=live.by_build)
        if live.unused is not None:
            unused = _unused(live, client.compiler)
            return Routing(name, False, unused, unused, by_build=True)
        replaced = f"another package replaced the route ({live.who}) and does not call it"
        return Routing(name, False, replaced, replaced)
    if not activating and activation_off(os.environ):
        return Routing(name, False, f"activation is off ({ENV_AUTO_INSTALL}=0)")
    from ..discovery import Controls, third_party_planned
    if not third_party_planned(Controls.from_environ()):
        return Routing(name, False, NO_PLUGIN)
    if aside is not None:
        return Routing(name, False, aside)
    switched = client.compiler_switch()
    if switched is not None:
        return Routing(name, False, switched)
    if name not in sys.modules and not import_it:
        return Routing(name, None, f"`import {name}` turns it on, as a third-party plugin is installed; "
                                   "`list --load` says for sure")
    why = client.blocker()
    if why is None and not activating:
        why = client.activation_warning
    if why is not None:
        return Routing(name, False, why, why)
    return Routing(name, False, f"not installed in this process (activation did not run at import of "
                                f"{client.compiler}, or uninstall() was called); call "
                                f"tilelang_hostcg.{name}.install()", pending=True)


def _unused(live: Liveness, compiler: str) -> str:
    """Why the last build did not use the route ``live.unused``: arguments it was not written for,
    another package holding it, or the compiler's code that no longer reaches it."""
    if live.unserved is not None:
        return (f"the last build called the route {live.unused} with {live.unserved}, which it was not written "
                f"for: {compiler}'s own function served it, so plugins are not used")
    if live.who is not None:
        return (f"the last build did not call the route {live.unused}: {live.who} holds it and does not call it, "
                "so plugins are not used")
    return (f"the last build did not call the route {live.unused}: {compiler}'s code no longer reaches it, so "
            "plugins are not used")


def _native(client: Client, native: Native) -> Routing:
    """The answer for a compiler that calls the registry itself: nothing to install; routed where its
    plans can run something third-party (the rule :mod:`._native` plans by)."""
    described = native.describe(client.compiler)
    problem = native.problem()
    if problem is not None:
        return Routing(client.name, False, problem, problem)
    stock = native.stock_reason()
    if stock is not None:
        return Routing(client.name, False, f"{described}; {stock}")
    return Routing(client.name, True, described)
