"""A host plan: what one compiler's host build runs for its targets, resolved once — the codegen and
the hooks, each the compiler's own or a plugin's — and the cache-key fingerprint made from that
resolution. The one rule for the native API (:func:`tilelang_hostcg.native.plan`) and for the
routed TileLang integration's cache keys."""

from __future__ import annotations

import contextvars
import hashlib
import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core import HostCodegenError, NativeDefaultError, NoHostCodegenError
from ..discovery import ENV_PREFER
from ..registry import Registration, Why, run_order
from ._native_state import NATIVE

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from ..discovery import Controls
    from ..registry import Candidate, Registry, SourceInfo

# The plugins' codegens and hooks running in this context: a build one of them starts through the
# compiler (a helper compiled with tvm.compile) is planned past them, never into them again.
_RUNNING: contextvars.ContextVar[tuple[object, ...]] = contextvars.ContextVar("tilelang_hostcg_running",
                                                                              default=())


def call_build(default: Any, mod: Any, target_host: Any) -> Any:
    """Build with one of the compiler's codegens as it holds it (``build``, or a callable)."""
    build = getattr(default, "build", None)
    return build(mod, target_host) if callable(build) else default(mod, target_host)


def call_apply(default: Any, mod: Any, target_host: Any, target: Any) -> Any:
    """Apply one of the compiler's hooks as it holds it (``apply``, or a callable)."""
    apply = getattr(default, "apply", None)
    return apply(mod, target_host, target) if callable(apply) else default(mod, target_host, target)


@dataclass(frozen=True)
class _Own:
    """One of the compiler's own codegens or hooks, called as the compiler holds it."""

    name: str
    obj: Any

    def entry(self) -> list[Any]:
        return ["own", self.name]

    def build(self, mod: Any, target_host: Any) -> Any:
        return call_build(self.obj, mod, target_host)

    def apply(self, mod: Any, target_host: Any, target: Any) -> Any:
        return call_apply(self.obj, mod, target_host, target)


@dataclass(frozen=True)
class _Plugin:
    """A registered codegen or hook (a plugin's, or the program's), run through the registry, which
    checks its result and names it in its errors; while it runs, builds it starts plan past it."""

    reg: Registration
    registry: Registry
    alternatives: tuple[Candidate, ...] = ()

    @property
    def name(self) -> str:
        return self.reg.name

    def entry(self) -> list[Any]:
        reg, origin = self.reg, self.reg.origin
        if origin.distribution is None:  # the program's: its code is what it is
            func = getattr(reg.obj, "build", None) or getattr(reg.obj, "apply", None)
            where = f"{getattr(func, '__module__', '?')}:{getattr(func, '__qualname__', '?')}"
            return ["code", reg.name, reg.priority, where]
        return [origin.distribution, origin.version or "", origin.entry_point or "", reg.name, reg.priority]

    def _enter(self) -> contextvars.Token[tuple[object, ...]]:
        running = _RUNNING.get()
        if any(obj is self.reg.obj for obj in running):
            raise HostCodegenError(
                f"{self.reg.name!r} ({self.reg.origin.describe()}) started a build through the compiler while it "
                "runs, and that build was planned before it ran, so it would run itself again without end; plan "
                "the inner build inside (a new compile does), or build the helper without the compiler")
        return _RUNNING.set((*running, self.reg.obj))

    def build(self, mod: Any, target_host: Any) -> Any:
        token = self._enter()
        try:
            return self.registry.build_with(self.reg, mod, target_host, lambda: self.alternatives)
        finally:
            _RUNNING.reset(token)

    def apply(self, mod: Any, target_host: Any, target: Any) -> Any:
        token = self._enter()
        try:
            return self.registry.apply_hook(self.reg, mod, target_host, target)
        finally:
            _RUNNING.reset(token)


@dataclass(frozen=True)
class _Missing:
    """No codegen for the host kind (or none can be chosen): the build raises ``error``, as the
    compiler's own lookup would at that stage."""

    error: HostCodegenError
    name = None

    def entry(self) -> list[Any]:
        return ["none", type(self.error).__name__]

    def build(self, mod: Any, target_host: Any) -> Any:
        raise self.error.with_traceback(None)


_Step = _Own | _Plugin | _Missing


@dataclass(frozen=True, eq=False)
class HostPlan:
    """What one compiler's host build runs for ``target_host`` (and device ``target``), resolved once by
    :func:`tilelang_hostcg.native.plan`; the compiler keeps it for the compilation.

    ``codegen``: the name of the codegen :meth:`build` runs (``None``: none serves the host kind, and
    :meth:`build` raises :class:`~tilelang_hostcg.NoHostCodegenError`); ``hooks``: the names of the
    hooks :meth:`apply_hooks` runs, in order; ``third_party``: whether anything other than the
    compiler's own codegens and hooks runs; ``fingerprint``: for the compiler's cache keys, ``None``
    exactly when ``third_party`` is false (keys unchanged), else a short string made from this
    resolution (each codegen and hook that runs, its distribution and version, and the controls
    that decided), the same in every process with the same installed set and controls."""

    client: str
    target_host: Any
    target: Any
    codegen: str | None
    hooks: tuple[str, ...]
    third_party: bool
    fingerprint: str | None
    _codegen: _Step | None = field(repr=False)
    _hooks: tuple[_Own | _Plugin, ...] = field(repr=False)
    _controls: tuple[str, ...] = field(repr=False)

    def build(self, mod: Any) -> Any:
        """The runtime module of host ``mod``, built by :attr:`codegen` (the compiler's own is called as
        it is, its result returned as it is)."""
        NATIVE.count(self.client)
        if self._codegen is None:
            raise NativeDefaultError(f"this plan of {self.client} resolved no host codegen (it was made for hooks "
                                     "only); make the plan with the compiler's codegens to build with it")
        return self._codegen.build(mod, self.target_host)

    def apply_hooks(self, mod: Any) -> Any:
        """Host ``mod`` after :attr:`hooks`, in order, each given ``(mod, target_host, target)`` as
        ``Target`` objects (``mod`` itself where no device target was given)."""
        NATIVE.count(self.client)
        for hook in self._hooks:
            mod = hook.apply(mod, self.target_host, self.target)
        return mod

    def document(self) -> dict[str, Any]:
        """The resolution the fingerprint is made from, JSON-ready: the codegen and the hooks, each the
        compiler's own (``["own", name]``) or a registration's (distribution, version, entry point, name,
        priority), and the controls that decided."""
        return document_of(self.client, self._codegen, self._hooks, self._controls)


def document_of(client: str, codegen: _Step | None, hooks: Sequence[_Own | _Plugin],
                controls: Sequence[str]) -> dict[str, Any]:
    """What a plan's fingerprint is made from (see :meth:`HostPlan.document`)."""
    return {"client": client, "codegen": codegen.entry() if codegen is not None else None,
            "hooks": [step.entry() for step in hooks], "controls": sorted(set(controls))}


def name_of(obj: Any, fallback: str) -> str:
    """The name a compiler's own codegen or hook goes by: its ``name``, else ``fallback``."""
    name = getattr(obj, "name", None)
    return name if isinstance(name, str) and name else fallback


def make_plan(registry: Registry | None, target_host: Any, target: Any, codegens: Mapping[str, Any] | None,
              hooks: Sequence[Any], client: str) -> HostPlan:
    """The plan of ``client``'s host build (targets parsed already; ``codegens`` ``None``: no codegen
    resolved, for a plan that only applies hooks). ``registry`` ``None``: the compiler's own decide alone."""
    controls: list[str] = []
    codegen = None if codegens is None else _codegen_step(registry, target_host, codegens, client, controls)
    steps: tuple[_Own | _Plugin, ...] = ()
    if target is not None:
        steps = _hook_steps(registry, target_host, target, hooks, client, controls)
    third_party = isinstance(codegen, _Plugin) or any(isinstance(step, _Plugin) for step in steps)
    fingerprint = fingerprint_of(document_of(client, codegen, steps, controls)) if third_party else None
    name = codegen.name if codegen is not None else None
    return HostPlan(client, target_host, target, name, tuple(step.name for step in steps), third_party, fingerprint,
                    codegen, steps, tuple(controls))


def fingerprint_of(document: Mapping[str, Any]) -> str:
    """The fingerprint of a resolution's document: 16 hex digits of its SHA-256."""
    text = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _codegen_step(registry: Registry | None, host: Any, codegens: Mapping[str, Any], client: str,
                  controls: list[str]) -> _Step:
    kind = host.kind.name
    own = codegens.get(kind)
    name = f"{client}-{kind}"
    if registry is None:
        return _Own(name, own) if own is not None else _Missing(_no_codegen(client, kind, codegens))
    default = None if own is None else NATIVE.default_codegen(name)
    resolution = registry.client_resolution(host, kind, default, client, _RUNNING.get())
    if resolution.disabled:
        controls += _skipping(resolution.disabled, registry.controls)
    choice = resolution.choice
    if choice is None:
        assert resolution.error is not None
        return _Missing(resolution.error)
    if resolution.why is Why.PREFERRED:
        controls.append(f"{ENV_PREFER}={resolution.kind}={choice.registration.name}")
    if choice.registration.default:
        return _Own(name, own)
    return _Plugin(choice.registration, registry, tuple(resolution.matching))


def _hook_steps(registry: Registry | None, host: Any, device: Any, hooks: Sequence[Any], client: str,
                controls: list[str]) -> tuple[_Own | _Plugin, ...]:
    kind = device.kind.name
    own = [_Own(name_of(hook, f"{client}-{kind}-{i}"), hook) for i, hook in enumerate(hooks)]
    if registry is None:
        return tuple(own)
    regs, disabled = registry.client_hooks(device, _RUNNING.get())
    if disabled:
        controls += _skipping(disabled, registry.controls)
    if not regs:
        return tuple(own)
    # The compiler's own hooks stand as registered first, at priority 0: the registry's one order.
    ranked: list[tuple[tuple[int, int], _Own | _Plugin]] = [
        (run_order(0, i - len(own)), step) for i, step in enumerate(own)]
    ranked += [(run_order(reg.priority, reg.seq), _Plugin(reg, registry)) for reg in regs]
    return tuple(step for _, step in sorted(ranked, key=lambda pair: pair[0]))


def _skipping(disabled: Sequence[SourceInfo], controls: Controls) -> list[str]:
    """The controls that skipped these sources, as ``VARIABLE=item``."""
    found = []
    for info in disabled:
        control = controls.skip_control(info.origin.distribution or "", info.kind)
        if control is not None:
            found.append(f"{control[0]}={control[1]}")
    return found


def _no_codegen(client: str, kind: str, codegens: Mapping[str, Any]) -> NoHostCodegenError:
    """A host kind with neither a plugin's codegen nor the compiler's own (TileLang's own lookup also
    raises a ``ValueError`` here)."""
    has = sorted(codegens)
    other = (f"it has {', '.join(has)}), and no installed plugin provides one. Build for one of those host kinds, or"
             if has else "it has none), and no installed plugin provides one:")
    return NoHostCodegenError(f"No host codegen for target host {kind!r}: {client} has none for it ({other} install "
                              f"a plugin distribution that provides {kind!r}", kind=kind, available=tuple(has))

