"""The registration table: registrations by kind, with its lock and the resolution caches."""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core import CODEGEN_GROUP, HOOK_GROUP, DuplicateRegistrationError, HostCodegen, HostCodegenHook, Origin

if TYPE_CHECKING:
    from collections.abc import Sequence

NOUN = {CODEGEN_GROUP: "host codegen", HOOK_GROUP: "host codegen hook"}  # in messages


def run_order(priority: int, seq: int) -> tuple[int, int]:
    """Where a registration stands among its kind's: the highest priority first, then the first registered."""
    return -priority, seq


@dataclass(frozen=True, slots=True)
class Registration:
    """A codegen or hook registered under a kind (``default``: a client's own, registered for its builds: a
    codegen serves only when no other matches; a client bringing its own leaves it out)."""

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
    """How to take back one change: remove ``new`` from the kind and put ``old`` back (if any)."""

    group: str
    kind: str
    old: Registration | None
    new: Registration


@dataclass(slots=True)
class _Kind:
    """One kind's registrations by name, and the ordered view (``None`` until the next read after a change)."""

    by_name: dict[str, Registration] = field(default_factory=dict)
    ordered: tuple[Registration, ...] | None = ()

    def put(self, reg: Registration) -> None:
        self.by_name[reg.obj.name] = reg
        self.ordered = None

    def take(self, reg: Registration) -> None:
        if self.by_name.get(reg.obj.name) is reg:
            del self.by_name[reg.obj.name]
            self.ordered = None


class RegistrationTable:
    """Registrations by canonical kind in resolution order; a change replaces, never mutates, what readers see."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self._seq = itertools.count()
        self._groups: dict[str, dict[str, _Kind]] = {CODEGEN_GROUP: {}, HOOK_GROUP: {}}
        self.resolved: dict[Any, HostCodegen] = {}
        self.by_kind: dict[str, HostCodegen] = {}
        self.clients: dict[Any, Any] = {}  # the answers for clients that bring their own, by kind

    def _kind(self, group: str, kind: str) -> _Kind:
        return self._groups[group].setdefault(kind, _Kind())

    def of(self, group: str, kind: str) -> Sequence[Registration]:
        """The registrations of ``group`` for canonical ``kind``, in order (a snapshot)."""
        entry = self._groups[group].get(kind)
        if entry is None:
            return ()
        ordered = entry.ordered
        if ordered is None:
            with self.lock:
                ordered = entry.ordered
                if ordered is None:
                    ordered = entry.ordered = tuple(sorted(entry.by_name.values(),
                                                                 key=lambda r: run_order(r.priority, r.seq)))
        return ordered

    def all(self, group: str) -> list[Registration]:
        with self.lock:
            return [r for key in sorted(self._groups[group]) for r in self.of(group, key)]

    def invalidate(self) -> None:
        self.resolved, self.by_kind, self.clients = {}, {}, {}

    def apply(self, group: str, canon: str, kind: str, obj: HostCodegen | HostCodegenHook,
              override: bool, origin: Origin, default: bool = False) -> Undo:
        """Add one registration (a same name raises unless ``override``); returns how to undo it."""
        with self.lock:
            old = self._kind(group, canon).by_name.get(obj.name)
            return self._place(group, canon, kind, obj, override, origin, old, default)

    def apply_in_load(self, group: str, canon: str, kind: str, obj: HostCodegen | HostCodegenHook,
                      override: bool, origin: Origin) -> Undo | None:
        """:meth:`apply` for a plugin's load; the very object registered already is kept or adopted."""
        with self.lock:
            entry = self._kind(group, canon)
            old = entry.by_name.get(obj.name)
            if old is not None and old.obj is obj:
                if old.origin.distribution is None and origin.distribution is not None:
                    # Placed as if registered now; undone, it goes with the plugin's failure.
                    new = Registration(canon, obj, origin, next(self._seq))
                    entry.put(new)
                    self.invalidate()
                    return Undo(group, canon, None, new)
                return None
            return self._place(group, canon, kind, obj, override, origin, old)

    def _place(self, group: str, canon: str, kind: str, obj: HostCodegen | HostCodegenHook,
               override: bool, origin: Origin, old: Registration | None, default: bool = False) -> Undo:
        if old is not None and not override:
            raise DuplicateRegistrationError(
                f"{NOUN[group].capitalize()} {obj.name!r} is already registered for "
                f"target kind {kind!r} ({old.origin.describe()}); pass override=True to "
                "replace it, or give the new one another name", kind=kind, name=obj.name,
                existing=old.origin)
        new = Registration(canon, obj, origin, next(self._seq), default)
        self._kind(group, canon).put(new)  # replaces ``old``, of the same name
        self.invalidate()
        return Undo(group, canon, old, new)

    def remove(self, group: str, canon: str, name: str) -> Registration | None:
        """Remove the registration called ``name``; returns it (``None``: there is none)."""
        with self.lock:
            entry = self._groups[group].get(canon)
            gone = entry.by_name.get(name) if entry is not None else None
            if entry is not None and gone is not None:
                entry.take(gone)
                self.invalidate()
            return gone

    def rollback(self, undo: Sequence[Undo], *, restore_plugins: bool = True) -> None:
        """Take back ``undo``'s changes, last first (``restore_plugins=False``: only code's overridden ones)."""
        with self.lock:
            for item in reversed(undo):
                entry = self._kind(item.group, item.kind)
                entry.take(item.new)
                if item.old is not None and (restore_plugins or item.old.origin.in_code):
                    entry.put(item.old)
            self.invalidate()

    def drop_distributions(self) -> None:
        """Remove what entry points registered; registrations made in code stay."""
        with self.lock:
            for table in self._groups.values():
                for entry in table.values():
                    for reg in [r for r in entry.by_name.values() if not r.origin.in_code]:
                        entry.take(reg)
            self.invalidate()
