"""The registry object: registration, resolution, hooks and builds over a registration table."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from typing import TYPE_CHECKING, Any

from ..core import (
    CODE_ORIGIN,
    CODEGEN_GROUP,
    HOOK_GROUP,
    ClientDefaults,
    HostCodegen,
    HostCodegenHook,
    Origin,
    PredicatePluginWarning,
    add_note,
    is_core,
)
from ..diagnosis import Finding, warn
from ..discovery import Controls, warn_control_problems
from ..environment import canonical_kind, host_of, is_host_target, parse_target
from ._loading import IndexLoader, Loader, Watch
from ._resolution import (
    Candidate,
    Resolution,
    bad_build_result,
    bad_hook_result,
    decide,
    judge,
    load_error,
    provenance_note,
)
from ._sources import Source, SourceInfo
from ._table import Registration, RegistrationTable

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Sequence

    from tvm.ir import IRModule
    from tvm.runtime import Module
    from tvm.target import Target

    from ..core import TargetLike

_RESOLVE_CACHE_LIMIT = 1024
CallWatch = Callable[[Registration], AbstractContextManager[None]]


def _check_kind(kind: object) -> None:
    if not isinstance(kind, str) or not kind:
        raise TypeError(f"target kind must be a non-empty string, got {kind!r}")


class Registry:
    """Host codegens and hooks by target kind, with lazy plugin loading; thread-safe.

    ``Registry(discover=True)`` reads the installed entry points (and the ``TILELANG_HOSTCG_*`` controls,
    unless ``controls`` is given) at first use. ``watch(origin)`` surrounds each plugin's import.
    ``client_defaults``: the joiners of a client that routes builds into this registry, called before
    each decision (default: none of its own, until a client's ``install(registry=...)`` adds one)."""

    def __init__(self, *, discover: bool = False, controls: Controls | None = None,
                 index_loader: IndexLoader | None = None, watch: Watch | None = None,
                 client_defaults: ClientDefaults | None = None) -> None:
        self._table = RegistrationTable()
        self._loader = Loader(self._table, self, discover=discover, controls=controls,
                              index_loader=index_loader, watch=watch)
        self._call_watch: CallWatch | None = None
        self.client_defaults = ClientDefaults() if client_defaults is None else client_defaults
        self.client_defaults.read_by(self._forget_answers)

    def watch_calls(self, watch: CallWatch | None) -> None:
        """Run each codegen's and hook's ``lower`` inside ``watch(registration)`` from now on (``None``: plainly
        again): ``check``'s probe process tells with it what it is about to call."""
        self._call_watch = watch

    def _calling(self, reg: Registration | None) -> AbstractContextManager[None]:
        watch = self._call_watch
        return nullcontext() if watch is None or reg is None else watch(reg)

    def _forget_answers(self) -> None:
        """Drop the remembered resolutions (a client's defaults join or leave)."""
        with self._table.lock:
            self._table.invalidate()

    def register_host_codegen(self, target_host_kind: str, codegen: HostCodegen, *, override: bool = False,
                              origin: Origin | None = None, default: bool = False) -> HostCodegen:
        """Register ``codegen`` for a host kind and return it; a duplicate name raises unless ``override``.
        ``origin`` says where it comes from; ``default=True`` serves only when nothing else matches."""
        if not isinstance(codegen, HostCodegen):
            raise TypeError(f"register_host_codegen expects a HostCodegen, got {codegen!r}")
        self._register(CODEGEN_GROUP, target_host_kind, codegen, override, origin, default)
        return codegen

    def register_host_codegen_hook(self, target_kind: str, hook: HostCodegenHook, *, override: bool = False,
                                   origin: Origin | None = None, default: bool = False) -> HostCodegenHook:
        """Register ``hook`` for a device kind and return it; as :meth:`register_host_codegen`
        (``default=True``: a client's own hook, left out where another client brings its own)."""
        if not isinstance(hook, HostCodegenHook):
            raise TypeError(f"register_host_codegen_hook expects a HostCodegenHook, got {hook!r}")
        self._register(HOOK_GROUP, target_kind, hook, override, origin, default)
        return hook

    def unregister_host_codegen(self, target_host_kind: str, name: str) -> Registration | None:
        """Remove the codegen called ``name`` from a host kind; returns its registration or ``None``."""
        return self._table.remove(CODEGEN_GROUP, canonical_kind(target_host_kind), name)

    def unregister_host_codegen_hook(self, target_kind: str, name: str) -> Registration | None:
        """Remove the hook called ``name`` from a device kind; as :meth:`unregister_host_codegen`."""
        return self._table.remove(HOOK_GROUP, canonical_kind(target_kind), name)

    def register_lazy_host_codegen(self, target_host_kind: str, import_path: str) -> None:
        """Import ``import_path`` when ``target_host_kind`` is first used (a later call replaces it)."""
        self._register_lazy(CODEGEN_GROUP, target_host_kind, import_path)

    def register_lazy_host_codegen_hooks(self, target_kind: str, import_path: str) -> None:
        """Import ``import_path`` before hooks of ``target_kind`` are first applied (as above)."""
        self._register_lazy(HOOK_GROUP, target_kind, import_path)

    def _register_lazy(self, group: str, kind: str, import_path: str) -> None:
        _check_kind(kind)
        if not isinstance(import_path, str) or not import_path.strip():
            raise TypeError(f"import_path must be a non-empty module path, got {import_path!r}")
        self._loader.register(group, kind, import_path, False)

    def _register(self, group: str, kind: str, obj: HostCodegen | HostCodegenHook, override: bool,
                  origin: Origin | None, default: bool = False) -> None:
        _check_kind(kind)
        if origin is None:
            self._loader.register(group, kind, obj, override, default)
        elif origin.group is not None:
            raise ValueError("origin= describes a registration made in code: its group must be None "
                             "(entry-point origins are recorded by discovery)")
        else:  # it belongs there, even when a plugin being imported registers it
            self._table.apply(group, canonical_kind(kind), kind, obj, override, origin, default)

    def refresh(self) -> None:
        """Re-read the installed entry points: plugins' registrations dropped, failed ones retried."""
        self._loader.refresh()

    def load_all(self) -> None:
        """Import every lazy source now; never raises for a broken plugin."""
        self._loader.load_all()

    def sources(self) -> list[SourceInfo]:
        """Every lazy source known to this registry, discovered or registered in code."""
        return self._loader.infos()

    def registrations(self, group: str = CODEGEN_GROUP, kind: str | None = None) -> list[Registration]:
        """Current registrations of a group, for one kind or all, without loading anything."""
        if kind is not None:
            return list(self._table.of(group, canonical_kind(kind)))
        return self._table.all(group)

    @property
    def controls(self) -> Controls:
        """The controls in force (read from the environment at discovery)."""
        self._loader.ensure_discovered()
        return self._loader.controls

    def __iter__(self) -> Iterator[Registration]:
        return iter(self.registrations(CODEGEN_GROUP) + self.registrations(HOOK_GROUP))

    def resolve_host_codegen(self, target_host: TargetLike) -> HostCodegen:
        """The host codegen for ``target_host`` (or a device target's host); raises a ``HostCodegenError``."""
        try:
            hit = self._table.resolved.get(target_host)
        except TypeError:  # a dict: the slow path parses it
            hit = None
        return hit if hit is not None else self._resolve(target_host)

    def resolution(self, target_host: TargetLike) -> Resolution:
        """How ``target_host`` resolves, as a record (what ``explain`` shows); never raises for a plugin."""
        resolution, problems = self._decide(parse_target(target_host))
        self._warn(resolution, problems, always=True)
        return resolution

    def client_resolution(self, target_host: Target, kind: str, default: HostCodegen | None, client: str,
                          leave_out: Collection[object] = ()) -> Resolution:
        """How ``target_host`` (of ``kind``) resolves for ``client``, which brings its own codegen of the kind
        (``default``) rather than registering it: among the kind's codegens but the core's own, the clients'
        defaults and the objects in ``leave_out``, with ``default`` as the client default. Warns as a
        resolution does; never raises (the record's ``error`` says why nothing is chosen). Where the
        answer depends on the kind alone, it is kept for the kind until the registrations change."""
        table = self._table
        cache = table.clients
        key = None
        if not leave_out and is_host_target(target_host):
            key = (CODEGEN_GROUP, kind, default.name if default is not None else None)
            hit = cache.get(key)
            if hit is not None:
                return hit  # type: ignore[no-any-return]
        host = host_of(target_host)
        kind = canonical_kind(host.kind.name)
        settled = self._loader.settled(CODEGEN_GROUP, kind)
        regs = [r for r in settled.registrations if not r.default and not _is_core(r.origin)
                and not any(r.obj is obj for obj in leave_out)]
        if default is not None:
            regs.append(Registration(kind, default, Origin(client), -1, default=True))
        resolution = decide(kind, host, regs, [s.info() for s in settled.problems], settled.disabled,
                            settled.controls)
        self._warn(resolution, settled.problems)
        if key is not None and resolution.choice is not None and _by_kind_alone(resolution.candidates):
            self._keep(cache, key, (CODEGEN_GROUP, kind), resolution)
        return resolution

    def client_hooks(self, target: Target, leave_out: Collection[object] = ()) -> tuple[list[Registration],
                                                                                         list[SourceInfo]]:
        """The hooks of device ``target``'s kind that apply to it, in run order, but the clients' own and
        the objects in ``leave_out``; and the kind's hook sources the controls skip. A failed plugin warns
        (it never fails the build). Kept for the kind as :meth:`client_resolution` keeps its answer."""
        cache = self._table.clients
        key = (HOOK_GROUP, target.kind.name) if not leave_out else None
        hit = cache.get(key) if key is not None else None
        if hit is not None:
            return hit  # type: ignore[no-any-return]
        kind, candidates, problems = self._hooks(target)
        _warn_skipped(problems, f"hooks of kind {kind!r}", self.controls)
        regs = [c.registration for c in candidates if c.matches and not c.registration.default
                and not any(c.registration.obj is obj for obj in leave_out)]
        answer = regs, self._loader.settled(HOOK_GROUP, kind).disabled
        if key is not None and _by_kind_alone(candidates):
            self._keep(cache, key, (HOOK_GROUP, kind), answer)
        return answer

    def _keep(self, cache: dict[Any, Any], key: Any, loaded: tuple[str, str], answer: Any) -> None:
        """Keep ``answer`` under ``key`` where the kind is loaded and the table has not changed since."""
        table = self._table
        with table.lock:
            if cache is table.clients and loaded in self._loader.ready and len(cache) < _RESOLVE_CACHE_LIMIT:
                cache[key] = answer

    def _decide(self, target: Target) -> tuple[Resolution, list[Source]]:
        host = host_of(target)
        kind = canonical_kind(host.kind.name)
        self.client_defaults.join(self, kind)  # before any answer, not at a client's first build
        settled = self._loader.settled(CODEGEN_GROUP, kind)
        resolution = decide(kind, host, settled.registrations, [s.info() for s in settled.problems], settled.disabled,
                            settled.controls)
        return resolution, settled.problems

    def _warn(self, resolution: Resolution, problems: Sequence[Source], *, always: bool = False) -> None:
        """Warn of a PREFER naming nothing, odd predicates and (``always``, or on a match) failed plugins."""
        if resolution.unknown_preference is not None:  # check's `control` problem too
            warn_control_problems([resolution.unknown_preference])
        _warn_predicates(resolution.candidates)
        if always or resolution.matching:
            _warn_skipped(problems, f"host kind {resolution.kind!r}", self.controls)

    def _resolve(self, given: Any) -> HostCodegen:
        table = self._table
        cache, by_kind = table.resolved, table.by_kind
        target = parse_target(given)
        if by_kind:
            hit = by_kind.get(target.kind.name)
            if hit is not None and is_host_target(target):
                if (isinstance(given, str) or given is target) and len(cache) < _RESOLVE_CACHE_LIMIT:
                    cache[given] = hit
                return hit
        resolution, problems = self._decide(target)
        self._warn(resolution, problems)
        if resolution.choice is None:
            assert resolution.error is not None
            raise resolution.error
        choice = resolution.choice.registration.obj
        assert isinstance(choice, HostCodegen)
        with table.lock:
            if cache is table.resolved and (CODEGEN_GROUP, resolution.kind) in self._loader.ready:
                if resolution.host is target and all(
                        c.registration.obj.supports_target is None for c in resolution.candidates):
                    # The answer depends on the kind alone: any host target of this kind gets it.
                    by_kind[target.kind.name] = choice
                if len(cache) >= _RESOLVE_CACHE_LIMIT:
                    cache.clear()
                if isinstance(given, str) or given is target:  # immutable keys only
                    cache[given] = choice
        return choice

    def allowed_host_codegens_for_target(self, target_host: TargetLike) -> list[str]:
        """Names of the codegens matching ``target_host``, best first; broken plugins warn."""
        return [c.registration.name for c in self.resolution(target_host).matching]

    def _hooks(self, device: Target) -> tuple[str, list[Candidate], list[Source]]:
        """The device kind, its hooks judged for ``device`` in run order, and its failed hook providers."""
        kind = canonical_kind(device.kind.name)
        settled = self._loader.settled(HOOK_GROUP, kind)
        out = [Candidate(reg, *judge(reg, device), None) for reg in settled.registrations]
        _warn_predicates(out)
        return kind, out, settled.problems

    def hook_candidates(self, target: TargetLike) -> list[Candidate]:
        """Every hook of device ``target``'s kind, judged for it, in the order they run."""
        kind, candidates, problems = self._hooks(parse_target(target))
        _warn_skipped(problems, f"hooks of kind {kind!r}", self.controls)
        return candidates

    def matching_hooks(self, target: TargetLike) -> list[Registration]:
        """The hooks that apply to device ``target``, in the order they run."""
        return [c.registration for c in self.hook_candidates(target) if c.matches]

    def apply_host_codegen_hooks(self, mod: IRModule, target_host: TargetLike | None,
                                 target: TargetLike | None) -> IRModule:
        """Run the hooks of ``target``'s kind on ``mod``; ``target=None`` returns ``mod``."""
        if target is None:
            return mod
        device = parse_target(target)
        # None is passed on as given (a hook may then use target.host), as TileLang does.
        host = parse_target(target_host) if target_host is not None else None
        kind, candidates, problems = self._hooks(device)
        if problems and not candidates:
            raise load_error(f"No host codegen hook for target {kind!r} can run", kind, problems[0].info(),
                             self.controls)
        _warn_skipped(problems, f"hooks of kind {kind!r}", self.controls)
        for reg in (c.registration for c in candidates if c.matches):
            mod = self.apply_hook(reg, mod, host, device)
        return mod

    def apply_hook(self, reg: Registration, mod: IRModule, target_host: Target | None, target: Target) -> IRModule:
        """``mod`` after the registered hook ``reg`` (its exception gains a provenance note; a result that is
        no ``IRModule`` is a :class:`PluginCallbackError`)."""
        from tvm.ir import IRModule  # here: TVM is in use once a hook runs
        hook: Any = reg.obj
        with self._calling(reg):  # what it returns is part of the call
            try:
                result = hook.lower(mod, target_host, target)
            except Exception as exc:
                add_note(exc, provenance_note(reg, (), self.controls))
                raise
            if not isinstance(result, IRModule):
                raise bad_hook_result(reg, result, reg.kind)
        return result

    def build_host(self, host_mod: IRModule, target_host: TargetLike, target: TargetLike | None = None) -> Module:
        """Apply hooks, resolve the host codegen and build ``host_mod`` (errors gain a provenance note)."""
        host = parse_target(target_host)
        host_mod = self.apply_host_codegen_hooks(host_mod, host, target)
        codegen = self.resolve_host_codegen(host)
        kind = canonical_kind(host_of(host).kind.name)
        reg = next((r for r in self._table.of(CODEGEN_GROUP, kind) if r.obj is codegen), None)
        if reg is None:  # no longer registered: no provenance to tell
            return self.build_with(Registration(kind, codegen, CODE_ORIGIN, -1), host_mod, host, None)
        return self.build_with(reg, host_mod, host, lambda: self._decide(host_of(host))[0].matching)

    def build_with(self, reg: Registration, host_mod: IRModule, target_host: Target,
                   alternatives: Callable[[], Sequence[Candidate]] | None) -> Module:
        """``host_mod`` built by the codegen ``reg``: its exception gains a provenance note naming the
        ``alternatives`` a PREFER may choose (asked only then; ``None``: no note); a result that is no runtime
        ``Module`` is a :class:`PluginCallbackError`."""
        codegen: Any = reg.obj
        with self._calling(reg):  # what it returns is part of the call
            try:
                result = codegen.lower(host_mod, target_host)
            except Exception as exc:
                if alternatives is not None:  # a PREFER suggestion names what serves the target and can build
                    names = [c.registration.name for c in alternatives()]
                    add_note(exc, provenance_note(reg, names, self.controls))
                raise
            from tvm.runtime import Module as RuntimeModule  # here: TVM is in use once built
            if not isinstance(result, RuntimeModule):
                raise bad_build_result(codegen, reg.origin, result, reg.kind)
        return result


def _by_kind_alone(candidates: Sequence[Candidate]) -> bool:
    """Whether an answer over these candidates holds for every target of their kind (no predicate)."""
    return all(c.registration.obj.supports_target is None for c in candidates)


def _is_core(origin: Origin) -> bool:
    """Whether a registration is the core's own (this package's codegens)."""
    return is_core(origin.distribution)


def _warn_predicates(candidates: Sequence[Candidate]) -> None:
    for c in candidates:
        if c.verdict in ("raised", "not-bool"):
            reg = c.registration
            warn(Finding.of(PredicatePluginWarning, reg.kind, kind=reg.kind, name=reg.name,
                            distribution=reg.origin.distribution, entry_point=reg.origin.entry_point,
                            verdict=c.verdict, detail=c.detail, origin=reg.origin.describe()))


def _warn_skipped(problems: Sequence[Source], what: str, controls: Controls) -> None:
    for source in problems:
        if source.warned:
            continue
        source.warned = not source.transient
        from ._failures import failure_finding  # on failure only

        warn(failure_finding(source.info(), controls, what=what))
