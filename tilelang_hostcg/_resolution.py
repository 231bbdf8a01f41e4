"""Resolution as a record of its reasoning: the one place that decides "matches", "can build" and "chosen"."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ._errors import AmbiguousHostCodegenError, NoHostCodegenError, PluginCallbackError, PluginLoadError, text_of
from ._names import CORE_DISTRIBUTION
from ._targets import required_global_funcs
from ._tvm import describe_tvm, get_global_func
from ._types import HostCodegenHook, Verdict
from .discovery._controls import ENV_DISABLE, ENV_PREFER

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from tvm.target import Target

    from ._errors import HostCodegenError
    from ._plugin_sources import SourceInfo
    from ._table import Registration
    from ._types import HostCodegen, Origin
    from .discovery._planning import Controls

def missing_build(obj: object) -> str | None:
    """The first TVM global function ``obj`` needs that the TVM in use lacks (the one "can build" rule)."""
    return next((name for name in required_global_funcs(obj) if get_global_func(name) is None), None)


def judge(reg: Registration, target: Target) -> tuple[Verdict, str | None]:
    """The verdict on ``reg`` for ``target`` and its detail; only a predicate returning ``True`` matches."""
    missing = missing_build(reg.obj)
    if missing is not None:
        return "missing-build", missing
    predicate = reg.obj.supports_target
    if predicate is None:
        return "match", None
    try:
        ok = predicate(target)
    except Exception as exc:  # a plugin's predicate must not break resolution
        return "raised", f"{type(exc).__name__}: {text_of(exc)}"
    if ok is True:
        return "match", None
    if ok is False:
        return "no-match", None
    try:
        shown = f"{ok!r:.60}"
    except Exception:
        shown = "<unprintable>"
    return "not-bool", f"{type(ok).__name__} {shown}"


@dataclass(frozen=True, slots=True)
class Candidate:
    """One registration judged for one target (``tier``: 0 first, 1 client default, 2 superseded core)."""

    registration: Registration
    verdict: Verdict
    detail: str | None
    tier: int | None

    @property
    def matches(self) -> bool:
        """Whether it serves the target."""
        return self.verdict == "match"

    @property
    def buildable(self) -> bool:
        """Whether it can build with the TVM in use (whatever the target)."""
        return self.verdict != "missing-build"


@dataclass(frozen=True, slots=True)
class Resolution:
    """How a host target resolves: candidates in order, failed and disabled sources, then ``choice`` or ``error``."""

    kind: str
    host: Target
    candidates: tuple[Candidate, ...]
    failed: tuple[SourceInfo, ...]
    disabled: tuple[SourceInfo, ...]
    preferred: str | None
    choice: Candidate | None
    why: str | None
    error: HostCodegenError | None
    preference_problem: str | None = None

    @property
    def matching(self) -> list[Candidate]:
        """The candidates that match, best first (as ``allowed_host_codegens_for_target``)."""
        found = sorted((c for c in self.candidates if c.matches), key=lambda c: c.tier or 0)  # stable
        if self.choice is not None and self.why == "preferred":
            found.remove(self.choice)
            found.insert(0, self.choice)
        return found


def decide(kind: str, host: Target, regs: Sequence[Registration], failed: Sequence[SourceInfo],
           disabled: Sequence[SourceInfo], controls: Controls) -> Resolution:
    """Judge ``regs`` (the kind's registrations, in order) for ``host`` and choose."""
    preferred = controls.prefer.get(kind)
    superseding = any(r.default for r in regs)
    candidates = []
    for reg in regs:
        verdict, detail = judge(reg, host)
        tier = None if verdict != "match" else 1 if reg.default else (
            2 if superseding and reg.origin.distribution == CORE_DISTRIBUTION else 0)
        candidates.append(Candidate(reg, verdict, detail, tier))
    matching = [c for c in candidates if c.matches]
    choice: Candidate | None = None
    why: str | None = None
    error: HostCodegenError | None = None
    if not matching:
        error = (load_error(f"No host codegen for target host {kind!r}", kind, failed[0], controls)
                 if failed else _no_codegen_error(kind, host, candidates, disabled))
    else:
        choice = next((c for c in matching if c.registration.name == preferred), None)
        if choice is not None:
            why = "preferred"
        else:
            best = min(c.tier or 0 for c in matching)
            tiered = [c for c in matching if c.tier == best]
            top = [c for c in tiered if c.registration.priority == tiered[0].registration.priority]
            dists = {d: c.registration for c in reversed(top)  # each distribution's first
                     if (d := c.registration.origin.distribution) is not None}
            if len(dists) > 1:
                error = _ambiguous_error(kind, tiered[0].registration.priority, dists, controls)
            else:
                choice = top[0]
                why = ("default" if best == 1 else "only" if len(matching) == 1
                       else "order" if len(top) > 1 else "priority")
    problem = (controls.unknown_preference(kind, (c.registration.name for c in candidates))
               if preferred is not None else None)
    return Resolution(kind, host, tuple(candidates), tuple(failed), tuple(disabled), preferred,
                      choice, why, error, problem.message if problem is not None else None)


_FIRST_PARTY = {"cuda_host": "tilelang-hostcg-cuda"}


def _no_codegen_error(kind: str, host: Target, candidates: Sequence[Candidate],
                      disabled: Sequence[SourceInfo]) -> NoHostCodegenError:
    """TileLang's sentence, what is registered, what was skipped and what to do."""
    names = [c.registration.name for c in candidates]
    message = (f"No host codegen registered for target host '{kind}'. "
               f"Available: {', '.join(names) if names else '<none>'}. ")
    if names:
        text = str(host)
        text = text if len(text) <= 120 else text[:117] + "..."
        message += (f"None of them supports target {text}: use a target one of them supports, or "
                    "install a plugin for this variant")
    else:
        hint = _FIRST_PARTY.get(kind)
        install = f"`pip install {hint}`" if hint else "a plugin that provides it"
        message += f"Install {install} (see `tilelang-hostcg list`), or register one with register_host_codegen()"
    for info in disabled:
        message += f". Distribution {info.origin.distribution!r} provides it but {info.reason}"
    message += "".join(f". {c.registration.name!r} {cannot_build_text(str(c.detail))}"
                       for c in candidates if not c.buildable)
    return NoHostCodegenError(message + ".", kind=kind, available=tuple(names))


def cannot_build_text(function: str) -> str:
    """Why a codegen cannot build: one wording for errors, ``list``, ``check`` and ``explain``."""
    return f"cannot build with {describe_tvm()}: it needs TVM global function {function!r}"


def can_build_text(obj: object) -> str:
    """That a codegen can build, and with what."""
    names = required_global_funcs(obj)
    found = f" (TVM global function {', '.join(map(repr, names))} found)" if names else ""
    return f"can build with {describe_tvm()}{found}"


def load_error(what: str, kind: str, source: SourceInfo, controls: Controls) -> PluginLoadError:
    """``what`` as a :class:`PluginLoadError` caused by ``source``'s failure to load."""
    from ._failures import advice, failure_text  # on failure only
    err = PluginLoadError(f"{what}: {failure_text(source)}. {advice(source, controls)}", kind=kind,
                          origin=source.origin)
    err.__cause__ = source.error
    return err


def _what(value: object) -> str:
    """A callback's result in a few words."""
    if value is None:
        return "None"
    try:
        text = repr(value)
    except Exception:
        text = ""
    if len(text) > 60 or "\n" in text or not text:
        return f"a {type(value).__name__}"
    return f"{type(value).__name__} {text}"


def _ambiguous_error(kind: str, priority: int, dists: Mapping[str, Registration],
                     controls: Controls) -> AmbiguousHostCodegenError:
    """Codegens of several distributions tied at the top ``priority``."""
    pairs = [(r.obj.name, d) for d, r in sorted(dists.items())]
    listed = " and ".join(f"{n!r} from {d!r}" for n, d in pairs)
    return AmbiguousHostCodegenError(
        f"Ambiguous host codegen for target host {kind!r}: {listed} match with equal priority {priority}. Choose one "
        f"with {controls.suggest(ENV_PREFER, f'{kind}={pairs[0][0]}')}, or uninstall one of the distributions",
        kind=kind, candidates=tuple(pairs))


def bad_hook_result(reg: Registration, result: object, kind: str) -> PluginCallbackError:
    """The error for a hook that returned ``result`` instead of an ``IRModule``."""
    return PluginCallbackError(
        f"Host codegen hook {reg.obj.name!r} ({reg.origin.describe()}) returned {_what(result)} instead of an "
        f"IRModule for target {kind!r}; a hook must return the (possibly new) host module. Fix the hook, or skip "
        "its distribution with TILELANG_HOSTCG_DISABLE", name=reg.obj.name, origin=reg.origin)


def bad_build_result(codegen: HostCodegen, origin: Origin, result: object, kind: str) -> PluginCallbackError:
    """The error for a build that returned ``result`` instead of a runtime Module."""
    return PluginCallbackError(
        f"Host codegen {codegen.name!r} ({origin.describe()}) returned {_what(result)} instead of a runtime "
        f"Module for target host {kind!r}; its build must return the built module. Fix the codegen, or choose "
        "another with TILELANG_HOSTCG_PREFER", name=codegen.name, origin=origin)


def provenance_note(reg: Registration, alternatives: Sequence[str], controls: Controls) -> str:
    """The note a codegen's or hook's exception gains: what raised it, its origin, the control that skips it."""
    is_hook = isinstance(reg.obj, HostCodegenHook)
    what = f"host codegen hook {reg.name!r}" if is_hook else f"host codegen {reg.name!r}"
    note = f"raised by {what} for target kind {reg.kind!r} ({reg.origin.describe()})"
    dist = reg.origin.distribution
    if dist is None or reg.origin.in_code:
        return note + "; it was registered in code, not by a plugin"
    note += (f". Skip it with {controls.suggest(ENV_DISABLE, f'{dist}:{reg.kind}')} (that entry point) or "
             f"{controls.suggest(ENV_DISABLE, dist)} (the distribution)")
    if is_hook:
        return note
    others = [name for name in dict.fromkeys(alternatives) if name != reg.name]
    if others:
        note += ", or choose another codegen with " + " or ".join(
            controls.suggest(ENV_PREFER, f"{reg.kind}={name}") for name in others)
    else:
        note += (f"; no other codegen of kind {reg.kind!r} serves this target and can build with "
                 f"{describe_tvm()}, so {ENV_PREFER} cannot help here")
    return note
