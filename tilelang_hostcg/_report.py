"""The data behind the command line: pure-data documents for list, check, lock and explain.

Each public function builds one JSON-ready ``dict`` (``"schema": 1``) from a fresh,
discovering :class:`~tilelang_hostcg.Registry`; ``cli.py`` only formats them. The
documents are described in ``docs/cli.md``; changing their shape means a new schema.

User errors (a target TVM cannot parse, an unknown kind, a device kind given as host,
an unreadable lock file) raise :class:`InputError` subclasses or :class:`~tilelang_hostcg.TargetParseError`;
plugin problems never raise, they become entries of the documents.

:func:`list_document` without ``load`` reads installed metadata only: it imports
neither a plugin nor TVM.
"""

from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any

from . import __version__
from ._discovery import (
    CORE_DISTRIBUTION,
    CORE_ENTRY_POINTS,
    Controls,
    DiscoveryIndex,
    PlannedSource,
    normalize_name,
    plan_sources,
)
from ._errors import HostCodegenError, PluginWarning
from ._inputs import DeviceHostError, InputError, LockFileError, UnknownKindError
from ._lockfile import LOCK_SCHEMA, format_lock, read_lock
from ._registry import Registration, Registry, SourceInfo, build_available
from ._targets import canonical_kind
from ._types import CODEGEN_GROUP, HOOK_GROUP

if TYPE_CHECKING:
    from tvm.target import Target

__all__ = [
    "LOCK_SCHEMA",
    "SCHEMA",
    "InputError",
    "LockFileError",
    "UnknownKindError",
    "explain_document",
    "format_lock",
    "list_document",
    "lock_document",
    "read_lock",
]

SCHEMA = 1
"""Version of the JSON documents printed by ``--json``."""

Doc = dict[str, Any]

CORE_KINDS = frozenset(name for group, name, _ in CORE_ENTRY_POINTS if group == CODEGEN_GROUP)
_CORE_NAMES: dict[str, frozenset[str]] = {
    kind: frozenset({kind}) for kind in CORE_KINDS}  # the core names its codegens after kinds
_GROUP_KEY = {CODEGEN_GROUP: "codegens", HOOK_GROUP: "hooks"}


# ---------------------------------------------------------------------- session
class _Session:
    """A fresh discovering registry that also keeps the discovery index it read."""

    def __init__(self) -> None:
        self.index = DiscoveryIndex()
        self.registry = Registry(discover=True, index_loader=self._plan)

    def add_client_defaults(self) -> None:
        """Register TileLang's own codegens and hooks, as ``tilelang_hostcg.tilelang.install()``
        does, where TileLang provides the TVM in use (imports TVM)."""
        from ._tvm import import_tvm

        import_tvm()
        if "tilelang" in sys.modules:
            from .tilelang import UnsupportedTileLangError, add_defaults

            with suppress(UnsupportedTileLangError):  # no integration there: answer for build()
                add_defaults(self.registry)

    def _plan(self, controls: Controls) -> Sequence[PlannedSource]:
        from . import _cache

        if controls.autoload:
            self.index = _cache.load_index(__version__)
        return plan_sources(self.index.entry_points, controls, __version__)


@contextmanager
def _capture(into: list[str]) -> Iterator[None]:
    """Collect plugin warnings as text (deduplicated) instead of printing them.

    Other warnings keep the filters in force and are shown as usual afterwards.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PluginWarning)
        yield
    for item in caught:
        if issubclass(item.category, PluginWarning):
            text = str(item.message)
            if text not in into:
                into.append(text)
        else:
            warnings.showwarning(item.message, item.category, item.filename, item.lineno)


def _error(exc: BaseException | None) -> Doc | None:
    if exc is None:
        return None
    return {"type": type(exc).__name__, "message": str(exc)}


def _is_core(distribution: str | None) -> bool:
    return distribution is not None and normalize_name(distribution) == CORE_DISTRIBUTION


def _source(info: SourceInfo) -> Doc:
    dist = info.origin.distribution
    return {
        "group": info.group,
        "kind": canonical_kind(info.kind),
        "name": info.kind,
        "value": info.value,
        "entry_point": info.origin.entry_point,
        "distribution": dist,
        "version": info.origin.version,
        "location": info.location or None,
        "core": _is_core(dist),
        "extends_core": (info.group == CODEGEN_GROUP and not _is_core(dist)
                         and canonical_kind(info.kind) in CORE_KINDS),
        "state": info.state,
        "reason": info.reason,
        "error": _error(info.error),
    }


def _build_function(reg: Registration) -> str | None:
    from ._global_func import required_global_func

    return required_global_func(getattr(reg.obj, "build", None))


def _registration(reg: Registration, group: str) -> Doc:
    dist = reg.origin.distribution
    foreign_core = group == CODEGEN_GROUP and reg.kind in CORE_KINDS and not _is_core(dist)
    doc = {
        "kind": reg.kind,
        "name": reg.name,
        "priority": reg.priority,
        "distribution": dist,
        "version": reg.origin.version,
        "entry_point": reg.origin.entry_point,
        "core": _is_core(dist),
        "extends_core": foreign_core,
        "replaces_core": foreign_core and reg.name in _CORE_NAMES[reg.kind],
    }
    if group == CODEGEN_GROUP:
        doc["build_function"] = _build_function(reg)
    return doc


def _kinds(registry: Registry, group: str, sources: Sequence[SourceInfo],
           loaded: bool) -> list[Doc]:
    by_kind: dict[str, list[Doc]] = {}
    for info in sources:
        if info.group == group:
            by_kind.setdefault(canonical_kind(info.kind), []).append(_source(info))
    regs = registry.registrations(group) if loaded else []
    regs_by_kind: dict[str, list[Registration]] = {}  # one pass: linear in registrations
    for reg in regs:
        by_kind.setdefault(reg.kind, [])
        regs_by_kind.setdefault(reg.kind, []).append(reg)
    out = []
    for kind in sorted(by_kind):
        entries = by_kind[kind]
        out.append({
            "kind": kind,
            "entry_points": entries,
            "extends_core": any(e["extends_core"] for e in entries),
            "registrations": ([_registration(r, group) for r in regs_by_kind.get(kind, ())]
                              if loaded else None),
        })
    return out


def _duplicates(index: DiscoveryIndex) -> list[Doc]:
    return [{"distribution": name, "locations": list(locations)}
            for name, locations in index.duplicates]


def _controls(controls: Controls) -> Doc:
    return {
        "autoload": controls.autoload,
        "disable": sorted(controls.disable),
        "only": None if controls.only is None else sorted(controls.only),
        "prefer": dict(sorted(controls.prefer.items())),
        "problems": [{"variable": p.variable, "message": p.message} for p in controls.problems],
    }


# ---------------------------------------------------------------------- list
def list_document(*, load: bool = False) -> Doc:
    """Every advertised kind with its entry points (and, with ``load``, what they register).

    Without ``load`` nothing is imported: states are ``lazy``, ``disabled`` or
    ``incompatible``. With ``load`` every plugin is imported and states become
    ``loaded`` or ``broken``; ``registrations`` then lists each kind's codegens or
    hooks in resolution order (it is ``null`` without ``load``).
    """
    session = _Session()
    registry = session.registry
    captured: list[str] = []
    with _capture(captured):
        if load:
            registry.load_all()
        sources = registry.sources()
        controls = registry.controls
    from ._tvm import tvm_document

    return {
        "schema": SCHEMA,
        "command": "list",
        "version": __version__,
        "tvm": tvm_document(import_it=load),
        "loaded": load,
        "controls": _controls(controls),
        "codegens": _kinds(registry, CODEGEN_GROUP, sources, load),
        "hooks": _kinds(registry, HOOK_GROUP, sources, load),
        "duplicates": _duplicates(session.index),
        "warnings": captured,
    }


# ---------------------------------------------------------------------- lock
def _lock_from(registry: Registry, sources: Sequence[SourceInfo]) -> Doc:
    dists: dict[str, str] = {}
    entry_points = []
    for info in sources:
        dist = info.origin.distribution
        if dist is None:
            continue
        dists.setdefault(normalize_name(dist), info.origin.version or "?")
        entry_points.append({"group": info.group, "kind": info.kind, "value": info.value,
                             "distribution": normalize_name(dist)})

    def regs(group: str) -> list[Doc]:
        return sorted(({"kind": r.kind, "name": r.name, "priority": r.priority,
                        "distribution": normalize_name(r.origin.distribution)}
                       for r in registry.registrations(group)
                       if r.origin.distribution is not None), key=_lock_key)

    return {
        "schema": LOCK_SCHEMA,
        "command": "lock",
        "distributions": [{"name": n, "version": v} for n, v in sorted(dists.items())],
        "entry_points": sorted(entry_points, key=_lock_key),
        "codegens": regs(CODEGEN_GROUP),
        "hooks": regs(HOOK_GROUP),
    }


def _lock_key(item: Mapping[str, Any]) -> tuple[str, ...]:
    return tuple(str(item.get(k, "")) for k in ("group", "kind", "name", "distribution", "value"))


def lock_document() -> tuple[Doc, list[str]]:
    """The installed plugin set as a lock document, and the problems worth a note.

    Every plugin is imported so that the names of its codegens and hooks are known.
    The notes list broken or incompatible entry points (they are locked, but
    register nothing) and captured plugin warnings.
    """
    session = _Session()
    registry = session.registry
    notes: list[str] = []
    with _capture(notes):
        registry.load_all()
        sources = registry.sources()
    for info in sources:
        if info.state == "incompatible":
            notes.append(f"plugin {info.origin.describe()} is incompatible: {info.reason}")
        elif info.state == "broken":
            err = info.error
            detail = f"{type(err).__name__}: {err}" if err is not None else "failed to load"
            notes.append(f"plugin {info.origin.describe()} failed to load: {detail}")
    return _lock_from(registry, sources), notes


# ---------------------------------------------------------------------- explain
def _target_json(target: Target) -> Any:
    text = str(target)
    try:
        return json.loads(text)
    except ValueError:
        return text


def _try_match(reg: Registration, target: Target) -> tuple[bool, str | None]:
    try:
        return bool(reg.obj.matches(target)), None
    except Exception as exc:  # a plugin's predicate must not break explain
        return False, f"supports_target raised {type(exc).__name__}: {exc}"


def explain_document(target: str, host: str | None = None) -> Doc:
    """Why ``target`` resolves to the codegen it does, and which hooks apply in order.

    ``target``/``host`` are kind names or TVM's JSON form. Raises
    :class:`~tilelang_hostcg.TargetParseError` when TVM cannot parse them and
    :class:`DeviceHostError` when the host target is a device target. The document's
    ``codegen`` is ``null`` and ``error`` says why whenever nothing resolves;
    ``controls`` lists every ``TILELANG_HOSTCG_*`` item that touched the answer.
    """
    from ._targets import host_of, is_host_target, parse_target

    parsed = parse_target(target, host=host)
    device = not is_host_target(parsed)
    target_host = host_of(parsed)
    if device and not is_host_target(target_host):
        where = "--host" if host is not None else "the target's \"host\""
        raise DeviceHostError(
            f"host {target_host.kind.name!r} ({where}) is a device kind; host code is built for "
            "a host target (TVM device type CPU): give --host llvm, c or cuda_host",
            kind=target_host.kind.name)
    session = _Session()
    session.add_client_defaults()
    registry = session.registry
    captured: list[str] = []
    kind = canonical_kind(target_host.kind.name)
    chosen: Any = None
    error: Doc | None = None
    with _capture(captured):
        registry.allowed_host_codegens_for_target(target_host)  # loads the kind's plugins
        try:
            chosen = registry.resolve_host_codegen(target_host)
        except HostCodegenError as exc:
            error = _error(exc)
            if exc.__cause__ is not None and error is not None:
                error["cause"] = _error(exc.__cause__)
        controls = registry.controls
        prefer = controls.prefer.get(kind)
        candidates = _codegen_candidates(registry, kind, target_host, chosen, prefer)
        hooks = _hook_candidates(registry, parsed) if device else []
    selected = next((c for c in candidates if c["selected"]), None)
    if selected is None and error is None:
        error = {"type": "NoHostCodegenError",
                 "message": f"No host codegen registered for target host {kind!r} resolves "
                            "this target; install a plugin that provides it"}
    from ._tvm import tvm_document

    return {
        "schema": SCHEMA,
        "command": "explain",
        "version": __version__,
        "tvm": tvm_document(),
        "target": _target_json(parsed),
        "device": device,
        "host": _target_json(target_host),
        "host_kind": kind,
        "host_from": ("target" if not device else
                      "target.host" if parsed.host is not None else "tvm-default"),
        "prefer": prefer,
        "codegen": selected,
        "error": error,
        "candidates": candidates,
        "hook_kind": canonical_kind(parsed.kind.name) if device else None,
        "hooks": hooks,
        "controls": _applied_controls(controls, kind, prefer, selected, candidates, hooks),
        "warnings": captured,
    }


def _applied_controls(controls: Controls, kind: str, prefer: str | None, selected: Doc | None,
                      candidates: Sequence[Doc], hooks: Sequence[Doc]) -> list[Doc]:
    """Every control that touched an explain answer: ``{"variable", "item", "effect"}``."""
    from ._discovery import ENV_PREFER

    out: list[Doc] = []
    if prefer is not None:
        names = [c["name"] for c in candidates if c["name"] is not None]
        if selected is not None and selected["name"] == prefer:
            effect = f"chose {prefer!r} over priority and ties"
        elif prefer in names:
            effect = f"{prefer!r} does not match this target; resolution went by priority"
        else:
            effect = (f"no effect: kind {kind!r} has no codegen named {prefer!r}; its codegens: "
                      + (", ".join(repr(n) for n in sorted(set(names))) or "none"))
        out.append({"variable": ENV_PREFER, "item": f"{kind}={prefer}", "effect": effect})
    for entry in [*candidates, *hooks]:
        if entry["state"] != "disabled" or entry["distribution"] is None:
            continue
        control = controls.skip_control(entry["distribution"], entry["kind"])
        if control is not None:
            out.append({"variable": control[0], "item": control[1],
                        "effect": f"skipped entry point '{entry['entry_point']}' of "
                                  f"{entry['distribution']!r}"})
    return out


def _codegen_candidates(registry: Registry, kind: str, target_host: Target, chosen: Any,
                        prefer: str | None) -> list[Doc]:
    regs = registry.registrations(CODEGEN_GROUP, kind)
    matches = {id(r): _try_match(r, target_host) for r in regs}
    winner = next((r for r in regs if r.obj is chosen), None)
    top = next((r for r in regs if matches[id(r)][0]), None)
    out = []
    for reg in regs:
        ok, raised = matches[id(reg)]
        doc = _registration(reg, CODEGEN_GROUP)
        doc.update(matches=ok, selected=reg is winner, state="loaded")
        if reg is winner:
            if prefer == reg.name:
                why = f"selected: preferred by TILELANG_HOSTCG_PREFER={kind}={prefer}"
            elif reg.default:
                why = (f"selected: the default of {reg.origin.describe()} (no other codegen of "
                       "the kind matches)")
            elif sum(matches[id(r)][0] for r in regs) == 1:
                why = "selected: the only codegen that matches"
            elif any(matches[id(r)][0] and r.priority == reg.priority and r is not reg
                     for r in regs):
                why = (f"selected: highest priority {reg.priority}, registered before the "
                       "others of equal priority (same distribution or code)")
            else:
                why = f"selected: highest priority ({reg.priority}) among the matches"
        elif not build_available(reg.obj):
            why = (f"passed over: its TVM build function {_build_function(reg)!r} is missing "
                   f"from the TVM in use ({_tvm_version()})")
        elif raised is not None:
            why = f"passed over: {raised} (fix the plugin's predicate)"
        elif not ok:
            why = "passed over: its supports_target returned False for this target"
        elif winner is not None and reg.default and not winner.default:
            why = (f"passed over: a default ({reg.origin.describe()}), used only when no other "
                   "codegen of the kind matches")
        elif winner is not None and winner.default and _is_core(reg.origin.distribution):
            why = (f"passed over: {winner.name!r} ({winner.origin.describe()}) is the client's "
                   "own codegen for this kind and supersedes the core's")
        elif winner is not None and prefer == winner.name and prefer != reg.name:
            why = f"passed over: TILELANG_HOSTCG_PREFER={kind}={prefer} chose {winner.name!r}"
        elif winner is not None and reg.priority < winner.priority:
            why = (f"passed over: priority {reg.priority} is lower than {winner.name!r} "
                   f"({winner.priority})")
        elif winner is not None:
            why = (f"passed over: equal priority {reg.priority}, registered after "
                   f"{winner.name!r}")
        elif top is not None and reg.priority == top.priority:
            why = (f"ambiguous: equal top priority {reg.priority} with a codegen of another "
                   f"distribution; choose with TILELANG_HOSTCG_PREFER={kind}={reg.name}")
        else:
            why = (f"passed over: priority {reg.priority} is lower than the top match "
                   f"({top.priority if top else '?'})")
        if doc["replaces_core"]:
            why += f"; replaces the core's {reg.name!r} codegen"
        elif doc["extends_core"]:
            why += f"; extends the core's {kind!r} kind"
        doc["reason"] = why
        out.append(doc)
    for info in registry.sources():
        if info.group != CODEGEN_GROUP or canonical_kind(info.kind) != kind:
            continue
        if info.state not in ("broken", "disabled", "incompatible"):
            continue
        src = _source(info)
        out.append({
            "kind": kind, "name": None, "priority": None,
            "distribution": src["distribution"], "version": src["version"],
            "entry_point": src["entry_point"], "core": src["core"],
            "extends_core": src["extends_core"], "replaces_core": False,
            "build_function": None, "matches": None, "selected": False, "state": info.state,
            "reason": f"passed over: {info.state}: " + (
                info.reason or (f"{type(info.error).__name__}: {info.error}"
                                if info.error else info.state)),
        })
    return out


def _hook_candidates(registry: Registry, target: Target) -> list[Doc]:
    kind = canonical_kind(target.kind.name)
    applied = registry.matching_hooks(target)
    order = {id(r): n for n, r in enumerate(applied, 1)}
    out = []
    for reg in registry.registrations(HOOK_GROUP, kind):
        doc = _registration(reg, HOOK_GROUP)
        n = order.get(id(reg))
        if n is None:
            _, raised = _try_match(reg, target)
            reason = (f"skipped: {raised}" if raised else
                      "skipped: its supports_target returned False for this target")
        else:
            reason = f"applies, #{n} (priority {reg.priority})"
        doc.update(applies=n is not None, order=n, state="loaded", reason=reason)
        out.append(doc)
    out.sort(key=lambda d: (d["order"] is None, d["order"] or 0))
    for info in registry.sources():
        if info.group != HOOK_GROUP or canonical_kind(info.kind) != kind:
            continue
        if info.state in ("broken", "disabled", "incompatible"):
            src = _source(info)
            out.append({
                "kind": kind, "name": None, "priority": None,
                "distribution": src["distribution"], "version": src["version"],
                "entry_point": src["entry_point"], "core": src["core"], "extends_core": False,
                "replaces_core": False, "applies": False, "order": None, "state": info.state,
                "reason": f"skipped: {info.state}: " + (
                    info.reason or (f"{type(info.error).__name__}: {info.error}"
                                    if info.error else info.state)),
            })
    return out


def _tvm_version() -> str:
    from ._tvm import describe_tvm

    return describe_tvm()
