"""Loading plugins into a registry: sources, import locks, module journals, attribution
and recovery.

A *source* is one lazy module or ``module:attr`` (an entry point, or a lazy module
registered in code). :class:`Loader` keeps a registry's sources and imports them
when their kind is first used; the :class:`~tilelang_hostcg.Registry` only registers
and resolves.

Attribution. Every registration made while a module's top-level code runs is written
to that module's *journal* (and to the journals of the modules importing it, up to the
loader), whoever triggered the import: the loader, another plugin, or the user. A
registration belongs to the nearest module on that chain that some entry point names;
a source gets the registrations its own module made, replayed from the journal when
the module was already imported. So the answers never depend on who imported a
module first, or on which kind was used first.

Recovery. ``refresh()`` bumps a generation; a load or a readiness mark of an older
generation is undone or dropped, so the next call loads again. ``RecursionError`` and
``MemoryError`` fail the current call only; ``KeyboardInterrupt`` and ``SystemExit``
propagate. Both leave the source to be retried.
"""

from __future__ import annotations

import _thread
import importlib
import re
import sys
import threading
import weakref
from collections.abc import Callable, Sequence

from ._discovery import AdvertisedEntryPoint, Controls, PlannedSource
from ._targets import canonical_kind
from ._types import CODEGEN_GROUP, HOOK_GROUP, HostCodegen, Origin, Record, hook_type, init_fields

TYPE_CHECKING = False  # typing costs import time on the first-use path; checkers read True
if TYPE_CHECKING:
    from typing import Any

    from ._registry import Registry

__all__ = ["ACTIVE", "LOCAL", "Loader", "SourceInfo", "current_load", "import_chain", "parse_value",
           "record"]

NOUN = {CODEGEN_GROUP: "host codegen", HOOK_GROUP: "host codegen hook"}
# Failures of the moment, not of the plugin: never remembered as "broken".
_TRANSIENT = (RecursionError, MemoryError)
# The form importlib.metadata.EntryPoint accepts: module, optional :attr, optional [extras].
_VALUE_PATTERN = r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$"
_VALUE: list[re.Pattern[str]] = []  # compiled at the first value that needs it


def _dotted(text: str) -> bool:
    if "." not in text:
        return text.isascii() and text.isidentifier()
    return text.isascii() and all(part.isidentifier() for part in text.split("."))


def parse_value(value: str) -> tuple[str, str | None]:
    """``(module, attr)`` of an entry-point value, extras stripped as ``importlib.metadata``
    does; raises ``ValueError`` for a value it would not accept."""
    module, sep, attr = value.partition(":")
    if _dotted(module) and (not sep or _dotted(attr)):  # the usual form, without a regex
        return module, attr if sep else None
    if not _VALUE:
        _VALUE.append(re.compile(_VALUE_PATTERN))
    match = _VALUE[0].match(value.strip())
    if match is None:
        raise ValueError(f"entry point value {value!r} is not 'module' or 'module:attr' "
                         "(optionally followed by [extras])")
    return match.group("module"), match.group("attr")


def _module_of(value: str) -> str:
    return value.partition(":")[0].partition("[")[0].strip()


class SourceInfo(Record):
    """A snapshot of one lazy source (an entry point or a lazy module registered in code;
    immutable).

    ``state`` is ``lazy``, ``loading``, ``loaded``, ``broken``, ``disabled`` or
    ``incompatible``; ``reason`` explains the last three; ``error`` is the
    exception that broke it (or, for a ``lazy`` source, the transient failure of the
    last attempt).
    """

    __slots__ = (  # noqa: RUF023  # fields in order
        "group", "kind", "value", "origin", "state", "reason", "error", "location",
    )
    group: str
    kind: str
    value: str
    origin: Origin
    state: str
    reason: str | None
    error: BaseException | None
    location: str

    def __init__(self, group: str, kind: str, value: str, origin: Origin, state: str,
                 reason: str | None, error: BaseException | None, location: str = "") -> None:
        init_fields(self, group, kind, value, origin, state, reason, error, location)


class Source:
    """Mutable loading state of one lazy source (internal)."""

    __slots__ = ("advertised", "entry", "error", "group", "in_code", "kind", "module", "origin",
                 "reason", "replaceable", "state", "transient", "value", "warned")

    def __init__(self, group: str, advertised: str, value: str, origin: Origin, state: str = "lazy",
                 reason: str | None = None, entry: AdvertisedEntryPoint | None = None,
                 in_code: bool = False) -> None:
        self.group = group
        self.advertised = advertised
        self.kind = canonical_kind(advertised)
        self.value = value
        self.module = _module_of(value)
        self.origin = origin
        self.state = state
        self.reason = reason
        self.error: BaseException | None = None
        self.transient = False
        self.entry = entry
        self.warned = False
        self.in_code = in_code  # registered by register_lazy_*(), not an entry point
        self.replaceable = False  # the kind's lazy module registered in code (TileLang's one)

    def info(self) -> SourceInfo:
        return SourceInfo(self.group, self.advertised, self.value, self.origin, self.state,
                          self.reason, self.error, self.entry.location if self.entry else "")

    def failure_text(self) -> str:
        if self.state == "incompatible":
            what = f"is incompatible: {self.reason}"
        elif self.state == "disabled":
            what = f"is skipped: {self.reason}"
        else:
            err = self.error
            what = (f"failed to load: {type(err).__name__}: {text_of(err)}" if err
                    else "failed to load")
            if self.transient:
                what += " (a transient failure: it is retried at the next use)"
        return f"plugin {self.origin.describe()} {what}"

    def advice(self) -> str:
        dist = self.origin.distribution
        if dist is None:
            return f"fix the import path {self.value!r} passed to register_lazy_*()"
        if self.state == "incompatible":
            return (f"install a release of {dist!r} that supports the installed versions, or skip "
                    f"it with TILELANG_HOSTCG_DISABLE={dist}")
        return (f"fix or reinstall {dist!r} (pip install --force-reinstall {dist}), or skip it "
                f"with TILELANG_HOSTCG_DISABLE={dist}")


def text_of(exc: BaseException) -> str:
    """``str(exc)``, or a placeholder for a plugin's exception that cannot be printed."""
    try:
        return str(exc)
    except Exception:
        return f"<{type(exc).__name__} whose str() raised>"


# ---------------------------------------------------------------------- load contexts
class Load:
    """One source being imported into one registry (internal).

    ``undo`` holds what to reverse on failure; ``threads`` the threads alive when the
    load began (a thread started later, which the plugin waits for, registers here too),
    or ``None`` when the main thread was the only one.
    """

    __slots__ = ("registered", "registry", "source", "stray", "threads", "undo")

    def __init__(self, registry: Registry, source: Source) -> None:
        self.registry = registry
        self.source = source
        self.undo: list[tuple[Any, ...]] = []
        self.registered = False
        self.stray: dict[tuple[str, str], None] = {}
        # Most loads start with the main thread alone: ``None`` says so at a fraction of
        # the snapshot's cost (threading counts the main thread among its live threads for
        # the life of the process, so a count of 1 is the main thread alone).
        self.threads = (None if threading.active_count() == 1
                        else frozenset(threading.enumerate()))


class _Local(threading.local):
    def __init__(self) -> None:
        self.stack: list[Load] = []


LOCAL = _Local()
ACTIVE: list[Load] = []
"""Every load in progress, in any thread (read and removed under ``_GRAPH``); the module-level
façade tests it to skip the thread-local lookup on the hot path."""


def current_load(registry: Registry | None = None) -> Load | None:
    """The load a registration made now belongs to: this thread's innermost one, or
    (in a thread started during a load, which the plugin waits for) that load.

    With ``registry``, only a load into that registry counts.
    """
    stack = LOCAL.stack
    if stack:
        top = stack[-1]
        return top if registry is None or top.registry is registry else None
    if not ACTIVE:
        return None
    me = threading.current_thread()
    main = threading.main_thread()
    with _GRAPH:
        for load in reversed(ACTIVE):
            threads = load.threads
            alive = me is main if threads is None else me in threads  # when it began
            if not alive and (registry is None or load.registry is registry):
                return load
    return None


# ---------------------------------------------------------------------- import locks
class _ImportLock:
    """A lock per top-level plugin package, re-entrant for its owner thread.

    Plugin imports of different packages run in parallel; a thread that would wait
    in a cycle (thread 1 imports package A, which waits for B, while thread 2 imports
    B, which waits for A) does not wait, and goes on with what is registered so far,
    as a re-entrant resolve does.
    """

    __slots__ = ("depth", "lock", "owner")

    def __init__(self) -> None:
        self.lock = _thread.allocate_lock()
        self.owner: int | None = None
        self.depth = 0


_GRAPH = _thread.allocate_lock()  # guards the fields below, the waits and ACTIVE's removals
_IMPORT_LOCKS: dict[str, _ImportLock] = {}
_WAITING_FOR: dict[int, _ImportLock] = {}


def import_lock(module: str) -> _ImportLock:
    """The lock of ``module``'s top-level package."""
    package = module.partition(".")[0]
    lock = _IMPORT_LOCKS.get(package)  # locks are never removed: no need for _GRAPH to find one
    if lock is not None:
        return lock
    # setdefault is atomic: of two threads making the first lock of a package, both get
    # the one stored first (no need for _GRAPH either).
    return _IMPORT_LOCKS.setdefault(package, _ImportLock())


def _take_now(lock: _ImportLock, me: int) -> bool:
    """Take ``lock`` again (its owner) or take it free; ``False`` when another holds it."""
    if lock.owner == me:
        lock.depth += 1
        return True
    if lock.lock.acquire(False):
        lock.owner, lock.depth = me, 1
        return True
    return False


def acquire(lock: _ImportLock) -> bool:
    """Take ``lock``; ``False`` (not taken) where waiting would deadlock."""
    me = _thread.get_ident()
    # The uncontended paths skip _GRAPH. A lock's owner is written only by its holder,
    # after taking the lock and before letting it go: a reader sees the holder or None
    # (None ends the chain below; a real cycle is found at the next round), and a thread
    # that waits cannot let its locks go, so a chain through waiting threads is true.
    if _take_now(lock, me):
        return True
    while True:
        with _GRAPH:
            if _take_now(lock, me):
                return True
            owner, seen = lock.owner, set()
            while owner is not None and owner not in seen:
                if owner == me:
                    return False
                seen.add(owner)
                waited = _WAITING_FOR.get(owner)
                owner = waited.owner if waited is not None else None
            _WAITING_FOR[me] = lock
        acquired = lock.lock.acquire(timeout=0.05)
        with _GRAPH:
            del _WAITING_FOR[me]
            if acquired:
                lock.owner, lock.depth = me, 1
                return True


def release(lock: _ImportLock) -> None:
    """Release ``lock`` once (by its owner: no need for _GRAPH, see acquire)."""
    lock.depth -= 1
    if lock.depth == 0:
        lock.owner = None
        lock.lock.release()


# ---------------------------------------------------------------------- module journals
Entry = tuple[tuple[str, ...], str, str, object, bool]
"""``(chain, group, kind, obj or lazy path, override)``; ``chain`` runs from the module
that registered outwards to the one the loader imported."""


class _Journal:
    __slots__ = ("by_key", "entries", "module")

    def __init__(self, module: object) -> None:
        self.module = weakref.ref(module)
        self.entries: list[Entry] = []
        self.by_key: dict[tuple[str, str], list[Entry]] = {}


_JOURNALS: dict[str, _Journal] = {}
_JOURNAL_LOCK = _thread.allocate_lock()


def _import_module(name: str) -> Any:
    """Import ``name`` for a load; its frame ends every import chain (see import_chain)."""
    return importlib.import_module(name)


def import_chain() -> tuple[str, ...]:
    """The modules whose top-level code is running in this thread, innermost first,
    up to the loader's own frames (``__main__`` excluded)."""
    frame = sys._getframe(1)
    names: list[str] = []
    while frame is not None:
        code = frame.f_code
        if code in _BOUNDARY:  # what runs inside a load belongs to it, not to outer modules
            break
        if code.co_name == "<module>":
            globs = frame.f_globals
            name = globs.get("__name__")
            if isinstance(name, str) and name != "__main__" and (not names or names[-1] != name):
                module = sys.modules.get(name)
                if module is not None and getattr(module, "__dict__", None) is globs:
                    names.append(name)
        frame = frame.f_back  # type: ignore[assignment]
    return tuple(names)


def record(chain: tuple[str, ...], group: str, kind: str, obj: object, override: bool) -> None:
    """Write one registration to the journal of every module on ``chain``."""
    entry: Entry = (chain, group, kind, obj, override)
    key = (group, canonical_kind(kind))
    with _JOURNAL_LOCK:
        for name in chain:
            module = sys.modules.get(name)
            journal = _JOURNALS.get(name)
            if journal is None or journal.module() is not module:  # a new import of it
                journal = _JOURNALS[name] = _Journal(module)
            journal.entries.append(entry)
            journal.by_key.setdefault(key, []).append(entry)


def journal_of(name: str) -> _Journal | None:
    """The journal of the imported module ``name`` (``None``: it registered nothing)."""
    journal = _JOURNALS.get(name)
    module = sys.modules.get(name)
    if journal is None or module is None or journal.module() is not module:
        return None
    return journal


# ---------------------------------------------------------------------- the loader
class Loader:
    """The sources of one registry and their loading (internal; guarded by the registry's
    lock)."""

    def __init__(self, registry: Registry, *, discover: bool, controls: Controls | None,
                 index_loader: Callable[[Controls], Sequence[PlannedSource]] | None) -> None:
        self.registry = registry
        self.lock = registry._lock
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
        # A Source compares by identity (no __eq__): ``in`` finds this very one.
        return source in self.sources.get((source.group, source.kind), ())

    def add_lazy(self, group: str, kind: str, import_path: str, load: Load | None) -> None:
        """A lazy module registered by :meth:`Registry.register_lazy_host_codegen` (or the
        hooks variant): in code, it replaces the kind's previous lazy module, as in TileLang."""
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
                    self.registry._invalidate()
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
                load.undo.append(("lazy", source))
            self._add(source)
            self.ready.discard(key)
            self.registry._invalidate()

    def undo_lazy(self, source: Source) -> None:
        with self.lock:
            self._remove(source)

    def infos(self) -> list[SourceInfo]:
        self.ensure_discovered()
        with self.lock:
            return [s.info() for key in sorted(self.sources) for s in self.sources[key]]

    def problems(self, group: str, kind: str) -> list[Source]:
        """Sources of the kind that failed (broken, incompatible, or transiently)."""
        return [s for s in self.sources.get((group, kind), ())
                if s.state in ("broken", "incompatible") or s.transient]

    def disabled(self, group: str, kind: str) -> list[Source]:
        return [s for s in self.sources.get((group, kind), ()) if s.state == "disabled"]

    # ------------------------------------------------------------ discovery
    def refresh(self) -> None:
        """Drop what came from distributions and re-read entry points at the next use."""
        with self.lock:
            self.registry._drop_distributions()
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
            self.registry._invalidate()
            importlib.invalidate_caches()
            self.discovered = not self.discover

    def ensure_discovered(self) -> None:
        if self.discovered:
            return
        with self.lock:
            if self.discovered:
                return
            controls = self.controls_arg if self.controls_arg is not None else (
                Controls.from_environ())
            self.controls = controls
            loader = self.index_loader or _default_index_loader
            for planned in loader(controls):
                entry = planned.entry
                origin = Origin(entry.distribution, entry.version, entry.group, entry.spec)
                self._add(Source(entry.group, entry.name, entry.value, origin, planned.state,
                                 planned.reason, entry))
            self.ready.clear()
            self.registry._invalidate()
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
                for source in self.sources.get(key, ()):
                    if source.state == "loading" or source.transient:
                        break
                else:
                    self.ready.add(key)
                return

    def load_all(self) -> None:
        self.ensure_discovered()
        for group, kind in sorted(self.sources):
            self.ensure_loaded(group, kind)

    def _load(self, source: Source) -> None:
        load = Load(self.registry, source)
        source.state, source.error, source.transient = "loading", None, False
        stack = LOCAL.stack
        stack.append(load)
        # list.append is atomic, and a reader under _GRAPH (current_load) that misses a load
        # appended meanwhile looked before it began: no thread it must serve existed yet.
        ACTIVE.append(load)
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
            self.registry._rollback(load.undo)
            source.state = "lazy"
            raise
        finally:
            stack.pop()
            with _GRAPH:
                ACTIVE.remove(load)
        with self.lock:
            if not self.is_current(source):
                # refresh() dropped this source while it was being imported: its successor
                # loads again (replaying what the module registered).
                self.registry._rollback(load.undo)
                source.state = "lazy"
            elif failure is None:
                source.state = "loaded"
                self.replayed.add(source.module)
            else:
                self.registry._rollback(load.undo)
                source.error = failure
                if isinstance(failure, _TRANSIENT):  # a failure of the moment: retried next use
                    source.state, source.transient = "lazy", True
                else:
                    source.state = "broken"

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
                module = _import_module(module_name)
        else:
            module = _import_module(module_name)
            journal = journal_of(module_name)
            if journal is not None:
                for chain, group, kind, made, override in list(journal.entries):
                    if self.owner(chain) == module_name:
                        self.admit(load, group, kind, made, override, replay=True)
        if attr is None:
            return
        obj: Any = module
        for part in attr.split("."):
            obj = getattr(obj, part)
        expected = HostCodegen if source.group == CODEGEN_GROUP else hook_type()
        if callable(obj) and not isinstance(obj, type):
            obj = obj()
        if isinstance(obj, expected):
            self.admit(load, source.group, source.advertised, obj, False, replay=False)
            return
        items: Any = obj
        if isinstance(items, (str, bytes)) or not isinstance(items, Sequence) or not items or not all(
                isinstance(item, expected) for item in items):
            raise TypeError(
                f"{source.value!r} gave {type(obj).__name__} {obj!r:.80}; it must name a "
                f"{expected.__name__}, a non-empty sequence of them, or a zero-argument "
                "callable returning either")
        for item in items:
            self.admit(load, source.group, source.advertised, item, False, replay=False)

    def owner(self, chain: tuple[str, ...]) -> str | None:
        """The module, nearest on ``chain``, that a source of this registry names."""
        by_module = self.by_module
        for name in chain:
            if by_module.get(name):
                return name
        return None

    def admit(self, load: Load, group: str, kind: str, obj: object, override: bool, *,
              replay: bool) -> None:
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
            elif own.module == source.module:
                origin = own.origin  # the entry point of this kind, whichever kind came first
        if key == (source.group, source.kind):
            load.registered = True
        if isinstance(obj, str):
            self.add_lazy(group, kind, obj, load)
            return
        self.registry._apply_in_load(load, group, canon, kind, obj, override, origin, replay)


_BOUNDARY = frozenset({_import_module.__code__, Loader._import_source.__code__})


def _default_index_loader(controls: Controls) -> Sequence[PlannedSource]:
    from . import __version__, _cache
    from ._discovery import plan_sources

    entries = _cache.load_index(__version__).entry_points if controls.autoload else ()
    return plan_sources(entries, controls, __version__)

