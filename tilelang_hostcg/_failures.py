"""The errors of resolution and building, worded once: what went wrong, where it came from
and what to do next."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._errors import AmbiguousHostCodegenError, NoHostCodegenError, PluginCallbackError, PluginLoadError
from ._tvm import describe_tvm
from ._types import HostCodegenHook

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from tvm.target import Target

    from ._resolution import Candidate
    from ._sources import SourceInfo
    from ._table import Registration
    from ._types import HostCodegen, Origin

__all__ = ["ambiguous_error", "bad_build_result", "bad_hook_result", "cannot_build_text", "load_error",
           "missing_build_note", "no_codegen_error", "provenance_note"]

# First-party plugins named in "nothing found" messages.
_FIRST_PARTY = {"cuda_host": "tilelang-hostcg-cuda"}


def no_codegen_error(kind: str, host: Target, candidates: Sequence[Candidate],
                     disabled: Sequence[SourceInfo]) -> NoHostCodegenError:
    """The error for a host kind none of whose ``candidates`` matches: TileLang's sentence,
    what is registered, what was skipped and what to do."""
    names = [c.registration.name for c in candidates]
    message = (f"No host codegen registered for target host '{kind}'. "
               f"Available: {', '.join(names) if names else '<none>'}. ")
    if names:
        message += (f"None of them supports target {_short(host)}: use a target one of "
                    "them supports, or install a plugin for this variant")
    else:
        hint = _FIRST_PARTY.get(kind)
        install = f"`pip install {hint}`" if hint else "a plugin that provides it"
        message += (f"Install {install} (see `tilelang-hostcg list`), or register one "
                    "with register_host_codegen()")
    for info in disabled:
        message += f". Distribution {info.origin.distribution!r} provides it but {info.reason}"
    message += missing_build_note(candidates)
    return NoHostCodegenError(message + ".", kind=kind, available=names)


def cannot_build_text(function: str) -> str:
    """Why a codegen cannot build: one wording for errors, ``list``, ``check`` and ``explain``."""
    return f"cannot build with {describe_tvm()}: it needs TVM global function {function!r}"


def missing_build_note(candidates: Sequence[Candidate]) -> str:
    """A sentence naming the candidates whose TVM build function is missing."""
    return "".join(f". {c.registration.name!r} {cannot_build_text(str(c.detail))}"
                   for c in candidates if not c.buildable)


def load_error(what: str, kind: str, source: SourceInfo) -> PluginLoadError:
    """``what`` as a :class:`PluginLoadError` caused by ``source``'s failure to load."""
    err = PluginLoadError(f"{what}: {source.failure_text()}. {source.advice()}", kind=kind,
                          origin=source.origin)
    err.__cause__ = source.error
    return err


def _what(value: object) -> str:
    """A one-line description of a callback's result."""
    if value is None:
        return "None"
    try:
        text = repr(value)
    except Exception:
        text = ""
    if len(text) > 60 or "\n" in text or not text:
        return f"a {type(value).__name__}"
    return f"{type(value).__name__} {text}"


def _short(target: Target) -> str:
    text = str(target)
    return text if len(text) <= 120 else text[:117] + "..."


def ambiguous_error(kind: str, priority: int, dists: Mapping[str, Registration],
                    ) -> AmbiguousHostCodegenError:
    """The error for codegens of several distributions tied at the top ``priority``."""
    pairs = [(r.obj.name, d) for d, r in sorted(dists.items())]
    listed = " and ".join(f"{n!r} from {d!r}" for n, d in pairs)
    return AmbiguousHostCodegenError(
        f"Ambiguous host codegen for target host {kind!r}: {listed} match with equal "
        f"priority {priority}. Choose one with "
        f"TILELANG_HOSTCG_PREFER={kind}={pairs[0][0]}, or uninstall one of the "
        "distributions", kind=kind, candidates=pairs)


def bad_hook_result(reg: Registration, result: object, kind: str) -> PluginCallbackError:
    """The error for a hook that returned ``result`` instead of an ``IRModule``."""
    return PluginCallbackError(
        f"Host codegen hook {reg.obj.name!r} ({reg.origin.describe()}) returned "
        f"{_what(result)} instead of an IRModule for target {kind!r}; a hook must "
        "return the (possibly new) host module. Fix the hook, or skip its "
        "distribution with TILELANG_HOSTCG_DISABLE", name=reg.obj.name,
        origin=reg.origin)


def bad_build_result(codegen: HostCodegen, origin: Origin, result: object, kind: str,
                     ) -> PluginCallbackError:
    """The error for a codegen whose build returned ``result`` instead of a runtime Module."""
    return PluginCallbackError(
        f"Host codegen {codegen.name!r} ({origin.describe()}) returned {_what(result)} "
        f"instead of a runtime Module for target host {kind!r}; its build must return "
        "the built module. Fix the codegen, or choose another with "
        "TILELANG_HOSTCG_PREFER", name=codegen.name, origin=origin)


def provenance_note(reg: Registration, others: Sequence[Registration]) -> str:
    """The note an exception raised by ``reg``'s codegen or hook gains: what raised it,
    where it comes from, and the control that skips it (``others``: the kind's
    registrations, for an alternative to prefer)."""
    is_hook = isinstance(reg.obj, HostCodegenHook)
    what = f"host codegen hook {reg.name!r}" if is_hook else f"host codegen {reg.name!r}"
    note = f"raised by {what} for target kind {reg.kind!r} ({reg.origin.describe()})"
    dist = reg.origin.distribution
    if dist is None or reg.origin.group is None:
        return note + "; it was registered in code, not by a plugin"
    note += (f". Skip it with TILELANG_HOSTCG_DISABLE={dist}:{reg.kind} (that entry point) or "
             f"TILELANG_HOSTCG_DISABLE={dist} (the distribution)")
    other = next((r.name for r in others if r.name != reg.name), None)
    if not is_hook:
        note += (f", or choose another codegen with TILELANG_HOSTCG_PREFER={reg.kind}="
                 f"{other or '<name>'}")
    return note
