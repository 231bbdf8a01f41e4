"""Resolution as a record of its reasoning: the one place that decides "matches", "can build" and "chosen"."""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import Enum, IntEnum
from typing import TYPE_CHECKING

from ..core import (
    CORE_DISTRIBUTION,
    AmbiguousHostCodegenError,
    HostCodegenHook,
    NoHostCodegenError,
    PluginCallbackError,
    PluginLoadError,
    Verdict,
    cut,
    is_core,
    text_of,
)
from ..diagnosis import cannot_build, verdict
from ..discovery import ENV_DISABLE, ENV_PREFER
from ..environment import describe_tvm, get_global_func, required_global_funcs
from ._skipped import skipped_text

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from tvm.target import Target

    from ..core import HostCodegen, HostCodegenError, Origin
    from ..discovery import ControlProblem, Controls
    from ._sources import SourceInfo
    from ._table import Registration


class Tier(IntEnum):
    """Where a matching codegen stands before priorities count: a lower tier is chosen first."""

    PLAIN = 0
    """The ordinary case: a plugin's codegen, one registered in code, the core's own where no client default is."""
    CLIENT_DEFAULT = 1
    """A client's own codegen (TileLang's), used only when no plain codegen of the kind matches."""
    SUPERSEDED_CORE = 2
    """The core's own codegen of a kind that has a client default, which supersedes it."""


class Why(str, Enum):
    """Why the chosen codegen was chosen; each is also its plain word (``Why.ONLY == "only"``)."""

    PREFERRED = "preferred"
    """``TILELANG_HOSTCG_PREFER`` names it, and it matches."""
    DEFAULT = "default"
    """A client default: no plain codegen of the kind matches."""
    ONLY = "only"
    """The one codegen that matches."""
    ORDER = "order"
    """Of the top priority, registered before the others of that priority (same distribution or code)."""
    PRIORITY = "priority"
    """The highest priority among the matches."""

    def __str__(self) -> str:
        return self.value


class Standing(str, Enum):
    """Where a candidate stands in the decision, as the decision made it: chosen, or why not.
    ``Candidate.beaten_by`` names the registration that stood above it, where one did."""

    SELECTED = "selected"
    """Chosen (``Resolution.why`` says why)."""
    NO_MATCH = "no-match"
    """It does not serve the target (its verdict says why)."""
    TIED = "tied"
    """Of the top priority, tied with a codegen of another distribution: nothing is chosen."""
    BELOW_TIE = "below-tie"
    """Below the tied top priority (``beaten_by``: the first of the tie)."""
    NOT_PREFERRED = "not-preferred"
    """``TILELANG_HOSTCG_PREFER`` chose another (``beaten_by``)."""
    CLIENT_DEFAULT = "client-default"
    """A client's default: used only when no plain codegen of the kind matches."""
    SUPERSEDED_CORE = "superseded-core"
    """The core's own codegen of a kind that has a client default, which supersedes it."""
    LOWER_PRIORITY = "lower-priority"
    """A lower priority than the chosen one (``beaten_by``)."""
    LATER = "later"
    """Of the chosen one's priority, registered after it (``beaten_by``)."""

    def __str__(self) -> str:
        return self.value


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
    """One registration judged for one target (``tier``: its :class:`Tier` where it matches, else ``None``)."""

    registration: Registration
    verdict: Verdict
    detail: str | None
    tier: Tier | None
    standing: Standing = Standing.NO_MATCH
    """Where the decision put it (set by :func:`decide`)."""
    beaten_by: Registration | None = None
    """The registration that stood above it, where its standing names one."""

    @property
    def matches(self) -> bool:
        """Whether it serves the target."""
        return self.verdict == "match"

    @property
    def buildable(self) -> bool:
        """Whether it can build with the TVM in use (whatever the target)."""
        return self.verdict != "missing-build"

    @property
    def rank(self) -> Tier:
        """Its tier, for ordering: a candidate that does not match counts as :attr:`Tier.PLAIN`."""
        return Tier.PLAIN if self.tier is None else self.tier


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
    why: Why | None
    error: HostCodegenError | None
    unknown_preference: ControlProblem | None = None
    """``PREFER`` for this kind naming no codegen of it, as a problem (a ``control`` warning)."""

    ranked: tuple[Candidate, ...] = ()
    """The candidates that match, best first, as the decision ordered them."""

    @property
    def preference_problem(self) -> str | None:
        """:attr:`unknown_preference` in words, with what to do."""
        return None if self.unknown_preference is None else self.unknown_preference.message

    @property
    def matching(self) -> list[Candidate]:
        """The candidates that match, best first (as ``allowed_host_codegens_for_target``)."""
        return list(self.ranked)


def decide(kind: str, host: Target, regs: Sequence[Registration], failed: Sequence[SourceInfo],
           disabled: Sequence[SourceInfo], controls: Controls) -> Resolution:
    """Judge ``regs`` (the kind's registrations, in order) for ``host`` and choose."""
    preferred = controls.prefer.get(kind)
    superseding = any(r.default for r in regs)
    candidates = []
    for reg in regs:
        verdict, detail = judge(reg, host)
        tier = _tier(reg, superseding) if verdict == "match" else None
        candidates.append(Candidate(reg, verdict, detail, tier))
    matching = [c for c in candidates if c.matches]
    choice: Candidate | None = None
    why: Why | None = None
    error: HostCodegenError | None = None
    if not matching:
        error = _nothing_matches_error(kind, host, candidates, failed, disabled, controls)
    else:
        choice, why, error = _choose(kind, matching, preferred, controls)
    problem = None
    if preferred is not None:
        problem = controls.unknown_preference(kind, (c.registration.name for c in candidates))
    placed = [_placed(c, choice, why, matching) for c in candidates]
    chosen = placed[candidates.index(choice)] if choice is not None else None
    ranked = sorted((c for c in placed if c.matches), key=lambda c: c.rank)  # stable
    if chosen is not None and why is Why.PREFERRED:
        ranked.remove(chosen)
        ranked.insert(0, chosen)
    return Resolution(kind, host, tuple(placed), tuple(failed), tuple(disabled), preferred,
                      chosen, why, error, problem, tuple(ranked))


def _placed(c: Candidate, choice: Candidate | None, why: Why | None, matching: Sequence[Candidate]) -> Candidate:
    """``c`` with its standing in the decision, and the registration above it where there is one."""
    if c is choice:
        return replace(c, standing=Standing.SELECTED)
    if not c.matches:
        return c
    if choice is None:  # a tie of distributions at the top
        _, top = top_matches(matching)
        if c in top:
            return replace(c, standing=Standing.TIED)
        return replace(c, standing=Standing.BELOW_TIE, beaten_by=top[0].registration)
    winner = choice.registration
    if why is Why.PREFERRED:
        return replace(c, standing=Standing.NOT_PREFERRED, beaten_by=winner)
    if c.rank > choice.rank:
        tiered = Standing.CLIENT_DEFAULT if c.tier is Tier.CLIENT_DEFAULT else Standing.SUPERSEDED_CORE
        return replace(c, standing=tiered)
    if c.registration.priority < winner.priority:
        return replace(c, standing=Standing.LOWER_PRIORITY, beaten_by=winner)
    return replace(c, standing=Standing.LATER, beaten_by=winner)


def _tier(reg: Registration, superseding: bool) -> Tier:
    """The tier of a matching registration (``superseding``: the kind has a client default)."""
    if reg.default:
        return Tier.CLIENT_DEFAULT
    if superseding and is_core(reg.origin.distribution):
        return Tier.SUPERSEDED_CORE
    return Tier.PLAIN


def _choose(kind: str, matching: Sequence[Candidate], preferred: str | None,
            controls: Controls) -> tuple[Candidate | None, Why | None, HostCodegenError | None]:
    """The choice among the ``matching`` candidates and why, or the ambiguity that prevents one."""
    for candidate in matching:
        if candidate.registration.name == preferred:
            return candidate, Why.PREFERRED, None
    best, top = top_matches(matching)
    top_priority = top[0].registration.priority
    dists = _first_of_each_distribution(top)
    if len(dists) > 1:
        return None, None, _ambiguous_error(kind, top_priority, dists, controls)
    return top[0], _why(best, matching, top), None


def top_matches(matching: Sequence[Candidate]) -> tuple[Tier, list[Candidate]]:
    """The best tier among the ``matching`` candidates (in resolution order), and its candidates of
    the top priority: the first of them wins, unless they come from more than one distribution."""
    best = min(c.rank for c in matching)
    tiered = [c for c in matching if c.tier == best]
    top_priority = max(c.registration.priority for c in tiered)
    return best, [c for c in tiered if c.registration.priority == top_priority]


def _why(best: Tier, matching: Sequence[Candidate], top: Sequence[Candidate]) -> Why:
    """Why the first of ``top`` (the matches of the ``best`` tier at its top priority) wins."""
    if best == Tier.CLIENT_DEFAULT:
        return Why.DEFAULT
    if len(matching) == 1:
        return Why.ONLY
    if len(top) > 1:
        return Why.ORDER
    return Why.PRIORITY


def _first_of_each_distribution(candidates: Sequence[Candidate]) -> dict[str, Registration]:
    """Each distribution's first registration among ``candidates`` (registrations made in code have none)."""
    found: dict[str, Registration] = {}
    for candidate in candidates:
        dist = candidate.registration.origin.distribution
        if dist is not None and dist not in found:
            found[dist] = candidate.registration
    return found


def _nothing_matches_error(kind: str, host: Target, candidates: Sequence[Candidate], failed: Sequence[SourceInfo],
                           disabled: Sequence[SourceInfo], controls: Controls) -> HostCodegenError:
    """The error when no candidate matches: the first failed plugin's, else "no host codegen"."""
    if failed:
        return load_error(f"No host codegen for target host {kind!r}", kind, failed[0], controls)
    return _no_codegen_error(kind, host, candidates, disabled, controls)


_FIRST_PARTY = {"cuda_host": "tilelang-hostcg-cuda"}


def _first_party_install(distribution: str) -> str:
    """How to install the first-party plugin ``distribution`` (read from how tilelang-hostcg was installed)."""
    from importlib.metadata import Distribution, PackageNotFoundError

    from ..environment import direct_url, first_party_install_as_installed
    try:
        core = direct_url(Distribution.from_name(CORE_DISTRIBUTION))
    except (PackageNotFoundError, OSError, ValueError):
        core = {}
    return first_party_install_as_installed(distribution, core)


def _no_codegen_error(kind: str, host: Target, candidates: Sequence[Candidate],
                      disabled: Sequence[SourceInfo], controls: Controls) -> NoHostCodegenError:
    """TileLang's sentence, what is registered, what was skipped and what to do."""
    names = [c.registration.name for c in candidates]
    message = (f"No host codegen registered for target host '{kind}'. "
               f"Available: {', '.join(names) if names else '<none>'}. ")
    if names:
        text = cut(str(host), 117)
        message += (f"None of them supports target {text}: use a target one of them supports, or "
                    "install a plugin for this variant")
    else:
        hint = _FIRST_PARTY.get(kind)
        skipped = skipped_text(hint, kind, controls) if hint else None
        install = _first_party_install(hint) if hint else "a plugin that provides it"
        message += skipped if skipped else (
            f"Install {install} (see `tilelang-hostcg list`), or register one with register_host_codegen()")
    for info in disabled:
        message += f". Distribution {info.origin.distribution!r} provides it but {info.reason}"
    message += "".join(f". {c.registration.name!r} {cannot_build_text(str(c.detail))}"
                       for c in candidates if not c.buildable)
    return NoHostCodegenError(message + ".", kind=kind, available=tuple(names))


def verdict_text(candidate: Candidate) -> str:
    """Why a candidate that does not match does not, worded by :mod:`..diagnosis` from its verdict."""
    tvm = describe_tvm() if candidate.verdict == "missing-build" else ""
    return verdict(candidate.verdict, candidate.detail, tvm)


def cannot_build_text(function: str) -> str:
    """Why a codegen cannot build with the TVM in use, worded by :mod:`..diagnosis`."""
    return cannot_build(function, describe_tvm())


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
        f"its distribution with {ENV_DISABLE}", name=reg.obj.name, origin=reg.origin)


def bad_build_result(codegen: HostCodegen, origin: Origin, result: object, kind: str) -> PluginCallbackError:
    """The error for a build that returned ``result`` instead of a runtime Module."""
    return PluginCallbackError(
        f"Host codegen {codegen.name!r} ({origin.describe()}) returned {_what(result)} instead of a runtime "
        f"Module for target host {kind!r}; its build must return the built module. Fix the codegen, or choose "
        f"another with {ENV_PREFER}", name=codegen.name, origin=origin)


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
