"""The registry object: registrations, resolution and hooks.

Loading (sources, import locks, journals, attribution, recovery) lives in
:mod:`._loading`; the registry is the façade that registers and resolves.
"""

from __future__ import annotations

import itertools
import sys
import threading
from collections.abc import Callable, Iterator, Sequence

from ._discovery import CORE_DISTRIBUTION, Controls, PlannedSource
from ._loading import NOUN, Load, Loader, Source, SourceInfo, current_load, import_chain, record, text_of
from ._targets import canonical_kind, host_of, is_host_target, parse_target
from ._types import CODE_ORIGIN, CODEGEN_GROUP, HOOK_GROUP, HostCodegen, Origin, Record, hook_type

TYPE_CHECKING = False  # typing costs import time on the first-use path; checkers read True
if TYPE_CHECKING:
    from typing import Any

    from tvm.ir import IRModule
    from tvm.runtime import Module
    from tvm.target import Target

    from ._errors import DuplicateRegistrationError
    from ._types import HostCodegenHook

__all__ = ["Registration", "Registry", "SourceInfo", "current_registry"]

_RESOLVE_CACHE_LIMIT = 1024
_REFRESH_RETRIES = 64  # bound on re-asking when refresh() keeps overtaking a resolution
_GLOBAL_FUNC_MODULE = __name__.rpartition(".")[0] + "._global_func"
_set = object.__setattr__  # sets a field of a frozen record


class Registration(Record):
    """A codegen or hook registered under a kind, with where it came from (immutable).

    ``seq`` is the registration order (an ``override`` registers anew, as in TileLang:
    the new one comes after the kind's other registrations of equal priority).
    ``default`` marks a client's own codegen (TileLang's, registered by
    :mod:`tilelang_hostcg.tilelang`): it serves only when no other registration matches.
    """

    __slots__ = (  # noqa: RUF023  # fields in order
        "kind", "obj", "origin", "seq", "default",
    )
    kind: str
    obj: HostCodegen | HostCodegenHook
    origin: Origin
    seq: int
    default: bool

    def __init__(self, kind: str, obj: HostCodegen | HostCodegenHook, origin: Origin, seq: int,
                 default: bool = False) -> None:
        # One is made per registration: the fields are set directly (init_fields is generic).
        _set(self, "kind", kind)
        _set(self, "obj", obj)
        _set(self, "origin", origin)
        _set(self, "seq", seq)
        _set(self, "default", default)

    @property
    def name(self) -> str:
        """The codegen's or hook's name."""
        return self.obj.name

    @property
    def priority(self) -> int:
        """The codegen's or hook's priority."""
        return self.obj.priority


def current_registry(default: Callable[[], Registry]) -> Registry:
    """The registry a module-level call acts on: the one loading a plugin in this
    thread, else ``default()``."""
    load = current_load()
    return load.registry if load is not None else default()


def _sort_key(reg: Registration) -> tuple[int, int]:
    return (-reg.obj.priority, reg.seq)


def _duplicate_error(group: str, kind: str, obj: HostCodegen | HostCodegenHook,
                     old: Registration) -> DuplicateRegistrationError:
    from ._errors import DuplicateRegistrationError  # here: the errors are off the first-use path

    return DuplicateRegistrationError(
        f"{NOUN[group].capitalize()} {obj.name!r} is already registered for "
        f"target kind {kind!r} ({old.origin.describe()}); pass override=True to "
        "replace it, or give the new one another name",
        kind=kind, name=obj.name)


def _inserted(current: list[Registration], old: Registration | None,
              new: Registration) -> list[Registration]:
    """``current`` without ``old``, with ``new`` placed last among its priority."""
    updated = [r for r in current if r is not old] if old is not None else current.copy()
    # ``updated`` is in order and ``new`` comes last among its priority: insert it
    # there rather than sort.
    at, priority = len(updated), new.obj.priority
    while at and updated[at - 1].obj.priority < priority:
        at -= 1
    updated.insert(at, new)
    return updated


class Registry:
    """Host codegens and hooks by target kind, with lazy plugin loading.

    ``Registry()`` is empty and reads no entry points; ``Registry(discover=True)``
    reads the installed entry points (and the ``TILELANG_HOSTCG_*`` controls, unless
    ``controls`` is given) at first use. All methods are thread-safe. Targets may be
    given as a ``Target``, a kind name, a dict or TVM's JSON text.
    """

    def __init__(self, *, discover: bool = False, controls: Controls | None = None,
                 index_loader: Callable[[Controls], Sequence[PlannedSource]] | None = None,
                 ) -> None:
        self._lock = threading.RLock()
        self._seq = itertools.count()
        self._codegens: dict[str, list[Registration]] = {}
        self._hooks: dict[str, list[Registration]] = {}
        self._resolved: dict[Any, HostCodegen] = {}
        self._by_kind: dict[str, HostCodegen] = {}
        self._loader = Loader(self, discover=discover, controls=controls,
                              index_loader=index_loader)

    # ------------------------------------------------------------------ registration
    def register_host_codegen(self, target_host_kind: str, codegen: HostCodegen, *,
                              override: bool = False, origin: Origin | None = None,
                              default: bool = False) -> HostCodegen:
        """Register ``codegen`` for a host kind; a duplicate name raises unless ``override``
        (which removes the old one and appends ``codegen``, as TileLang does). Returns
        ``codegen``.

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
        a duplicate name raises unless ``override`` (remove, then append). ``origin`` as
        for :meth:`register_host_codegen`. Returns ``hook``."""
        if not isinstance(hook, hook_type()):
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
        registers its codegens on import. Called again in code for the same kind, the new
        path replaces the old one (never imported unless it already was), as in TileLang."""
        self._register_lazy(CODEGEN_GROUP, target_host_kind, import_path)

    def register_lazy_host_codegen_hooks(self, target_kind: str, import_path: str) -> None:
        """Import ``import_path`` before hooks of ``target_kind`` are first applied (one lazy
        module per kind registered in code: a second call replaces the path)."""
        self._register_lazy(HOOK_GROUP, target_kind, import_path)

    def _register_lazy(self, group: str, kind: str, import_path: str) -> None:
        if not isinstance(kind, str) or not kind:
            raise TypeError(f"target kind must be a non-empty string, got {kind!r}")
        if not isinstance(import_path, str) or not import_path.strip():
            raise TypeError(f"import_path must be a non-empty module path, got {import_path!r}")
        self._route(group, kind, import_path, False)

    def _register(self, group: str, kind: str, obj: HostCodegen | HostCodegenHook,
                  override: bool, origin: Origin | None = None, default: bool = False) -> None:
        if not isinstance(kind, str) or not kind:
            raise TypeError(f"target kind must be a non-empty string, got {kind!r}")
        if origin is not None and origin.group is not None:
            raise ValueError("origin= describes a registration made in code: its group must be None "
                             "(entry-point origins are recorded by discovery)")
        if origin is not None:
            # It names where it comes from (a client's own, e.g. TileLang's defaults): it
            # belongs there whoever registers it, even a plugin being imported (not journaled).
            self._apply(group, canonical_kind(kind), kind, obj, override, origin, default)
            return
        self._route(group, kind, obj, override, origin, default)

    def _route(self, group: str, kind: str, obj: HostCodegen | HostCodegenHook | str,
               override: bool, origin: Origin | None = None, default: bool = False) -> None:
        """Send a registration made by code to where it belongs: the plugin being loaded
        (when its module made it), the entry point naming the module that made it, or
        this registry as a registration in code."""
        chain = import_chain()
        if chain:
            record(chain, group, kind, obj, override)
        load = current_load(self)
        if load is not None:
            owner = self._loader.owner(chain)
            if owner is None or owner == load.source.module:
                self._loader.admit(load, group, kind, obj, override, replay=False)
            # Otherwise another entry point names the module that made it: that entry
            # point gets it (replayed from the module's journal) when its kind is used.
            return
        if isinstance(obj, str):
            self._loader.add_lazy(group, kind, obj, None)
        else:
            self._apply(group, canonical_kind(kind), kind, obj, override, origin or CODE_ORIGIN,
                        default)

    def _apply(self, group: str, canon: str, kind: str, obj: HostCodegen | HostCodegenHook,
               override: bool, origin: Origin, default: bool = False) -> tuple[Any, ...]:
        """Add one registration; returns how to undo it."""
        table = self._table(group)
        with self._lock:
            current = table.get(canon, [])
            old = None
            for reg in current:
                if reg.obj.name == obj.name:
                    old = reg
                    break
            return self._place(table, current, group, canon, kind, obj, override, origin, old,
                               default)

    def _place(self, table: dict[str, list[Registration]], current: list[Registration],
               group: str, canon: str, kind: str, obj: HostCodegen | HostCodegenHook,
               override: bool, origin: Origin, old: Registration | None,
               default: bool = False) -> tuple[Any, ...]:
        """Register ``obj`` among the kind's ``current`` registrations, replacing ``old``
        (the one of the same name, if any); the lock is held. Returns how to undo it."""
        if old is not None and not override:
            raise _duplicate_error(group, kind, obj, old)
        new = Registration(canon, obj, origin, next(self._seq), default)
        table[canon] = _inserted(current, old, new)
        self._invalidate()
        return ("replace", table, canon, old, new) if old is not None else (
            "add", table, canon, new)

    def _apply_in_load(self, load: Load, group: str, canon: str, kind: str, obj: Any,
                       override: bool, origin: Origin, replay: bool) -> None:
        """Apply a registration belonging to ``load``; one already here is counted, and one
        made in code by importing the plugin's module by hand becomes the plugin's."""
        # One pass over the kind's registrations finds both the same object (counted or
        # adopted) and one of the same name (replaced or refused), as :meth:`_apply` would.
        table = self._table(group)
        name = obj.name
        with self._lock:
            current = table.get(canon, [])
            old = None
            for reg in current:
                if reg.obj is obj:
                    if reg.origin.distribution is None and origin.distribution is not None:
                        # Ordered as if registered now: the plugin's place in load order.
                        new = Registration(canon, obj, origin, next(self._seq))
                        regs = [new if r is reg else r for r in current]
                        regs.sort(key=_sort_key)
                        table[canon] = regs
                        load.undo.append(("adopt", table, canon, reg, new))
                        self._invalidate()
                    return
                if old is None and reg.obj.name == name:
                    old = reg
            load.undo.append(self._place(table, current, group, canon, kind, obj, override,
                                         origin, old))

    def _table(self, group: str) -> dict[str, list[Registration]]:
        return self._codegens if group == CODEGEN_GROUP else self._hooks

    def _invalidate(self) -> None:
        # New dicts rather than clear(): a concurrent reader keeps a consistent snapshot.
        self._resolved = {}
        self._by_kind = {}

    def _rollback(self, undo: list[tuple[Any, ...]]) -> None:
        with self._lock:
            for item in reversed(undo):
                if item[0] == "lazy":
                    self._loader.undo_lazy(item[1])
                    continue
                table, canon = item[1], item[2]
                regs = list(table.get(canon, []))
                new = item[-1]
                regs = [r for r in regs if r is not new]
                if item[0] == "replace":  # put the overridden one back ("adopt": it is the plugin's)
                    regs.append(item[3])
                    regs.sort(key=_sort_key)
                table[canon] = regs
            self._invalidate()

    def _drop_distributions(self) -> None:
        with self._lock:
            for table in (self._codegens, self._hooks):
                for kind, regs in list(table.items()):
                    # Made in code (those given an origin= naming a client such as
                    # TileLang included): kept.
                    table[kind] = [r for r in regs
                                   if r.origin.distribution is None or r.origin.group is None]

    # ------------------------------------------------------------------ discovery
    def refresh(self) -> None:
        """Re-read the installed entry points (after ``pip install`` in a running process).

        Registrations that came from distributions are dropped and their sources
        rebuilt; failed plugins are retried; registrations made in code stay. Safe at
        any moment, from any thread or from a plugin being imported: the next call
        loads again.
        """
        self._loader.refresh()

    def load_all(self) -> None:
        """Import every lazy source now (for ``check`` and ``list --load``); never raises
        for a broken plugin."""
        self._loader.load_all()

    # ------------------------------------------------------------------ introspection
    def sources(self) -> list[SourceInfo]:
        """Every lazy source known to this registry, discovered or registered in code."""
        return self._loader.infos()

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
        self._loader.ensure_discovered()
        return self._loader.controls

    @property
    def _controls(self) -> Controls:
        return self._loader.controls

    # ------------------------------------------------------------------ resolution
    def resolve_host_codegen(self, target_host: Target | str | dict[str, Any]) -> HostCodegen:
        """The host codegen for ``target_host`` (a host target, or a device target whose
        host is used), given as a ``Target``, a kind name, a dict or JSON text.

        Raises :class:`NoHostCodegenError` when nothing matches,
        :class:`AmbiguousHostCodegenError` on a tie across distributions, and
        :class:`PluginLoadError` when the kind's only providers failed to load.
        """
        try:
            hit = self._resolved.get(target_host)
        except TypeError:  # a dict: the slow path parses it
            hit = None
        return hit if hit is not None else self._resolve(target_host)

    def _host_candidates(self, target: Target,
                         ) -> tuple[Target, str, Sequence[Registration], list[Registration],
                                    list[Source]]:
        """Host target, kind, registrations, matching ones and failed sources for ``target``."""
        host = host_of(target)
        kind = canonical_kind(host.kind.name)
        loader = self._loader
        for _ in range(_REFRESH_RETRIES):
            generation = loader.generation
            loader.ensure_loaded(CODEGEN_GROUP, kind)
            regs = self._codegens.get(kind, ())
            matched = self._matching(regs, host)
            # "Nothing matches" seen across a concurrent refresh() may be a table caught
            # between drop and reload: ask again (a match is true whenever it was seen).
            if matched or generation == loader.generation:
                break
        return host, kind, regs, matched, loader.problems(CODEGEN_GROUP, kind)

    def _resolve(self, given: Any) -> HostCodegen:
        cache, by_kind = self._resolved, self._by_kind
        target = parse_target(given)
        if by_kind:
            hit = by_kind.get(target.kind.name)
            if hit is not None and is_host_target(target):
                if isinstance(given, str) and len(cache) < _RESOLVE_CACHE_LIMIT:
                    cache[given] = hit
                return hit
        host, kind, regs, matched, problems = self._host_candidates(target)
        self._controls.check_preference(kind, (r.obj.name for r in regs))
        if not matched:
            from ._failures import no_codegen_error  # here: failures are off the first-use path

            raise no_codegen_error(self, kind, host, problems)
        self._warn_skipped(problems, f"host kind {kind!r}")
        choice = self._choose(kind, matched)
        with self._lock:
            if cache is self._resolved and (CODEGEN_GROUP, kind) in self._loader.ready:
                if host is target and all(r.obj.supports_target is None for r in regs):
                    # The answer depends on the kind alone: any host target of this kind gets it.
                    by_kind[target.kind.name] = choice
                if len(cache) >= _RESOLVE_CACHE_LIMIT:
                    cache.clear()
                if isinstance(given, str) or given is target:  # immutable keys only
                    cache[given] = choice
        return choice

    def _matching(self, regs: Sequence[Registration], target: Target) -> list[Registration]:
        matched = []
        for reg in regs:
            if not build_available(reg.obj):
                continue  # its TVM build function is missing from the TVM in use
            predicate = reg.obj.supports_target
            if predicate is None:
                matched.append(reg)
                continue
            try:
                ok = predicate(target)
            except Exception as exc:  # a plugin's predicate must not break resolution
                from ._errors import warn_plugin  # here: the errors are off the first-use path

                warn_plugin(f"supports_target of {reg.obj.name!r} ({reg.origin.describe()}) "
                            f"raised {type(exc).__name__}: {text_of(exc)}; treating it as not "
                            "matching. Fix the plugin's predicate.")
                continue
            if ok is True:
                matched.append(reg)
            elif ok is not False:
                from ._errors import warn_plugin

                warn_plugin(f"supports_target of {reg.obj.name!r} ({reg.origin.describe()}) "
                            f"returned {type(ok).__name__} {ok!r:.60}, not a bool; treating it as "
                            "not matching. Fix the plugin's predicate to return True or False.")
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
            from ._failures import ambiguous_error

            raise ambiguous_error(kind, matched[0].obj.priority, dists)
        return top[0].obj  # type: ignore[return-value]

    def _warn_skipped(self, problems: list[Source], what: str) -> None:
        for source in problems:
            if source.warned:
                continue
            source.warned = not source.transient
            from ._errors import warn_plugin

            warn_plugin(f"{source.failure_text()}; it is skipped for {what}. {source.advice()}")

    def allowed_host_codegens_for_target(self, target_host: Target | str | dict[str, Any],
                                         ) -> list[str]:
        """Names of the codegens matching ``target_host``, best first; broken plugins warn."""
        _, kind, _, matched, problems = self._host_candidates(parse_target(target_host))
        self._warn_skipped(problems, f"host kind {kind!r}")
        names = [r.obj.name for tier in self.tiers(kind, matched) for r in tier]
        preferred = self._controls.prefer.get(kind)
        if preferred in names:  # first, as resolution picks it (TileLang: resolve is allowed[0])
            names.remove(preferred)
            names.insert(0, preferred)
        return names

    def matching_hooks(self, target: Target | str | dict[str, Any]) -> list[Registration]:
        """The hooks that apply to device ``target``, in the order they run (broken hook
        providers warn)."""
        target = parse_target(target)
        kind = canonical_kind(target.kind.name)
        self._loader.ensure_loaded(HOOK_GROUP, kind)
        self._warn_skipped(self._loader.problems(HOOK_GROUP, kind), f"hooks of kind {kind!r}")
        return self._matching(self._hooks.get(kind, ()), target)

    def apply_host_codegen_hooks(self, mod: IRModule, target_host: Target | str | dict[str, Any],
                                 target: Target | str | dict[str, Any] | None) -> IRModule:
        """Run the hooks of ``target``'s kind on ``mod``; ``target=None`` returns ``mod``.

        As for codegens: when the kind's advertised hook providers all failed to load and
        nothing else registered hooks for it, raises :class:`PluginLoadError`; with another
        provider serving, the failed ones are skipped with a :class:`PluginWarning`. A hook
        returning anything but an ``IRModule`` raises :class:`PluginCallbackError`.
        """
        if target is None:
            return mod
        device = parse_target(target)
        # Passed to the hooks as given when None (a hook may then use target.host), as TileLang does.
        host = parse_target(target_host) if target_host is not None else None
        kind = canonical_kind(device.kind.name)
        for _ in range(_REFRESH_RETRIES):
            generation = self._loader.generation
            self._loader.ensure_loaded(HOOK_GROUP, kind)
            if self._hooks.get(kind) or generation == self._loader.generation:
                break
        problems = self._loader.problems(HOOK_GROUP, kind)
        if problems and not self._hooks.get(kind):
            from ._failures import load_error

            raise load_error(f"No host codegen hook for target {kind!r} can run", kind,
                             problems[0])
        regs = self.matching_hooks(device)
        if not regs:
            return mod
        from tvm.ir import IRModule

        for reg in regs:
            hook: Any = reg.obj
            try:
                result = hook.lower(mod, host, device)
            except Exception as exc:
                if hasattr(exc, "add_note"):
                    exc.add_note(f"raised by host codegen hook {reg.obj.name!r} "
                                 f"({reg.origin.describe()})")
                raise
            if not isinstance(result, IRModule):
                from ._failures import bad_hook_result

                raise bad_hook_result(reg, result, kind)
            mod = result
        return mod

    def build_host(self, host_mod: IRModule, target_host: Target | str | dict[str, Any],
                   target: Target | str | dict[str, Any] | None = None) -> Module:
        """Apply hooks, resolve the host codegen and build ``host_mod`` with this registry.

        A codegen whose build returns anything but a runtime ``Module`` raises
        :class:`PluginCallbackError` naming it and its origin.
        """
        host = parse_target(target_host)
        host_mod = self.apply_host_codegen_hooks(host_mod, host, target)
        codegen = self.resolve_host_codegen(host)
        result = codegen.lower(host_mod, host)
        from tvm.runtime import Module as RuntimeModule

        if not isinstance(result, RuntimeModule):
            kind = canonical_kind(host_of(host).kind.name)
            origin = next((r.origin for r in self._codegens.get(kind, ()) if r.obj is codegen),
                          CODE_ORIGIN)
            from ._failures import bad_build_result

            raise bad_build_result(codegen, origin, result, kind)
        return result

    def build(self, func_or_mod: Any, target: Any = None, pipeline: Any = "default") -> Module:
        """Compile like ``tvm.tirx.build``, building the host module through this registry."""
        from ._build import build

        return build(self, func_or_mod, target, pipeline)

    def __iter__(self) -> Iterator[Registration]:
        return iter(self.registrations(CODEGEN_GROUP) + self.registrations(HOOK_GROUP))


def build_available(obj: object) -> bool:
    """Whether the TVM build function that ``obj``'s ``build`` calls exists (``True`` when
    the build is not a :func:`global_func_host_codegen`)."""
    global_func = sys.modules.get(_GLOBAL_FUNC_MODULE)
    if global_func is None:  # no global_func_host_codegen() exists yet: nothing to check
        return True
    name = global_func.required_global_func(getattr(obj, "build", None))
    if name is None:
        return True
    tvm = sys.modules.get("tvm")
    if tvm is not None:  # the TVM in use: no need for ._tvm to find it
        return tvm.get_global_func(name, allow_missing=True) is not None
    from ._tvm import get_global_func

    return get_global_func(name) is not None
