"""Resolution as a record of its reasoning: the one place that decides "matches", "can build
with the TVM in use" and "chosen". :func:`decide` returns a :class:`Resolution`, which
resolution raises or returns and ``explain``, ``check`` and the errors format."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ._failures import ambiguous_error, load_error, no_codegen_error
from ._global_func import required_global_func
from ._names import CORE_DISTRIBUTION
from ._sources import text_of
from ._tvm import get_global_func
from ._types import Verdict

if TYPE_CHECKING:
    from collections.abc import Sequence

    from tvm.target import Target

    from ._errors import HostCodegenError
    from ._sources import SourceInfo
    from ._table import Registration
    from .discovery import Controls

__all__ = ["Candidate", "Resolution", "decide", "judge", "missing_build"]

TIERS = ("first", "default", "superseded")
"""The tiers resolution tries in turn: registrations that are neither client defaults nor
superseded; then client defaults; then the core's own codegens, which a client default
registered for the kind supersedes."""


def missing_build(obj: object) -> str | None:
    """The TVM global function ``obj``'s build calls when the TVM in use lacks it, else
    ``None`` (also when the build is not a :func:`global_func_host_codegen`)."""
    name = required_global_func(getattr(obj, "build", None))
    if name is None:
        return None
    return name if get_global_func(name) is None else None


def judge(reg: Registration, target: Target) -> tuple[Verdict, str | None]:
    """The verdict on ``reg`` for ``target`` and its detail (the missing function, the
    predicate's exception or odd value). Only a predicate returning ``True`` matches."""
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
    """One registration judged for one target: its ``verdict``, a ``detail`` (the missing
    function, the exception, the odd value) and ``tier``, the index in :data:`TIERS` of a
    matching codegen (``None`` when it does not match)."""

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
    """How a host target resolves: the record resolution, ``explain``, ``check`` and the errors share.

    ``kind``/``host``: the canonical host kind and target judged; ``candidates``: every
    registration of the kind in resolution order; ``failed``/``disabled``: sources that failed
    or a control skipped; ``preferred``/``preference_problem``: the ``PREFER`` name and what is
    wrong with it; ``choice`` and ``why`` (``preferred``, ``default``, ``only``, ``order``,
    ``priority``), else ``error``."""

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
        found = sorted((c for c in self.candidates if c.matches),
                       key=lambda c: c.tier or 0)  # stable: resolution order within a tier
        if self.choice is not None and self.why == "preferred":
            found.remove(self.choice)
            found.insert(0, self.choice)
        return found


def _tier(reg: Registration, superseding: bool) -> int:
    if reg.default:
        return 1
    if superseding and reg.origin.distribution == CORE_DISTRIBUTION:
        return 2
    return 0


def decide(kind: str, host: Target, regs: Sequence[Registration],
           failed: Sequence[SourceInfo], disabled: Sequence[SourceInfo],
           controls: Controls) -> Resolution:
    """Judge ``regs`` (the kind's registrations, in order) for ``host`` and choose, with
    ``controls``' preference for the kind."""
    preferred = controls.prefer.get(kind)
    superseding = any(r.default for r in regs)
    candidates = []
    for reg in regs:
        verdict, detail = judge(reg, host)
        tier = _tier(reg, superseding) if verdict == "match" else None
        candidates.append(Candidate(reg, verdict, detail, tier))
    matching = [c for c in candidates if c.matches]
    choice: Candidate | None = None
    why: str | None = None
    error: HostCodegenError | None = None
    if not matching:
        error = (load_error(f"No host codegen for target host {kind!r}", kind, failed[0])
                 if failed else no_codegen_error(kind, host, candidates, disabled))
    else:
        choice = next((c for c in matching if c.registration.name == preferred), None)
        if choice is not None:
            why = "preferred"
        else:
            best = min(c.tier or 0 for c in matching)
            tiered = [c for c in matching if c.tier == best]
            top = [c for c in tiered if c.registration.priority == tiered[0].registration.priority]
            dists: dict[str, Registration] = {}
            for c in top:
                dist = c.registration.origin.distribution
                if dist is not None:
                    dists.setdefault(dist, c.registration)
            if len(dists) > 1:
                error = ambiguous_error(kind, tiered[0].registration.priority, dists)
            else:
                choice = top[0]
                why = ("default" if best == 1 else "only" if len(matching) == 1
                       else "order" if len(top) > 1 else "priority")
    problem = (controls.unknown_preference(kind, (c.registration.name for c in candidates))
               if preferred is not None else None)
    return Resolution(kind, host, tuple(candidates), tuple(failed), tuple(disabled), preferred,
                      choice, why, error, problem.message if problem is not None else None)
