"""Loading plugins into a registration table: a registry's sources, imported when their
kind is first used.

The loader keeps the sources (entry points, and lazy modules registered in code),
imports each under its package's import lock, applies what the import registered to
the :class:`~tilelang_hostcg._table.RegistrationTable` (attributed as
:mod:`._attribution` says) and takes all of it back when the import fails.

Recovery. ``refresh()`` bumps a generation; a load or a readiness mark of an older
generation is undone or dropped, so the next call loads again. ``RecursionError`` and
``MemoryError`` fail the current call only; ``KeyboardInterrupt`` and ``SystemExit``
propagate. Both leave the source to be retried.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Sequence
from typing import Any

from ._attribution import Load, begin_load, boundary, end_load, import_module, journal_of
from ._importlocks import acquire, import_lock, release
from ._names import CODEGEN_GROUP
from ._sources import Source, SourceInfo, parse_value
from ._table import NOUN, RegistrationTable
from ._targets import canonical_kind
from ._types import HostCodegen, HostCodegenHook, Origin
from .discovery import Controls, PlannedSource, planned_sources

__all__ = ["IndexLoader", "Loader"]

IndexLoader = Callable[[Controls], Sequence[PlannedSource]]
"""Reads the planned sources (entry points with their states) under the given controls."""

# Failures of the moment, not of the plugin: never remembered as "broken".
_TRANSIENT = (RecursionError, MemoryError)


class Loader:
    """The sources of one registry and their loading (guarded by the table's lock).

    ``owner`` is the registry loads fill: module-level functions called by a plugin
    while it loads act on it.
    """

    def __init__(self, table: RegistrationTable, owner: object, *, discover: bool,
                 controls: Controls | None, index_loader: IndexLoader | None) -> None:
        self.table = table
        self.owner_registry = owner
        self.lock = table.lock
        self.discover = discover
        self.controls_arg = controls
        self.index_loader = index_loader
        self.controls = controls if controls is not None else Controls()
        self.discovered = not discover
        self.generation = 0
        self.sources: dict[tuple[str, str], list[Source]] = {}
        self.ready: set[tuple[str, str]] = set()
        # Indexes kept in step with ``sources`` (so that loading is linear):
        self.by_module: dict[str, list[Source]] = {}
        self.kinds_of: dict[str, dict[tuple[str, str], Source]] = {}
        self.replayed: set[str] = set()  # modules whose journal is applied here

    # ------------------------------------------------------------ sources
    def _add(self, source: Source) -> None:
        self.sources.setdefault((source.group, source.kind), []).append(source)
        self.by_module.setdefault(source.module, []).append(source)
        dist = source.origin.distribution
        if dist is not None and not source.in_code:
            self.kinds_of.setdefault(dist, {}).setdefault((source.group, source.kind), source)

    def _remove(self, source: Source) -> None:
        key = (source.group, source.kind)
        self.sources[key] = [s for s in self.sources.get(key, ()) if s is not source]
        self.by_module[source.module] = [s for s in self.by_module.get(source.module, ())
                                         if s is not source]

    def is_current(self, source: Source) -> bool:
        """Whether ``source`` is still one of this loader's (no refresh() dropped it)."""
        # A Source compares by identity (no __eq__): ``in`` finds this very one.
        return source in self.sources.get((source.group, source.kind), ())

    def add_lazy(self, group: str, kind: str, import_path: str, load: Load | None) -> None:
        """A lazy module registered by ``register_lazy_host_codegen`` (or the hooks
        variant), in code (``load`` is ``None``) or by a plugin being loaded. In code it
        replaces the kind's previous lazy module, as in TileLang."""
        key = (group, canonical_kind(kind))
        with self.lock:
            sources = self.sources.get(key, [])
            if load is None:
                # One lazy module per kind registered in code: the new path replaces the
                # previous one (dropped if never imported; kept with what it registered if it was).
                same = None
                for old in list(sources):
                    if old.value == import_path and old.in_code and old.origin.distribution is None:
                        same = old
                    elif old.replaceable:
                        old.replaceable = False
                        if old.state in ("lazy", "broken"):
                            self._remove(old)
                if same is not None:
                    same.replaceable = True
                    self.ready.discard(key)
                    self.table.invalidate()
                    return
                origin = Origin(None, None, group, f"{kind} = {import_path}")
                source = Source(group, kind, import_path, origin, in_code=True)
                source.replaceable = True
            else:
                parent = load.source.origin
                if any(s.origin.distribution == parent.distribution and s.value == import_path
                       for s in sources):
                    return
                origin = Origin(parent.distribution, parent.version, group,
                                f"{kind} = {import_path}")
                source = Source(group, kind, import_path, origin, in_code=True)
                load.lazy.append(source)
            self._add(source)
            self.ready.discard(key)
            self.table.invalidate()

    def infos(self) -> list[SourceInfo]:
        """A snapshot of every source, by group and kind."""
        self.ensure_discovered()
        with self.lock:
            return [s.info() for key in sorted(self.sources) for s in self.sources[key]]

    def of_kind(self, group: str, kind: str) -> list[SourceInfo]:
        """Snapshots of the sources of one canonical kind."""
        with self.lock:
            return [s.info() for s in self.sources.get((group, kind), ())]

    def problems(self, group: str, kind: str) -> list[Source]:
        """Sources of the kind that failed (broken, incompatible, or transiently)."""
        return [s for s in self.sources.get((group, kind), ())
                if s.state in ("broken", "incompatible") or s.transient]

    # ------------------------------------------------------------ discovery
    def refresh(self) -> None:
        """Drop what came from distributions and re-read entry points at the next use."""
        with self.lock:
            self.table.drop_distributions()
            kept = [s for sources in self.sources.values() for s in sources
                    if s.origin.distribution is None]
            self.sources, self.by_module, self.kinds_of = {}, {}, {}
            for source in kept:
                if source.state == "broken" or source.transient:
                    source.state, source.error, source.warned = "lazy", None, False
                    source.transient = False
                self._add(source)
            self.ready.clear()
            self.replayed.clear()
            self.generation += 1
            self.table.invalidate()
            importlib.invalidate_caches()
            self.discovered = not self.discover

    def ensure_discovered(self) -> None:
        """Read the entry points (once, at first use)."""
        if self.discovered:
            return
        with self.lock:
            if self.discovered:
                return
            controls = self.controls_arg if self.controls_arg is not None else (
                Controls.from_environ())
            self.controls = controls
            loader = self.index_loader or planned_sources
            for planned in loader(controls):
                entry = planned.entry
                origin = Origin(entry.distribution, entry.version, entry.group, entry.spec)
                self._add(Source(entry.group, entry.name, entry.value, origin, planned.state,
                                 planned.reason, entry))
            self.ready.clear()
            self.table.invalidate()
            self.discovered = True

    # ------------------------------------------------------------ loading
    def ensure_loaded(self, group: str, kind: str) -> None:
        """Import the kind's lazy sources (each once, in any thread)."""
        key = (group, kind)
        if key in self.ready:
            return
        for _ in range(4):  # a refresh() meanwhile starts over (a few times at most)
            self.ensure_discovered()
            generation = self.generation
            skipped: set[Source] = set()  # a Source hashes by identity
            # Loop: a plugin may register more lazy modules for this kind while it loads.
            while pending := [s for s in self.sources.get(key, ())
                              if s.state in ("lazy", "loading") and s not in skipped]:
                for source in pending:
                    skipped.add(source)
                    lock = import_lock(source.module)
                    if not acquire(lock):
                        continue  # waiting would deadlock: use what is there
                    try:
                        if source.state == "lazy" and self.generation == generation:
                            self._load(source)
                    finally:
                        release(lock)
                if self.generation != generation:
                    break
            with self.lock:
                if self.generation != generation:
                    continue
                if not any(s.state == "loading" or s.transient
                           for s in self.sources.get(key, ())):
                    self.ready.add(key)
                return

    def load_all(self) -> None:
        """Import every lazy source now."""
        self.ensure_discovered()
        for group, kind in sorted(self.sources):
            self.ensure_loaded(group, kind)

    def _undo(self, load: Load) -> None:
        with self.lock:
            self.table.rollback(load.undo)
            for source in load.lazy:
                self._remove(source)

    def _load(self, source: Source) -> None:
        load = Load(self.owner_registry, source)
        source.state, source.error, source.transient = "loading", None, False
        begin_load(load)
        failure: Exception | None = None
        try:
            self._import_source(load)
            if load.stray:
                listed = ", ".join(f"{NOUN[group]} for kind {kind!r}" for group, kind in load.stray)
                raise LookupError(
                    f"importing it registered {listed}, which distribution "
                    f"{source.origin.distribution!r} does not advertise; a plugin registers only "
                    "for the kinds of its entry points: add an entry point for each kind it serves")
            if not load.registered:
                raise LookupError(
                    f"importing it registered no {NOUN[source.group]} for kind "
                    f"{source.advertised!r}, the kind its entry point advertises")
        except Exception as exc:
            failure = exc
        except BaseException:  # KeyboardInterrupt, SystemExit: propagate, retry next time
            self._undo(load)
            source.state = "lazy"
            raise
        finally:
            end_load(load)
        with self.lock:
            if not self.is_current(source):
                # refresh() dropped this source while it was being imported: its successor
                # loads again (replaying what the module registered).
                self._undo(load)
                source.state = "lazy"
            elif failure is None:
                source.state = "loaded"
                self.replayed.add(source.module)
            else:
                self._undo(load)
                source.error = failure
                if isinstance(failure, _TRANSIENT):  # a failure of the moment: retried next use
                    source.state, source.transient = "lazy", True
                else:
                    source.state = "broken"

    @boundary
    def _import_source(self, load: Load) -> None:
        source = load.source
        module_name, attr = parse_value(source.value)
        if module_name in self.replayed:
            # Another entry point of this module loaded here already: its registrations
            # are in place; count those made for this source's kind.
            journal = journal_of(module_name)
            for entry in journal.by_key.get((source.group, source.kind), ()) if journal else ():
                if self.owner(entry[0]) == module_name:
                    load.registered = True
                    break
            module = sys.modules.get(module_name)
            if module is None:
                module = import_module(module_name)
        else:
            module = import_module(module_name)
            journal = journal_of(module_name)
            if journal is not None:
                for chain, group, kind, made, override in list(journal.entries):
                    if self.owner(chain) == module_name:
                        self.admit(load, group, kind, made, override)
        if attr is None:
            return
        obj: Any = module
        for part in attr.split("."):
            obj = getattr(obj, part)
        expected = HostCodegen if source.group == CODEGEN_GROUP else HostCodegenHook
        if callable(obj) and not isinstance(obj, type):
            obj = obj()
        if isinstance(obj, expected):
            self.admit(load, source.group, source.advertised, obj, False)
            return
        items: Any = obj
        if isinstance(items, (str, bytes)) or not isinstance(items, Sequence) or not items or not all(
                isinstance(item, expected) for item in items):
            raise TypeError(
                f"{source.value!r} gave {type(obj).__name__} {obj!r:.80}; it must name a "
                f"{expected.__name__}, a non-empty sequence of them, or a zero-argument "
                "callable returning either")
        for item in items:
            self.admit(load, source.group, source.advertised, item, False)

    def owner(self, chain: tuple[str, ...]) -> str | None:
        """The module, nearest on ``chain``, that a source of this registry names."""
        by_module = self.by_module
        for name in chain:
            if by_module.get(name):
                return name
        return None

    def admit(self, load: Load, group: str, kind: str, obj: object, override: bool) -> None:
        """Apply one registration that belongs to ``load``'s source (or drop it where the
        distribution disabled that kind, or note it as stray)."""
        source = load.source
        canon = canonical_kind(kind)
        key = (group, canon)
        dist = source.origin.distribution
        origin = source.origin
        if dist is not None:
            kinds = self.kinds_of.get(dist)
            own = kinds.get(key) if kinds is not None else None
            if own is None:
                load.stray[key] = None
                return
            if own.state in ("disabled", "incompatible"):
                return  # TILELANG_HOSTCG_DISABLE=dist:kind drops it, and nothing else
            if own.module == source.module:
                origin = own.origin  # the entry point of this kind, whichever kind came first
        if key == (source.group, source.kind):
            load.registered = True
        if isinstance(obj, str):
            self.add_lazy(group, kind, obj, load)
            return
        assert isinstance(obj, (HostCodegen, HostCodegenHook))
        undo = self.table.apply_in_load(group, canon, kind, obj, override, origin)
        if undo is not None:
            load.undo.append(undo)

