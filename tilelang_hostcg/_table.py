"""The registration table: what is registered under each kind, with its lock. The registry
and the loader write only through its methods: apply (returning an :class:`Undo`), roll
back, drop what came from distributions, invalidate the resolution caches."""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ._errors import DuplicateRegistrationError
from ._names import CODEGEN_GROUP, HOOK_GROUP
from ._types import HostCodegen, HostCodegenHook, Origin

if TYPE_CHECKING:
    from collections.abc import Sequence

__all__ = ["NOUN", "Registration", "RegistrationTable", "Undo"]

NOUN = {CODEGEN_GROUP: "host codegen", HOOK_GROUP: "host codegen hook"}
"""What a registration of each group is called in messages."""


@dataclass(frozen=True, slots=True)
class Registration:
    """A codegen or hook registered under a kind, with its origin. ``seq`` is the registration
    order (an ``override`` registers anew, as in TileLang); ``default`` marks a client's own
    codegen (TileLang's), serving only when no other registration matches."""

    kind: str
    obj: HostCodegen | HostCodegenHook
    origin: Origin
    seq: int
    default: bool = False

    @property
    def name(self) -> str:
        """The codegen's or hook's name."""
        return self.obj.name

    @property
    def priority(self) -> int:
        """The codegen's or hook's priority."""
        return self.obj.priority


@dataclass(frozen=True, slots=True)
class Undo:
    """How to take back one change: remove ``new`` from the kind's ``group`` and put ``old`` back (if any)."""

    group: str
    kind: str
    old: Registration | None
    new: Registration


def _ordered(regs: list[Registration]) -> list[Registration]:
    """``regs`` by priority, then registration order (one appended to a sorted list sorts in linear time)."""
    regs.sort(key=lambda reg: (-reg.obj.priority, reg.seq))
    return regs


class RegistrationTable:
    """Registrations by canonical kind, in resolution order. ``lock`` (re-entrant) guards every
    change; a kind's list is replaced, never changed in place, and every change replaces the
    caches ``resolved`` and ``by_kind`` with new dicts, so readers keep a consistent view."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._seq = itertools.count()
        self._groups: dict[str, dict[str, list[Registration]]] = {
            CODEGEN_GROUP: {}, HOOK_GROUP: {}}
        self.resolved: dict[Any, HostCodegen] = {}
        self.by_kind: dict[str, HostCodegen] = {}

    def of(self, group: str, kind: str) -> Sequence[Registration]:
        """The registrations of ``group`` for canonical ``kind``, in order (a snapshot)."""
        return self._groups[group].get(kind, ())

    def all(self, group: str) -> list[Registration]:
        """Every registration of ``group``, by kind, each kind in order."""
        table = self._groups[group]
        with self.lock:
            return [r for key in sorted(table) for r in table[key]]

    def invalidate(self) -> None:
        """Forget every resolution cached so far."""
        self.resolved, self.by_kind = {}, {}

    def apply(self, group: str, canon: str, kind: str, obj: HostCodegen | HostCodegenHook,
              override: bool, origin: Origin, default: bool = False) -> Undo:
        """Add one registration, replacing one of the same name when ``override`` (else
        :class:`DuplicateRegistrationError`); returns how to undo it."""
        with self.lock:
            current = self.of(group, canon)
            old = next((r for r in current if r.obj.name == obj.name), None)
            return self._place(group, canon, kind, obj, override, origin, old, default)

    def apply_in_load(self, group: str, canon: str, kind: str,
                      obj: HostCodegen | HostCodegenHook, override: bool,
                      origin: Origin) -> Undo | None:
        """Apply a registration a plugin's load makes. The very object registered already
        is counted (``None``: nothing to undo) or, when it was registered in code (its
        module imported by hand), adopted by the plugin; else as :meth:`apply`."""
        with self.lock:
            current = self.of(group, canon)
            old = None
            for reg in current:
                if reg.obj is obj:
                    if reg.origin.distribution is None and origin.distribution is not None:
                        # Ordered as if registered now: the plugin's place in load order.
                        new = Registration(canon, obj, origin, next(self._seq))
                        self._groups[group][canon] = _ordered(
                            [new if r is reg else r for r in current])
                        self.invalidate()
                        # Undone, it goes: the plugin's failure takes its objects with it.
                        return Undo(group, canon, None, new)
                    return None
                if old is None and reg.obj.name == obj.name:
                    old = reg
            return self._place(group, canon, kind, obj, override, origin, old)

    def _place(self, group: str, canon: str, kind: str, obj: HostCodegen | HostCodegenHook,
               override: bool, origin: Origin, old: Registration | None,
               default: bool = False) -> Undo:
        if old is not None and not override:
            raise DuplicateRegistrationError(
                f"{NOUN[group].capitalize()} {obj.name!r} is already registered for "
                f"target kind {kind!r} ({old.origin.describe()}); pass override=True to "
                "replace it, or give the new one another name", kind=kind, name=obj.name)
        new = Registration(canon, obj, origin, next(self._seq), default)
        self._groups[group][canon] = _ordered(
            [*(r for r in self.of(group, canon) if r is not old), new])
        self.invalidate()
        return Undo(group, canon, old, new)

    def remove(self, group: str, canon: str, name: str) -> Registration | None:
        """Remove the registration called ``name``; returns it (``None``: there is none)."""
        with self.lock:
            regs = self.of(group, canon)
            gone = next((r for r in regs if r.obj.name == name), None)
            if gone is not None:
                self._groups[group][canon] = [r for r in regs if r is not gone]
                self.invalidate()
            return gone

    def rollback(self, undo: Sequence[Undo]) -> None:
        """Take back ``undo``'s changes, last first."""
        with self.lock:
            for item in reversed(undo):
                regs = [r for r in self.of(item.group, item.kind) if r is not item.new]
                if item.old is not None:  # put the overridden one back
                    regs.append(item.old)
                self._groups[item.group][item.kind] = _ordered(regs)
            self.invalidate()

    def drop_distributions(self) -> None:
        """Remove what entry points registered; registrations made in code (any ``origin=``) stay."""
        with self.lock:
            for table in self._groups.values():
                for kind, regs in list(table.items()):
                    table[kind] = [r for r in regs
                                   if r.origin.distribution is None or r.origin.group is None]
            self.invalidate()
