"""The registry object: registrations, lazy sources, loading, resolution and hooks."""

from __future__ import annotations

import _thread
import importlib
import itertools
import sys
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from ._discovery import CORE_DISTRIBUTION, AdvertisedEntryPoint, Controls, PlannedSource
from ._errors import (
    AmbiguousHostCodegenError,
    DuplicateRegistrationError,
    NoHostCodegenError,
    PluginLoadError,
    PluginWarning,
)
from ._targets import canonical_kind, host_of
from ._types import CODE_ORIGIN, CODEGEN_GROUP, HOOK_GROUP, HostCodegen, HostCodegenHook, Origin

TYPE_CHECKING = False  # typing costs import time on the first-use path; checkers read True
if TYPE_CHECKING:
    from typing import Any

    from tvm.ir import IRModule
    from tvm.runtime import Module
    from tvm.target import Target

__all__ = ["Registration", "Registry", "SourceInfo", "current_registry"]

_RESOLVE_CACHE_LIMIT = 1024
# First-party plugins named in "nothing found" messages.
_FIRST_PARTY = {"cuda_host": "tilelang-hostcg-cuda"}
_EXPECTED = {CODEGEN_GROUP: HostCodegen, HOOK_GROUP: HostCodegenHook}
_NOUN = {CODEGEN_GROUP: "host codegen", HOOK_GROUP: "host codegen hook"}


@dataclass(frozen=True, slots=True)
class Registration:
    """A codegen or hook registered under a kind, with where it came from.

    ``seq`` is the registration order (kept when ``override`` replaces in place).
    ``default`` marks a client's own codegen (TileLang's, registered by
    :mod:`tilelang_hostcg.tilelang`): it serves only when no other registration matches.
    """

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
class SourceInfo:
    """A snapshot of one lazy source (an entry point or a lazy module registered in code).

    ``state`` is ``lazy``, ``loading``, ``loaded``, ``broken``, ``disabled`` or
    ``incompatible``; ``reason`` explains the last three; ``error`` is the
    exception that broke it.
    """

    group: str
    kind: str
    value: str
    origin: Origin
    state: str
    reason: str | None
    error: BaseException | None
    location: str = ""


class _Source:
    """Mutable loading state of one lazy source (internal)."""

    __slots__ = ("advertised", "entry", "error", "group", "kind", "origin", "reason", "state",
                 "value", "warned")

    def __init__(self, group: str, advertised: str, value: str, origin: Origin, state: str = "lazy",
                 reason: str | None = None, entry: AdvertisedEntryPoint | None = None) -> None:
        self.group = group
        self.advertised = advertised
        self.kind = canonical_kind(advertised)
        self.value = value
        self.origin = origin
        self.state = state
        self.reason = reason
        self.error: BaseException | None = None
        self.entry = entry
        self.warned = False

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
            what = (f"failed to load: {type(err).__name__}: {_text(err)}" if err
                    else "failed to load")
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


class _Loading(threading.local):
    """Per-thread stack of the sources being imported (for attribution and rollback)."""

    def __init__(self) -> None:
        self.stack: list[tuple[Registry, _Source, list[tuple[Any, ...]]]] = []


_LOADING = _Loading()
# How many plugin imports are running in any thread; lets the module-level façade
# skip the thread-local lookup on the hot path when it is zero.
_loads_in_progress = 0


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


_GRAPH = _thread.allocate_lock()  # guards the fields below and every _ImportLock's owner/depth
_IMPORT_LOCKS: dict[str, _ImportLock] = {}
_WAITING_FOR: dict[int, _ImportLock] = {}


def _import_lock(value: str) -> _ImportLock:
    package = value.partition(":")[0].strip().partition(".")[0]
    with _GRAPH:
        lock = _IMPORT_LOCKS.get(package)
        if lock is None:
            lock = _IMPORT_LOCKS[package] = _ImportLock()
        return lock


def _acquire(lock: _ImportLock) -> bool:
    """Take ``lock``; ``False`` (not taken) where waiting would deadlock."""
    me = _thread.get_ident()
    while True:
        with _GRAPH:
            if lock.owner == me:
                lock.depth += 1
                return True
            if lock.lock.acquire(False):
                lock.owner, lock.depth = me, 1
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


def _release(lock: _ImportLock) -> None:
    with _GRAPH:
        lock.depth -= 1
        if lock.depth == 0:
            lock.owner = None
            lock.lock.release()
# What each plugin module registered when it was first imported, so that another
# registry (or another entry point naming the same module) gets the same registrations.
_MODULE_JOURNALS: dict[str, list[tuple[str, str, Any, bool]]] = {}


def current_registry(default: Callable[[], Registry]) -> Registry:
    """The registry a module-level call acts on: the one loading a plugin in this
    thread, else ``default()``."""
    stack = _LOADING.stack
    return stack[-1][0] if stack else default()


def _sort_key(reg: Registration) -> tuple[int, int]:
    return (-reg.obj.priority, reg.seq)


class Registry:
    """Host codegens and hooks by target kind, with lazy plugin loading.

    ``Registry()`` is empty and reads no entry points; ``Registry(discover=True)``
    reads the installed entry points (and the ``TILELANG_HOSTCG_*`` controls, unless
    ``controls`` is given) at first use. All methods are thread-safe.
    """

    def __init__(self, *, discover: bool = False, controls: Controls | None = None,
                 index_loader: Callable[[Controls], Sequence[PlannedSource]] | None = None,
                 ) -> None:
        self._discover = discover
        self._controls_arg = controls
        self._index_loader = index_loader
        self._lock = threading.RLock()
        self._seq = itertools.count()
        self._codegens: dict[str, list[Registration]] = {}
        self._hooks: dict[str, list[Registration]] = {}
        self._sources: dict[tuple[str, str], list[_Source]] = {}
        self._ready: set[tuple[str, str]] = set()
        self._resolved: dict[Any, HostCodegen] = {}
        self._by_kind: dict[str, HostCodegen] = {}
        self._controls = controls if controls is not None else Controls()
        self._discovered = not discover

    # ------------------------------------------------------------------ registration
    def register_host_codegen(self, target_host_kind: str, codegen: HostCodegen, *,
                              override: bool = False, origin: Origin | None = None,
                              default: bool = False) -> HostCodegen:
        """Register ``codegen`` for a host kind; a duplicate name raises unless ``override``
        (which replaces the old one in place). Returns ``codegen``.

        For client integrations: ``origin`` records where a registration made in code
        comes from (e.g. distribution ``tilelang``); ``default=True`` makes it a default,
        which serves only when no other registration for the kind matches and which
        supersedes the core's own codegen of the kind. Both survive :meth:`refresh`.
        """
        if not isinstance(codegen, HostCodegen):
            raise TypeError(f"register_host_codegen expects a HostCodegen, got {codegen!r}")
        self._register(CODEGEN_GROUP, target_host_kind, codegen, override, origin, default)
        return codegen

    def register_host_codegen_hook(self, target_kind: str, hook: HostCodegenHook, *,
                                   override: bool = False, origin: Origin | None = None,
                                   ) -> HostCodegenHook:
        """Register ``hook`` for a device kind (``hip`` and ``rocm`` are one kind);
        a duplicate name raises unless ``override``. ``origin`` as for
        :meth:`register_host_codegen`. Returns ``hook``."""
        if not isinstance(hook, HostCodegenHook):
            raise TypeError(f"register_host_codegen_hook expects a HostCodegenHook, got {hook!r}")
        self._register(HOOK_GROUP, target_kind, hook, override, origin)
        return hook

    def unregister_host_codegen(self, target_host_kind: str, name: str) -> Registration | None:
        """Remove the codegen called ``name`` from a host kind; returns its registration,
        or ``None`` when there is none (for integrations that undo what they registered)."""
        return self._unregister(CODEGEN_GROUP, target_host_kind, name)

    def unregister_host_codegen_hook(self, target_kind: str, name: str) -> Registration | None:
        """Remove the hook called ``name`` from a device kind; as :meth:`unregister_host_codegen`."""
        return self._unregister(HOOK_GROUP, target_kind, name)

    def _unregister(self, group: str, kind: str, name: str) -> Registration | None:
        table = self._table(group)
        canon = canonical_kind(kind)
        with self._lock:
            regs = table.get(canon, [])
            gone = next((r for r in regs if r.obj.name == name), None)
            if gone is not None:
                table[canon] = [r for r in regs if r is not gone]
                self._invalidate()
            return gone

    def register_lazy_host_codegen(self, target_host_kind: str, import_path: str) -> None:
        """Import ``import_path`` the first time ``target_host_kind`` is used; the module
        registers its codegens on import."""
        self._register_lazy(CODEGEN_GROUP, target_host_kind, import_path)

    def register_lazy_host_codegen_hooks(self, target_kind: str, import_path: str) -> None:
        """Import ``import_path`` before hooks of ``target_kind`` are first applied."""
        self._register_lazy(HOOK_GROUP, target_kind, import_path)

    def _register_lazy(self, group: str, kind: str, import_path: str) -> None:
        if not isinstance(import_path, str) or not import_path.strip():
            raise TypeError(f"import_path must be a non-empty module path, got {import_path!r}")
        loading = self._loading_here()
        # Made while a plugin loads: it belongs to the plugin's distribution, is undone
        # with the plugin's other registrations, and counts as registering for the kind.
        parent = loading[1].origin if loading else CODE_ORIGIN
        origin = Origin(parent.distribution, parent.version, group, f"{kind} = {import_path}")
        with self._lock:
            key = (group, canonical_kind(kind))
            sources = self._sources.setdefault(key, [])
            if loading:
                loading[2].append(("journal", group, kind, import_path, False))
            if any(s.origin.distribution == origin.distribution and s.value == import_path
                   for s in sources):
                return
            source = _Source(group, kind, import_path, origin)
            sources.append(source)
            if loading:
                loading[2].append(("lazy", key, source))
            self._ready.discard(key)
            self._invalidate()

    def _register(self, group: str, kind: str, obj: HostCodegen | HostCodegenHook,
                  override: bool, given_origin: Origin | None = None, default: bool = False) -> None:
        if not isinstance(kind, str) or not kind:
            raise TypeError(f"target kind must be a non-empty string, got {kind!r}")
        if given_origin is not None and given_origin.group is not None:
            raise ValueError("origin= describes a registration made in code: its group must be None "
                             "(entry-point origins are recorded by discovery)")
        loading = self._loading_here()
        origin = loading[1].origin if loading else given_origin or CODE_ORIGIN
        canon = canonical_kind(kind)
        table = self._table(group)
        with self._lock:
            current = table.get(canon, [])
            updated = list(current)
            for index, old in enumerate(current):
                if old.obj.name != obj.name:
                    continue
                if not override:
                    raise DuplicateRegistrationError(
                        f"{_NOUN[group].capitalize()} {obj.name!r} is already registered for "
                        f"target kind {kind!r} ({old.origin.describe()}); pass override=True to "
                        "replace it, or give the new one another name",
                        kind=kind, name=obj.name)
                new = Registration(canon, obj, origin, old.seq, default)
                updated[index] = new
                undo: tuple[Any, ...] = ("replace", table, canon, old, new)
                break
            else:
                new = Registration(canon, obj, origin, next(self._seq), default)
                updated.append(new)
                undo = ("add", table, canon, new)
            updated.sort(key=_sort_key)
            table[canon] = updated
            self._invalidate()
            if loading:
                loading[2].append(undo)
                loading[2].append(("journal", group, kind, obj, override))

    def _loading_here(self) -> tuple[Registry, _Source, list[tuple[Any, ...]]] | None:
        """The plugin this thread is importing into this registry, if any."""
        stack = _LOADING.stack
        return stack[-1] if stack and stack[-1][0] is self else None

    def _table(self, group: str) -> dict[str, list[Registration]]:
        return self._codegens if group == CODEGEN_GROUP else self._hooks

    def _invalidate(self) -> None:
        # New dicts rather than clear(): a concurrent reader keeps a consistent snapshot.
        self._resolved = {}
        self._by_kind = {}

    def _rollback(self, journal: list[tuple[Any, ...]]) -> None:
        with self._lock:
            for item in reversed(journal):
                if item[0] == "journal":
                    continue
                if item[0] == "lazy":
                    self._sources[item[1]] = [s for s in self._sources.get(item[1], ())
                                              if s is not item[2]]
                    continue
                table, canon = item[1], item[2]
                regs = list(table.get(canon, []))
                if item[0] == "add":
                    regs = [r for r in regs if r is not item[3]]
                else:
                    regs = [item[3] if r is item[4] else r for r in regs]
                    regs.sort(key=_sort_key)
                table[canon] = regs
            self._invalidate()

    # ------------------------------------------------------------------ discovery
    def refresh(self) -> None:
        """Re-read the installed entry points (after ``pip install`` in a running process).

        Registrations that came from distributions are dropped and their sources
        rebuilt; failed plugins are retried; registrations made in code stay.
        """
        with self._lock:
            for table in (self._codegens, self._hooks):
                for kind, regs in list(table.items()):
                    # Made in code (with or without an origin= naming a client): kept.
                    table[kind] = [r for r in regs if r.origin.group is None]
            for key, sources in list(self._sources.items()):
                kept = [s for s in sources if s.origin.distribution is None]
                for source in kept:
                    if source.state == "broken":
                        source.state, source.error, source.warned = "lazy", None, False
                self._sources[key] = kept
            self._ready.clear()
            self._invalidate()
            importlib.invalidate_caches()
            self._discovered = not self._discover

    def _ensure_discovered(self) -> None:
        if self._discovered:
            return
        with self._lock:
            if self._discovered:
                return
            controls = self._controls_arg if self._controls_arg is not None else (
                Controls.from_environ())
            self._controls = controls
            loader = self._index_loader or _default_index_loader
            for planned in loader(controls):
                entry = planned.entry
                origin = Origin(entry.distribution, entry.version, entry.group, entry.spec)
                source = _Source(entry.group, entry.name, entry.value, origin, planned.state,
                                 planned.reason, entry)
                self._sources.setdefault((entry.group, source.kind), []).append(source)
            self._ready.clear()
            self._invalidate()
            self._discovered = True

    # ------------------------------------------------------------------ loading
    def _ensure_loaded(self, group: str, kind: str) -> None:
        key = (group, kind)
        if key in self._ready:
            return
        self._ensure_discovered()
        # Loop: a plugin may register more lazy modules for this kind while it loads.
        skipped: set[int] = set()
        while pending := [s for s in self._sources.get(key, ())
                          if s.state in ("lazy", "loading") and id(s) not in skipped]:
            for source in pending:
                lock = _import_lock(source.value)
                if not _acquire(lock):
                    skipped.add(id(source))  # waiting would deadlock: use what is there
                    continue
                try:
                    if source.state == "lazy":
                        self._load(source)
                    elif source.state == "loading":
                        skipped.add(id(source))  # this thread is importing it (re-entrant)
                finally:
                    _release(lock)
        with self._lock:
            if all(s.state != "loading" for s in self._sources.get(key, ())):
                self._ready.add(key)

    def _load(self, source: _Source) -> None:
        global _loads_in_progress
        journal: list[tuple[Any, ...]] = []
        source.state = "loading"
        _LOADING.stack.append((self, source, journal))
        with _GRAPH:
            _loads_in_progress += 1
        try:
            self._import_source(source)
            self._check_kinds(source, journal)
            registered = any(item[0] == "journal" and item[1] == source.group
                             and canonical_kind(item[2]) == source.kind for item in journal)
            if not registered:
                raise LookupError(
                    f"importing it registered no {_NOUN[source.group]} for kind "
                    f"{source.advertised!r}, the kind its entry point advertises")
        except Exception as exc:
            self._rollback(journal)
            source.state, source.error = "broken", exc
        except BaseException:
            self._rollback(journal)
            source.state = "lazy"
            raise
        else:
            with self._lock:
                if any(s is source for s in self._sources.get((source.group, source.kind), ())):
                    source.state = "loaded"
                else:  # refresh() dropped this source while it was being imported
                    self._rollback(journal)
                    source.state = "lazy"
        finally:
            _LOADING.stack.pop()
            with _GRAPH:
                _loads_in_progress -= 1

    def _check_kinds(self, source: _Source, journal: list[tuple[Any, ...]]) -> None:
        """A distribution's plugin may register only for kinds that distribution advertises
        (and that are not disabled): otherwise which codegens serve a kind would depend on
        which other kinds were used first, and a plugin could replace the core's codegens
        through a side door."""
        dist = source.origin.distribution
        if dist is None:
            return
        with self._lock:
            allowed = {(s.group, s.kind) for sources in self._sources.values() for s in sources
                       if s.origin.distribution == dist and s.state not in ("disabled", "incompatible")}
        stray = sorted({(item[1], item[2]) for item in journal
                        if item[0] == "journal" and (item[1], canonical_kind(item[2])) not in allowed})
        if stray:
            listed = ", ".join(f"{_NOUN[group]} for kind {kind!r}" for group, kind in stray)
            raise LookupError(
                f"importing it registered {listed}, which distribution {dist!r} does not "
                "advertise (or which is disabled); a plugin registers only for the kinds of its "
                "entry points: add an entry point for each kind it serves")

    def _import_source(self, source: _Source) -> None:
        module_name, sep, attr = source.value.partition(":")
        module_name, attr = module_name.strip(), attr.strip()
        if sep and not attr:
            raise ValueError(f"entry point value {source.value!r} has an empty attribute")
        fresh = module_name not in sys.modules
        if fresh:
            modules_before, journals_before = set(sys.modules), dict(_MODULE_JOURNALS)
        before = len(_LOADING.stack[-1][2])
        module = importlib.import_module(module_name)
        journal = _LOADING.stack[-1][2]
        if fresh:
            entries = [item[1:] for item in journal[before:] if item[0] == "journal"]
            # Modules first imported along with it (a package importing its submodules)
            # get the same journal, unless their own load recorded one meanwhile: an entry
            # point naming one of them then finds what importing it registered.
            for name in set(sys.modules) - modules_before:
                if name == module_name or _MODULE_JOURNALS.get(name) is journals_before.get(name):
                    _MODULE_JOURNALS[name] = entries
        else:
            self._replay(_MODULE_JOURNALS.get(module_name, ()))
        if not sep:
            return
        obj: Any = module
        for part in attr.split("."):
            obj = getattr(obj, part)
        expected = _EXPECTED[source.group]
        if callable(obj) and not isinstance(obj, type):
            obj = obj()
        items: Any = [obj] if isinstance(obj, expected) else obj
        if isinstance(items, (str, bytes)) or not isinstance(items, Sequence) or not items or not all(
                isinstance(item, expected) for item in items):
            raise TypeError(
                f"{source.value!r} gave {type(obj).__name__} {obj!r:.80}; it must name a "
                f"{expected.__name__}, a non-empty sequence of them, or a zero-argument "
                "callable returning either")
        for item in items:
            self._register(source.group, source.advertised, item, False)  # type-checked above

    def _replay(self, entries: Sequence[tuple[str, str, Any, bool]]) -> None:
        for group, kind, obj, override in entries:
            if isinstance(obj, str):  # a lazy module it registered
                self._register_lazy(group, kind, obj)
                continue
            table = self._table(group)
            existing = table.get(canonical_kind(kind), ())
            if any(reg.obj is obj for reg in existing):
                # Already here (another entry point of the same module): count it for
                # this source without registering twice.
                _LOADING.stack[-1][2].append(("journal", group, kind, obj, override))
                continue
            self._register(group, kind, obj, override)

    def load_all(self) -> None:
        """Import every lazy source now (for ``check`` and ``list --load``); never raises
        for a broken plugin."""
        self._ensure_discovered()
        for group, kind in sorted(self._sources):
            self._ensure_loaded(group, kind)

    # ------------------------------------------------------------------ introspection
    def sources(self) -> list[SourceInfo]:
        """Every lazy source known to this registry, discovered or registered in code."""
        self._ensure_discovered()
        with self._lock:
            return [s.info() for key in sorted(self._sources) for s in self._sources[key]]

    def registrations(self, group: str = CODEGEN_GROUP, kind: str | None = None,
                      ) -> list[Registration]:
        """Current registrations of a group, for one kind or all, without loading anything."""
        table = self._table(group)
        with self._lock:
            if kind is not None:
                return list(table.get(canonical_kind(kind), ()))
            return [r for key in sorted(table) for r in table[key]]

    @property
    def controls(self) -> Controls:
        """The controls in force (read from the environment at discovery)."""
        self._ensure_discovered()
        return self._controls

    # ------------------------------------------------------------------ resolution
    def resolve_host_codegen(self, target_host: Target) -> HostCodegen:
        """The host codegen for ``target_host`` (a host target, or a device target whose
        host is used).

        Raises :class:`NoHostCodegenError` when nothing matches,
        :class:`AmbiguousHostCodegenError` on a tie across distributions, and
        :class:`PluginLoadError` when the kind's only providers failed to load.
        """
        try:
            hit = self._resolved.get(target_host)
            if hit is None:
                hit = self._by_kind.get(target_host.kind.name)
        except (TypeError, AttributeError):  # unhashable, or not a Target: the slow path says why
            hit = None
        return hit if hit is not None else self._resolve(target_host)

    def _host_candidates(self, target: Target,
                         ) -> tuple[Target, str, Sequence[Registration], list[Registration],
                                    list[_Source]]:
        """Host target, kind, registrations, matching ones and failed sources for ``target``."""
        host = host_of(target)
        kind = canonical_kind(host.kind.name)
        self._ensure_loaded(CODEGEN_GROUP, kind)
        regs = self._codegens.get(kind, ())
        return host, kind, regs, self._matching(regs, host), self._problem_sources(CODEGEN_GROUP, kind)

    def _resolve(self, target: Target) -> HostCodegen:
        cache, by_kind = self._resolved, self._by_kind
        host, kind, regs, matched, problems = self._host_candidates(target)
        if not matched:
            raise self._no_codegen_error(kind, host, problems)
        self._warn_skipped(problems, f"host kind {kind!r}")
        choice = self._choose(kind, matched)
        with self._lock:
            if cache is self._resolved and (CODEGEN_GROUP, kind) in self._ready:
                if host is target and all(r.obj.supports_target is None for r in regs):
                    # The answer depends on the kind alone: any target of this kind gets it.
                    by_kind[target.kind.name] = choice
                if len(cache) >= _RESOLVE_CACHE_LIMIT:
                    cache.clear()
                cache[target] = choice
        return choice

    def _matching(self, regs: Sequence[Registration], target: Target) -> list[Registration]:
        matched = []
        for reg in regs:
            if not build_available(reg.obj):
                continue  # its TVM build function is missing from the TVM in use
            try:
                ok = reg.obj.matches(target)
            except Exception as exc:  # a plugin's predicate must not break resolution
                warnings.warn(f"supports_target of {reg.obj.name!r} ({reg.origin.describe()}) "
                              f"raised {type(exc).__name__}: {exc}; treating it as not matching. "
                              "Fix the plugin's predicate.", PluginWarning, stacklevel=4)
                continue
            if ok:
                matched.append(reg)
        return matched

    def tiers(self, kind: str, matched: Sequence[Registration]) -> list[list[Registration]]:
        """``matched`` split into the tiers resolution tries in turn, each in priority then
        registration order: registrations that are neither defaults nor superseded; then
        client defaults; then the core's own codegens, which a client default registered
        for the kind supersedes. Empty tiers are left out."""
        superseding = any(r.default for r in self._codegens.get(kind, ()))
        first: list[Registration] = []
        defaults: list[Registration] = []
        superseded: list[Registration] = []
        for reg in matched:
            if reg.default:
                defaults.append(reg)
            elif superseding and reg.origin.distribution == CORE_DISTRIBUTION:
                superseded.append(reg)
            else:
                first.append(reg)
        return [tier for tier in (first, defaults, superseded) if tier]

    def _choose(self, kind: str, matched: list[Registration]) -> HostCodegen:
        preferred = self._controls.prefer.get(kind)
        if preferred is not None:
            for reg in matched:
                if reg.obj.name == preferred:
                    return reg.obj  # type: ignore[return-value]
        matched = self.tiers(kind, matched)[0]
        top = [r for r in matched if r.obj.priority == matched[0].obj.priority]
        dists: dict[str, Registration] = {}
        for reg in top:
            if reg.origin.distribution is not None:
                dists.setdefault(reg.origin.distribution, reg)
        if len(dists) > 1:
            pairs = [(r.obj.name, d) for d, r in sorted(dists.items())]
            listed = " and ".join(f"{n!r} from {d!r}" for n, d in pairs)
            raise AmbiguousHostCodegenError(
                f"Ambiguous host codegen for target host {kind!r}: {listed} match with equal "
                f"priority {matched[0].obj.priority}. Choose one with "
                f"TILELANG_HOSTCG_PREFER={kind}={pairs[0][0]}, or uninstall one of the "
                "distributions", kind=kind, candidates=pairs)
        return top[0].obj  # type: ignore[return-value]

    def _problem_sources(self, group: str, kind: str) -> list[_Source]:
        return [s for s in self._sources.get((group, kind), ())
                if s.state in ("broken", "incompatible")]

    def _warn_skipped(self, problems: list[_Source], what: str) -> None:
        for source in problems:
            if source.warned:
                continue
            source.warned = True
            warnings.warn(f"{source.failure_text()}; it is skipped for {what}. {source.advice()}",
                          PluginWarning, stacklevel=4)

    def _no_codegen_error(self, kind: str, host: Target, problems: list[_Source]) -> Exception:
        if problems:
            source = problems[0]
            err = PluginLoadError(
                f"No host codegen for target host {kind!r}: {source.failure_text()}. "
                f"{source.advice()}", kind=kind, origin=source.origin)
            err.__cause__ = source.error
            return err
        names = [r.obj.name for r in self._codegens.get(kind, ())]
        disabled = [s for s in self._sources.get((CODEGEN_GROUP, kind), ())
                    if s.state == "disabled"]
        if names:
            message = (f"No host codegen registered for target host {kind!r} supports target "
                       f"{_short(host)}. Available: {', '.join(names)}. Use a target one of them "
                       "supports, or install a plugin for this variant")
        else:
            hint = _FIRST_PARTY.get(kind)
            install = f"`pip install {hint}`" if hint else "a plugin that provides it"
            message = (f"No host codegen registered for target host {kind!r}. Available: <none>. "
                       f"Install {install} (see `tilelang-hostcg list`), or register one with "
                       "register_host_codegen()")
        for source in disabled:
            message += (f". Distribution {source.origin.distribution!r} provides it but "
                        f"{source.reason}")
        message += _missing_build_note(self._codegens.get(kind, ()))
        return NoHostCodegenError(message, kind=kind, available=names)

    def allowed_host_codegens_for_target(self, target_host: Target) -> list[str]:
        """Names of the codegens matching ``target_host``, best first; broken plugins warn."""
        _, kind, _, matched, problems = self._host_candidates(target_host)
        self._warn_skipped(problems, f"host kind {kind!r}")
        return [r.obj.name for tier in self.tiers(kind, matched) for r in tier]

    def matching_hooks(self, target: Target) -> list[Registration]:
        """The hooks that apply to device ``target``, in the order they run."""
        kind = canonical_kind(target.kind.name)
        self._ensure_loaded(HOOK_GROUP, kind)
        self._warn_skipped(self._problem_sources(HOOK_GROUP, kind), f"hooks of kind {kind!r}")
        return self._matching(self._hooks.get(kind, ()), target)

    def apply_host_codegen_hooks(self, mod: IRModule, target_host: Target,
                                 target: Target | None) -> IRModule:
        """Run the hooks of ``target``'s kind on ``mod``; ``target=None`` returns ``mod``."""
        if target is None:
            return mod
        for reg in self.matching_hooks(target):
            try:
                hook: Any = reg.obj
                mod = hook.lower(mod, target_host, target)
            except Exception as exc:
                if hasattr(exc, "add_note"):
                    exc.add_note(f"raised by host codegen hook {reg.obj.name!r} "
                                 f"({reg.origin.describe()})")
                raise
        return mod

    def build_host(self, host_mod: IRModule, target_host: Target,
                   target: Target | None = None) -> Module:
        """Apply hooks, resolve the host codegen and build ``host_mod`` with this registry."""
        from ._build import build_host

        return build_host(self, host_mod, target_host, target)

    def build(self, func_or_mod: Any, target: Any = None, pipeline: Any = "default") -> Module:
        """Compile like ``tvm.tirx.build``, building the host module through this registry."""
        from ._build import build

        return build(self, func_or_mod, target, pipeline)

    def __iter__(self) -> Iterator[Registration]:
        return iter(self.registrations(CODEGEN_GROUP) + self.registrations(HOOK_GROUP))


def build_available(obj: object) -> bool:
    """Whether the TVM build function that ``obj``'s ``build`` calls exists (``True`` when
    the build is not a :func:`global_func_host_codegen`)."""
    from ._global_func import required_global_func

    name = required_global_func(getattr(obj, "build", None))
    if name is None:
        return True
    from ._tvm import get_global_func

    return get_global_func(name) is not None


def _missing_build_note(regs: Sequence[Registration]) -> str:
    from ._global_func import required_global_func

    missing = [(r.obj.name, required_global_func(getattr(r.obj, "build", None))) for r in regs
               if not build_available(r.obj)]
    if not missing:
        return ""
    from ._tvm import describe_tvm

    listed = ", ".join(f"{name!r} needs TVM global function {func!r}" for name, func in missing)
    return f". Not usable with the TVM in use ({describe_tvm()}): {listed}"


def _text(exc: BaseException) -> str:
    """``str(exc)``, or a placeholder for a plugin's exception that cannot be printed."""
    try:
        return str(exc)
    except Exception:
        return f"<{type(exc).__name__} whose str() raised>"


def _short(target: Target) -> str:
    text = str(target)
    return text if len(text) <= 120 else text[:117] + "..."


def _default_index_loader(controls: Controls) -> Sequence[PlannedSource]:
    from . import _cache
    from ._discovery import plan_sources
    from ._version import __version__

    entries = _cache.load_index(__version__).entry_points if controls.autoload else ()
    return plan_sources(entries, controls, __version__)
