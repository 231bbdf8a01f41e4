"""The ``explain`` document: the resolution record of one target, worded."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from _tilelang_hostcg_switch import ENV_AUTO_INSTALL, activation_off

from ..core import CODEGEN_GROUP, HOOK_GROUP, DeviceAsHostError, SourceState
from ..discovery import ENV_AUTOLOAD_OFF, ENV_PREFER, Controls
from ..environment import canonical_kind, host_of, is_host_target, parse_target, tvm_document
from ..registry import Candidate, Resolution, Standing, Why, verdict_text
from ._report import Doc, Session, describe_state, document, error_doc, registration_doc, source_doc

if TYPE_CHECKING:
    from tvm.target import Target

    from ..registry import Registry, SourceInfo

def _target_json(target: Target) -> Any:
    try:
        return json.loads(str(target))
    except ValueError:
        return str(target)


def explain_document(target: str, host: str | None = None) -> Doc:
    """Why ``target`` (a kind name or JSON form, as ``host``) resolves as it does, and which hooks apply
    in order; raises ``TargetParseError`` or ``DeviceAsHostError`` for bad input."""
    parsed = parse_target(target, host=host)
    device = not is_host_target(parsed)
    target_host = host_of(parsed)
    if device and not is_host_target(target_host):
        where = "--host" if host is not None else "the target's \"host\""
        raise DeviceAsHostError(f"host {target_host.kind.name!r} ({where}) is a device kind; host code is built for a "
                                "host target (TVM device type CPU): give --host llvm, c or cuda_host",
                                kind=target_host.kind.name)
    session = Session()
    session.add_client_defaults()
    registry = session.registry
    with session.capture():
        resolution = registry.resolution(target_host)
        controls = registry.controls
        hooks = _hook_docs(registry, parsed) if device else []
    candidates = _codegen_docs(resolution, registry.sources(), controls)
    selected = next((c for c in candidates if c["selected"]), None)
    error = error_doc(resolution.error)
    if resolution.error is not None and resolution.error.__cause__ is not None and error:
        error["cause"] = error_doc(resolution.error.__cause__)
    return document("explain", tvm_document(), target=_target_json(parsed), device=device,
                    host=_target_json(target_host), host_kind=resolution.kind, host_from=_host_from(parsed, device),
                    prefer=resolution.preferred, codegen=selected, error=error, candidates=candidates,
                    hook_kind=canonical_kind(parsed.kind.name) if device else None, hooks=hooks,
                    controls=_applied_controls(controls, resolution, [*candidates, *hooks]),
                    warnings=session.warnings)


def _host_from(target: Target, device: bool) -> str:
    """Where the host target came from: the target itself, its ``host``, or TVM's default host."""
    if not device:
        return "target"
    if target.host is not None:
        return "target.host"
    return "tvm-default"


def _codegen_reason(resolution: Resolution, c: Candidate, controls: Controls) -> str:
    """Why a codegen candidate was selected or passed over, as the decision placed it."""
    reg, kind, above = c.registration, resolution.kind, c.beaten_by
    if c.standing is Standing.SELECTED:
        return "selected: " + _selected_text(resolution, c)
    if c.standing is Standing.NO_MATCH:
        return "passed over: " + verdict_text(c)
    if c.standing is Standing.TIED:
        return (f"ambiguous: equal top priority {reg.priority} with a codegen of another distribution; choose with "
                f"{controls.suggest(ENV_PREFER, f'{kind}={reg.name}')}")
    if c.standing is Standing.CLIENT_DEFAULT:
        return f"passed over: a default ({reg.origin.describe()}), used only when no other codegen of the kind matches"
    if c.standing is Standing.SUPERSEDED_CORE:
        return f"passed over: the core's own codegen; {kind!r} has a client default, which supersedes it"
    assert above is not None  # the other standings name the registration above
    if c.standing is Standing.BELOW_TIE:
        return f"passed over: priority {reg.priority} is lower than the top match ({above.priority})"
    if c.standing is Standing.NOT_PREFERRED:
        return f"passed over: {ENV_PREFER}={kind}={above.name} chose {above.name!r}"
    if c.standing is Standing.LOWER_PRIORITY:
        return f"passed over: priority {reg.priority} is lower than {above.name!r} ({above.priority})"
    return f"passed over: equal priority {reg.priority}, registered after {above.name!r}"


def _selected_text(resolution: Resolution, chosen: Candidate) -> str:
    """Why the chosen codegen was chosen, in words."""
    reg = chosen.registration
    if resolution.why is Why.PREFERRED:
        return f"preferred by {ENV_PREFER}={resolution.kind}={reg.name}"
    if resolution.why is Why.DEFAULT:
        return f"the default of {reg.origin.describe()} (no other codegen of the kind matches)"
    if resolution.why is Why.ONLY:
        return "the only codegen that matches"
    if resolution.why is Why.ORDER:
        return (f"highest priority {reg.priority}, registered before the others of equal priority "
                "(same distribution or code)")
    return f"highest priority ({reg.priority}) among the matches"


def _codegen_docs(resolution: Resolution, sources: Sequence[SourceInfo], controls: Controls) -> list[Doc]:
    out = []
    for c in resolution.candidates:
        reg = c.registration
        doc = registration_doc(reg, CODEGEN_GROUP)
        doc.update(matches=c.matches, verdict=c.verdict, buildable=c.buildable,
                   selected=c.standing is Standing.SELECTED, state=SourceState.LOADED)
        why = _codegen_reason(resolution, c, controls)
        if doc["replaces_core"]:
            why += f"; replaces the core's {reg.name!r} codegen"
        elif doc["extends_core"] and not doc["default"]:
            why += (f"; an addition to the core's {resolution.kind!r} kind: it wins only where its predicate "
                    "matches and its priority is the highest")
        doc["reason"] = why
        out.append(doc)
    return out + _source_docs(resolution.kind, CODEGEN_GROUP, sources)


_UNLOADED = {CODEGEN_GROUP: ("passed over", {"build_function": None, "matches": None, "verdict": None,
                                             "buildable": None, "cannot_build": None, "selected": False}),
             HOOK_GROUP: ("skipped", {"applies": False, "order": None})}


def _source_docs(kind: str, group: str, sources: Sequence[SourceInfo]) -> list[Doc]:
    """The kind's sources that did not load, shaped as the candidates are (``name: null``)."""
    verb, fields = _UNLOADED[group]
    out = []
    for src in map(source_doc, sources):
        if src["group"] != group or src["kind"] != kind or not SourceState(src["state"]).unusable:
            continue
        doc = {key: src[key] for key in ("distribution", "version", "entry_point", "core", "extends_core", "state",
                                         "error", "traceback")}
        doc.update({"kind": kind, "name": None, "priority": None, "replaces_core": False, "default": False, **fields,
                    "reason": f"{verb}: {describe_state(src)}"})
        out.append(doc)
    return out


def _hook_docs(registry: Registry, target: Target) -> list[Doc]:
    out, order = [], 0
    for c in registry.hook_candidates(target):
        doc = registration_doc(c.registration, HOOK_GROUP)
        order += c.matches
        doc.update(applies=c.matches, order=order if c.matches else None, verdict=c.verdict, state=SourceState.LOADED,
                   reason=f"applies, #{order} (priority {c.registration.priority})" if c.matches
                   else "skipped: " + verdict_text(c))
        out.append(doc)
    out.sort(key=lambda d: (d["order"] is None, d["order"] or 0))
    return out + _source_docs(canonical_kind(target.kind.name), HOOK_GROUP, registry.sources())


def _applied_controls(controls: Controls, resolution: Resolution, entries: Sequence[Doc]) -> list[Doc]:
    """Every control that touched an explain answer: ``{"variable", "item", "effect"}``."""
    out: list[Doc] = []
    if activation_off(os.environ):
        out.append({"variable": ENV_AUTO_INSTALL, "item": os.environ[ENV_AUTO_INSTALL],
                    "effect": "activation is off: TVM and TileLang build stock host code; this is "
                    "tilelang_hostcg.build()'s answer"})
    if not controls.autoload:
        out.append({"variable": ENV_AUTOLOAD_OFF, "item": "1",
                    "effect": "no plugin's entry point was read: only the core's codegens and those "
                    "registered in code take part"})
    kind, prefer = resolution.kind, resolution.preferred
    if prefer is not None:
        if resolution.why is Why.PREFERRED:
            effect = f"chose {prefer!r} over priority and ties"
        elif resolution.unknown_preference is not None:  # the resolution's own finding, read, not derived
            effect = resolution.unknown_preference.message
        else:
            effect = f"{prefer!r} does not match this target; resolution went by priority"
        out.append({"variable": ENV_PREFER, "item": f"{kind}={prefer}", "effect": effect})
    for entry in entries:
        if entry["state"] != SourceState.DISABLED or entry["distribution"] is None:
            continue
        control = controls.skip_control(entry["distribution"], entry["kind"])
        if control is not None:
            out.append({"variable": control[0], "item": control[1],
                        "effect": f"skipped entry point '{entry['entry_point']}' of {entry['distribution']!r}"})
    return out
