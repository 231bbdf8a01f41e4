"""Loading plugins: a registry's sources, imported when their kind is first used. A failed load, or one a
``refresh()`` overtook, is taken back whole; only ``KeyboardInterrupt`` propagates (the source is retried)."""

from __future__ import annotations

import importlib
import sys
import threading
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..core import CODE_ORIGIN, CODEGEN_GROUP, HostCodegen, HostCodegenHook, Origin, SourceState
from ..discovery import Controls, PlannedSource, planned_sources
from ..environment import canonical_kind, is_initializing
from ._sources import Load, Source, SourceInfo, current, current_load, ends_import_chains, journal, write_journal
from ._table import NOUN

if TYPE_CHECKING:
    from ._registry import Registry
    from ._table import Registration, RegistrationTable

IndexLoader = Callable[[Controls], Sequence[PlannedSource]]  # the planned sources, by controls
Watch = Callable[[Origin], AbstractContextManager[object]]  # around each entry point's import

_TRANSIENT = (RecursionError, MemoryError)  # failures of the moment, never "broken"


def _import(name: str) -> Any:
    """Import ``name`` as the import statement does (a cross-thread import cycle gives a partial module)."""
    __import__(name)
    return sys.modules[name]


def _initializing(name: str) -> bool:
    """Whether the module ``name`` is imported and still running its top-level code."""
    module = sys.modules.get(name)
    return module is not None and is_initializing(module)


@dataclass(frozen=True, slots=True)
class Settled:
    """A kind as loaded in one generation: registrations, failed and disabled sources, controls."""

    registrations: Sequence[Registration]
    problems: list[Source]
    disabled: list[SourceInfo]
    controls: Controls


class Loader:
    """The sources of one registry and their loading, guarded by the table's lock."""

    def __init__(self, table: RegistrationTable, registry: Registry, *, discover: bool, controls: Controls | None,
                 index_loader: IndexLoader | None, watch: Watch | None = None) -> None:
        self.table, self.lock, self.registry, self.watch = table, table.lock, registry, watch
        self.changed = threading.Condition(table.lock)
        self.discover, self.controls_arg = discover, controls
        self.index_loader = index_loader or planned_sources
        self.controls = controls if controls is not None else Controls()
        self.discovered = not discover
        self.generation = 0
        self.sources: dict[tuple[str, str], list[Source]] = {}
        self.ready: set[tuple[str, str]] = set()
        self.by_module: dict[str, int] = {}  # how many sources name each module
        self.kinds_of: dict[str, dict[tuple[str, str], Source]] = {}  # advertised, by dist

    def _add(self, source: Source) -> None:
        self.sources.setdefault((source.group, source.kind), []).append(source)
        self.by_module[source.module] = self.by_module.get(source.module, 0) + 1
        dist = source.origin.distribution
        if dist is not None and not source.in_code:
            self.kinds_of.setdefault(dist, {}).setdefault((source.group, source.kind), source)

    def _remove(self, source: Source) -> None:
        key = (source.group, source.kind)
        self.sources[key] = [s for s in self.sources.get(key, ()) if s is not source]
        self.by_module[source.module] -= 1

    def add_lazy(self, group: str, kind: str, path: str, load: Load | None) -> None:
        """A lazy module: in code (``load`` ``None``) it replaces the kind's previous one; else the loading plugin's."""
        key = (group, canonical_kind(kind))
        with self.lock:
            sources = self.sources.get(key, [])
            if load is None:
                same = None
                for old in list(sources):
                    if old.value == path and old.in_code and old.origin.distribution is None:
                        same = old
                    elif old.replaceable:
                        old.replaceable = False
                        if old.state in (SourceState.LAZY, SourceState.BROKEN):  # never imported: dropped
                            self._remove(old)
                source = same or Source(group, kind, path, Origin(None, None, group, f"{kind} = {path}"), in_code=True)
                source.replaceable = True
            else:
                parent = load.source.origin
                if any(s.origin.distribution == parent.distribution and s.value == path for s in sources):
                    return
                source = Source(group, kind, path, Origin(parent.distribution, parent.version, group,
                                                          f"{kind} = {path}"), in_code=True)
                load.lazy.append(source)
                same = None
            if same is None:
                self._add(source)
            self.ready.discard(key)
            self.table.invalidate()

    def infos(self) -> list[SourceInfo]:
        self.ensure_discovered()
        with self.lock:
            return [s.info() for key in sorted(self.sources) for s in self.sources[key]]

    def refresh(self) -> None:
        """Drop what came from distributions and re-read entry points at the next use."""
        with self.lock:
            self.table.drop_distributions()
            kept = [s for sources in self.sources.values() for s in sources if s.origin.distribution is None]
            self.sources, self.by_module, self.kinds_of = {}, {}, {}
            for source in kept:
                if source.state == SourceState.BROKEN or source.transient:
                    source.state, source.error, source.warned, source.transient = SourceState.LAZY, None, False, False
                self._add(source)
            self.ready.clear()
            self.generation += 1
            self.table.invalidate()
            importlib.invalidate_caches()
            self.discovered = not self.discover
            self.changed.notify_all()

    def ensure_discovered(self) -> None:
        if self.discovered:
            return
        with self.lock:
            if self.discovered:
                return
            self.controls = self.controls_arg or Controls.from_environ()
            for planned in self.index_loader(self.controls):
                entry = planned.entry
                origin = Origin(entry.distribution, entry.version, entry.group, entry.spec)
                self._add(Source(entry.group, entry.name, entry.value, origin, planned.state, planned.reason, entry))
            self.ready.clear()
            self.table.invalidate()
            self.discovered = True

    def ensure_loaded(self, group: str, kind: str) -> int:
        """Load the kind's lazy sources (each once, in any thread); returns the generation."""
        key = (group, kind)
        while True:
            with self.lock:  # one refresh() or none: its generation with its ready set
                generation = self.generation
                if key in self.ready:
                    return generation
            self.ensure_discovered()
            done: set[Source] = set()  # a plugin may add lazy modules for the kind as it loads
            while self.generation == generation and (pending := [
                    s for s in self.sources.get(key, ())
                    if s not in done and s.state in (SourceState.LAZY, SourceState.LOADING)]):
                for source in pending:
                    done.add(source)
                    self._load_or_wait(source, generation)
            with self.lock:
                if self.generation != generation or not self.discovered:
                    continue  # a refresh() overtook the load: load again
                if not any(s.state == SourceState.LOADING or s.transient for s in self.sources.get(key, ())):
                    self.ready.add(key)
                return generation

    def settled(self, group: str, kind: str) -> Settled:
        """What the kind's resolution reads, loaded and read in one generation."""
        while True:
            generation = self.ensure_loaded(group, kind)
            with self.lock:
                if generation == self.generation:
                    sources = self.sources.get((group, kind), ())
                    problems = [s for s in sources if s.state.failed or s.transient]
                    return Settled(self.table.of(group, kind), problems,
                                   [s.info() for s in sources if s.state == SourceState.DISABLED], self.controls)

    def load_all(self) -> None:
        self.ensure_discovered()
        for group, kind in sorted(self.sources):
            self.ensure_loaded(group, kind)

    def _load_or_wait(self, source: Source, generation: int) -> None:
        with self.lock:
            mine = source.state == SourceState.LAZY and self.generation == generation
            if mine:
                source.load = Load(self, source, generation)
                source.state, source.error, source.transient = SourceState.LOADING, None, False
            load = source.load
        if not isinstance(load, Load):
            return
        if mine:
            return self._load(load)
        if load.thread is threading.current_thread():
            return  # re-entrant (the plugin resolving while it is imported): use what is there
        while source.state == SourceState.LOADING and self.generation == generation:
            if _initializing(source.module):
                _import(source.module)  # wait for that import (cycles come back at once)
                if _initializing(source.module):
                    return  # a cross-thread import cycle: use what is there
            with self.lock:
                if source.state == SourceState.LOADING and self.generation == generation:
                    self.changed.wait(0.05)

    def _load(self, load: Load) -> None:
        source = load.source
        with current(load):
            try:
                with self.watch(source.origin) if self.watch is not None else nullcontext():
                    self._import_source(load)
                if load.stray:
                    listed = ", ".join(f"{NOUN[g]} for kind {k!r}" for g, k in load.stray)
                    raise LookupError(
                        f"importing it registered {listed}, which distribution {source.origin.distribution!r} "
                        "does not advertise; a plugin registers only for the kinds of its entry points: add an "
                        "entry point for each kind it serves")
                if not load.registered:
                    raise LookupError(
                        f"importing it registered no {NOUN[source.group]} for kind {source.advertised!r}, the "
                        "kind its entry point advertises (what other threads register, even one it starts, is "
                        "the program's: register from the importing thread)")
            except KeyboardInterrupt:  # the user's: it propagates, and the source is retried
                self._finish(load, SourceState.LAZY, None)
                raise
            except BaseException as exc:  # SystemExit, GeneratorExit, CancelledError too: the plugin's
                self._finish(load, SourceState.LAZY if isinstance(exc, _TRANSIENT) else SourceState.BROKEN, exc)
            else:
                self._finish(load, SourceState.LOADED, None)

    def _finish(self, load: Load, state: SourceState, failure: BaseException | None) -> None:
        source = load.source
        with self.lock:
            current = source in self.sources.get((source.group, source.kind), ())
            if state != SourceState.LOADED or not current:  # failed, or dropped by refresh(): undo
                self.table.rollback(load.undo, restore_plugins=current)
                for lazy in load.lazy:
                    self._remove(lazy)
            source.state = state if current else SourceState.LAZY
            source.error, source.transient = failure, failure is not None and state == SourceState.LAZY
            source.load = None
            self.changed.notify_all()

    def _import_source(self, load: Load) -> None:
        from importlib.metadata import EntryPoint
        source = load.source
        match = EntryPoint.pattern.match(source.value)
        if match is None:
            raise ValueError(f"entry point value {source.value!r} is not 'module' or 'module:attr' (optionally "
                             "followed by [extras])")
        name, attr = match.group("module"), match.group("attr")
        module = _import(name)
        # What the module's top-level code registered (also when imported before, elsewhere).
        for chain, group, kind, made, override in journal(name):
            if self.owner(chain) == name:
                self.admit(load, group, kind, made, override)
        if attr is None:
            return
        obj: Any = module
        for part in attr.split("."):
            obj = getattr(obj, part)
        expected = HostCodegen if source.group == CODEGEN_GROUP else HostCodegenHook
        if callable(obj) and not isinstance(obj, type):
            obj = obj()
        items: Any = [obj] if isinstance(obj, expected) else obj
        if isinstance(items, (str, bytes)) or not isinstance(items, Sequence) or not items or not all(
                isinstance(item, expected) for item in items):
            raise TypeError(f"{source.value!r} gave {type(obj).__name__} {obj!r:.80}; it must name a "
                            f"{expected.__name__}, a non-empty sequence of them, or a zero-argument callable "
                            "returning either")
        for item in items:
            self.admit(load, source.group, source.advertised, item, False)

    def owner(self, chain: tuple[str, ...]) -> str | None:
        """The module, nearest on ``chain``, that a source of this registry names."""
        return next((name for name in chain if self.by_module.get(name)), None)

    def register(self, group: str, kind: str, obj: HostCodegen | HostCodegenHook | str, override: bool,
                 default: bool = False) -> None:
        """A registration made by code (``obj`` a path: a lazy module), journaled and applied or sent to its load."""
        chain = write_journal(group, kind, obj, override)
        load = current_load()
        if load is not None and load.loader is self:
            owner = self.owner(chain)
            if owner is None or owner == load.source.module:
                self.admit(load, group, kind, obj, override)
            # Else it is another entry point's module's: that one replays it from the journal.
        elif isinstance(obj, str):
            self.add_lazy(group, kind, obj, None)
        else:
            self.table.apply(group, canonical_kind(kind), kind, obj, override, CODE_ORIGIN, default)

    def admit(self, load: Load, group: str, kind: str, obj: object, override: bool) -> None:
        """Apply one registration of ``load``'s source (dropped where disabled; stray where not advertised)."""
        source, canon = load.source, canonical_kind(kind)
        key, origin = (group, canon), source.origin
        if origin.distribution is not None:
            own = self.kinds_of.get(origin.distribution, {}).get(key)
            if own is None:
                load.stray[key] = None
                return
            if own.state.skipped:
                return  # TILELANG_HOSTCG_DISABLE=dist:kind drops it, and nothing else
            if own.module == source.module:
                origin = own.origin  # the entry point of this kind, whichever kind came first
        if key == (source.group, source.kind):
            load.registered = True
        with self.lock:
            if load.generation != self.generation:
                return  # a refresh() overtook the load: it is undone and loaded again
            if isinstance(obj, str):
                self.add_lazy(group, kind, obj, load)
                return
            assert isinstance(obj, (HostCodegen, HostCodegenHook))
            undo = self.table.apply_in_load(group, canon, kind, obj, override, origin)
            if undo is not None:
                load.undo.append(undo)


ends_import_chains(Loader._import_source.__code__)  # what runs inside a load belongs to it
