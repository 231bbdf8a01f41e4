"""This process's use of the native API: whether a third-party plugin can be in play (the gate every
plan passes, and what reports say), and the builds made through plans (what "confirmed by a build"
and a probe build read). Cheap to import: reports read it."""

from __future__ import annotations

import os
import sys
import threading
from typing import TYPE_CHECKING, Any

from _tilelang_hostcg_switch import activation_off

from ..core import CODEGEN_GROUP, HOOK_GROUP, HostCodegen, is_core

if TYPE_CHECKING:
    from ..registry import Registry


class NativeUse:
    """This process's use of the native API: whether a third-party plugin the controls keep is
    installed (read once), and the calls made (by the ``client`` name given), which reports read."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._planned: bool | None = None
        self._off: bool | None = None
        self._calls: dict[str, int] = {}
        self._defaults: dict[str, HostCodegen] = {}

    def off(self) -> bool:
        """Whether the off switch (``TILELANG_HOSTCG_AUTO_INSTALL=0``) is set: read once, as the controls are."""
        if self._off is None:
            self._off = activation_off(os.environ)
        return self._off

    def default_codegen(self, name: str) -> HostCodegen:
        """The stand-in a resolution judges for a compiler's own codegen called ``name`` (one per name; it
        is never built with: a plan calls the compiler's own object)."""
        held = self._defaults.get(name)
        if held is None:
            held = self._defaults.setdefault(name, HostCodegen(name, _stand_in))
        return held

    def count(self, client: str) -> None:
        """One build (or hook pass) of ``client`` went through a plan."""
        self._calls[client] = self._calls.get(client, 0) + 1

    def calls(self) -> dict[str, int]:
        """The calls made so far, by client name."""
        return dict(self._calls)

    def total(self) -> int:
        """The calls made so far, all clients together."""
        return sum(self._calls.values())

    def planned(self) -> bool:
        """Whether a third-party distribution advertises entry points the controls keep (read once)."""
        if self._planned is None:
            with self._lock:
                if self._planned is None:
                    from ..discovery import Controls, third_party_planned
                    self._planned = third_party_planned(Controls.from_environ())
        return self._planned

    def registry(self) -> Registry | None:
        """The registry a plan asks, or ``None`` where the compiler's own decide alone: the off switch, or
        no third-party plugin the controls keep and no registry made by the program. (A registry made
        with nothing third-party in it plans the same as none: its core codegens never serve a plan.)"""
        if self.off():
            return None
        api = sys.modules.get("tilelang_hostcg._api")  # not imported here: without a plugin, no registry is
        made = api.made_default_registry() if api is not None else None
        if made is not None:
            return made  # type: ignore[no-any-return]
        if not self.planned():
            return None
        from .. import default_registry
        return default_registry()

    def third_party(self) -> bool:
        """Whether a plan can run anything third-party: a plugin the controls keep, or a codegen, hook or
        lazy module the program registered in code (what reports say, by the rule plans follow)."""
        if self.off():
            return False
        if self.planned():
            return True
        api = sys.modules.get("tilelang_hostcg._api")
        made = api.made_default_registry() if api is not None else None
        return made is not None and bool(third_party_kinds(made))


def _stand_in(mod: Any, target_host: Any) -> Any:
    raise AssertionError("a compiler's own codegen is called by its plan, never through its stand-in")


NATIVE = NativeUse()


def third_party_kinds(registry: Registry) -> set[tuple[str, str]]:
    """The (group, kind) pairs that a source or registration other than the core's and the clients'
    defaults serves (read without loading a plugin)."""
    def third_party(distribution: str | None) -> bool:
        return not is_core(distribution)

    kinds = {(s.group, s.kind) for s in registry.sources() if third_party(s.origin.distribution)}
    kinds |= {(group, r.kind) for group in (CODEGEN_GROUP, HOOK_GROUP) for r in registry.registrations(group)
              if not r.default and third_party(r.origin.distribution)}
    return kinds
