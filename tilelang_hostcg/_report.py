"""The data behind the command line: pure-data documents for list, check, lock and explain.

Each public function builds one JSON-ready ``dict`` (``"schema": 1``) from a fresh,
discovering :class:`~tilelang_hostcg.Registry`; ``cli.py`` only formats them. The
documents are described in ``docs/cli.md``; changing their shape means a new schema.

User errors (a target TVM cannot parse, an unknown kind, an unreadable lock file)
raise :class:`InputError` subclasses or :class:`~tilelang_hostcg.TargetParseError`;
plugin problems never raise, they become entries of the documents.

:func:`list_document` without ``load`` reads installed metadata only: it imports
neither a plugin nor TVM.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

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
from ._registry import Registration, Registry, SourceInfo
from ._targets import canonical_kind
from ._types import CODEGEN_GROUP, HOOK_GROUP
from ._version import __version__

if TYPE_CHECKING:
    from tvm.target import Target

__all__ = [
    "LOCK_SCHEMA",
    "SCHEMA",
    "InputError",
    "LockFileError",
    "UnknownKindError",
    "check_document",
    "explain_document",
    "format_lock",
    "list_document",
    "lock_document",
    "read_lock",
]

SCHEMA = 1
"""Version of the JSON documents printed by ``--json``."""

LOCK_SCHEMA = 1
"""Version of the lock-file format written by ``lock``."""

Doc = dict[str, Any]

CORE_KINDS = frozenset(name for group, name, _ in CORE_ENTRY_POINTS if group == CODEGEN_GROUP)
_CORE_NAMES: dict[str, frozenset[str]] = {
    kind: frozenset({kind}) for kind in CORE_KINDS}  # the core names its codegens after kinds
_GROUP_KEY = {CODEGEN_GROUP: "codegens", HOOK_GROUP: "hooks"}


class InputError(ValueError):
    """Input given by the user cannot be used (exit status 2 on the command line)."""


class LockFileError(InputError):
    """A lock file is missing, unreadable or not a lock file; ``path`` names it."""

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message)
        self.path = path


class UnknownKindError(InputError):
    """A kind named on the command line is neither a TVM target kind nor advertised."""

    def __init__(self, message: str, *, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


# ---------------------------------------------------------------------- session
class _Session:
    """A fresh discovering registry that also keeps the discovery index it read."""

    def __init__(self) -> None:
        self.index = DiscoveryIndex()
        self.registry = Registry(discover=True, index_loader=self._plan)

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
    from ._global_func import GlobalFuncBuild

    build = getattr(reg.obj, "build", None)
    return build.global_func_name if isinstance(build, GlobalFuncBuild) else None


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
    regs_of: dict[str, list[Registration]] = {}  # grouped once: listing stays linear
    for reg in regs:
        by_kind.setdefault(reg.kind, [])
        regs_of.setdefault(reg.kind, []).append(reg)
    out = []
    for kind in sorted(by_kind):
        entries = by_kind[kind]
        out.append({
            "kind": kind,
            "entry_points": entries,
            "extends_core": any(e["extends_core"] for e in entries),
            "registrations": ([_registration(r, group) for r in regs_of.get(kind, ())]
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
    return {
        "schema": SCHEMA,
        "command": "list",
        "version": __version__,
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
        if info.state in ("broken", "incompatible"):
            notes.append(_problem_text(info))
    return _lock_from(registry, sources), notes


def format_lock(doc: Mapping[str, Any]) -> str:
    """Serialize a lock document for review: sorted, one record per line."""
    lines = ["{", f'  "schema": {json.dumps(doc["schema"])},']
    keys = ["distributions", "entry_points", "codegens", "hooks"]
    for n, key in enumerate(keys):
        items = doc.get(key, [])
        tail = "," if n < len(keys) - 1 else ""
        if not items:
            lines.append(f'  "{key}": []{tail}')
            continue
        lines.append(f'  "{key}": [')
        for i, item in enumerate(items):
            comma = "," if i < len(items) - 1 else ""
            lines.append(f"    {json.dumps(item, sort_keys=True)}{comma}")
        lines.append(f"  ]{tail}")
    lines.append("}")
    return "\n".join(lines) + "\n"


_LOCK_FIELDS = {
    "distributions": ("name", "version"),
    "entry_points": ("group", "kind", "value", "distribution"),
    "codegens": ("kind", "name", "priority", "distribution"),
    "hooks": ("kind", "name", "priority", "distribution"),
}


def read_lock(path: str | Path) -> Doc:
    """Read and validate a lock file written by ``lock``; raises :class:`LockFileError`."""
    where = str(path)
    advice = f"regenerate it with `tilelang-hostcg lock -o {where}`"
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise LockFileError(f"cannot read lock file {where!r}: {exc.strerror or exc}; create it "
                            f"with `tilelang-hostcg lock -o {where}`", path=where) from None
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise LockFileError(f"lock file {where!r} is not valid JSON ({exc}); {advice}",
                            path=where) from None
    if not isinstance(doc, dict) or "schema" not in doc:
        raise LockFileError(f"{where!r} is not a tilelang-hostcg lock file (no \"schema\"); "
                            f"{advice}", path=where)
    if doc["schema"] != LOCK_SCHEMA:
        raise LockFileError(f"lock file {where!r} has schema {doc['schema']!r}, this "
                            f"tilelang-hostcg {__version__} reads schema {LOCK_SCHEMA}; {advice}",
                            path=where)
    for key, fields in _LOCK_FIELDS.items():
        items = doc.get(key, [])
        if not isinstance(items, list) or not all(
                isinstance(item, dict) and all(f in item for f in fields) for item in items):
            raise LockFileError(f"lock file {where!r} is corrupt: {key!r} must be a list of "
                                f"objects with {', '.join(fields)}; {advice}", path=where)
        doc[key] = items
    return doc


def _lock_drift(locked: Mapping[str, Any], current: Mapping[str, Any], path: str) -> list[Doc]:
    problems: list[Doc] = []
    fix = f"if the change is intended, update the lock with `tilelang-hostcg lock -o {path}`"
    old = {normalize_name(str(d["name"])): str(d["version"]) for d in locked["distributions"]}
    new = {d["name"]: d["version"] for d in current["distributions"]}
    for name in sorted(new.keys() - old.keys()):
        problems.append(_problem(
            "lock-added", f"distribution {name!r} {new[name]} is installed but not in the lock "
            f"file {path!r}; uninstall it, or {fix}", distribution=name, version=new[name]))
    for name in sorted(old.keys() - new.keys()):
        problems.append(_problem(
            "lock-removed", f"distribution {name!r} {old[name]} is in the lock file {path!r} but "
            f"not installed; `pip install {name}=={old[name]}`, or {fix}",
            distribution=name, version=old[name]))
    for name in sorted(old.keys() & new.keys()):
        if old[name] != new[name]:
            problems.append(_problem(
                "lock-changed", f"distribution {name!r} is {new[name]} but the lock file {path!r} "
                f"has {old[name]}; `pip install {name}=={old[name]}`, or {fix}",
                distribution=name, version=new[name]))
    for key, noun in (("entry_points", "entry point"), ("codegens", "host codegen"),
                      ("hooks", "host codegen hook")):
        fields = _LOCK_FIELDS[key]
        ident = [f for f in fields if f != "priority"]

        def keyed(items: Iterable[Mapping[str, Any]], ident: list[str] = ident,
                  ) -> dict[tuple[str, ...], Mapping[str, Any]]:
            return {tuple(str(i[f]) if f != "distribution" else normalize_name(str(i[f]))
                          for f in ident): i for i in items}

        before, after = keyed(locked[key]), keyed(current[key])
        for ident_key in sorted(after.keys() - before.keys()):
            item = after[ident_key]
            if item["distribution"] not in old:  # already reported with its distribution
                continue
            problems.append(_problem(
                "lock-added", f"{noun} {_lock_item(key, item)} is not in the lock file {path!r}; "
                f"{fix}", kind=str(item["kind"]), distribution=str(item["distribution"])))
        for ident_key in sorted(before.keys() - after.keys()):
            item = before[ident_key]
            if normalize_name(str(item["distribution"])) not in new:
                continue
            problems.append(_problem(
                "lock-removed", f"{noun} {_lock_item(key, item)} in the lock file {path!r} is "
                f"gone; {fix}", kind=str(item["kind"]), distribution=str(item["distribution"])))
        if "priority" in fields:
            for ident_key in sorted(before.keys() & after.keys()):
                was, now = before[ident_key], after[ident_key]
                if was["priority"] != now["priority"]:
                    problems.append(_problem(
                        "lock-changed", f"{noun} {_lock_item(key, now)} has priority "
                        f"{now['priority']}, the lock file {path!r} has {was['priority']}; {fix}",
                        kind=str(now["kind"]), distribution=str(now["distribution"])))
    return problems


def _lock_item(key: str, item: Mapping[str, Any]) -> str:
    if key == "entry_points":
        return f"'{item['kind']} = {item['value']}' of {item['distribution']!r}"
    return f"{item['name']!r} for kind {item['kind']!r} from {item['distribution']!r}"


# ---------------------------------------------------------------------- check
def _problem(code: str, message: str, *, severity: str = "error", kind: str | None = None,
             group: str | None = None, distribution: str | None = None,
             version: str | None = None, entry_point: str | None = None) -> Doc:
    return {"code": code, "severity": severity, "message": message, "kind": kind,
            "group": group, "distribution": distribution, "version": version,
            "entry_point": entry_point}


def _problem_text(info: SourceInfo) -> str:
    what = info.origin.describe()
    if info.state == "incompatible":
        return f"plugin {what} is incompatible: {info.reason}"
    err = info.error
    detail = f"{type(err).__name__}: {err}" if err is not None else "failed to load"
    return f"plugin {what} failed to load: {detail}"


def _source_problem(info: SourceInfo) -> Doc:
    dist = info.origin.distribution
    if info.state == "incompatible":
        advice = (f"install a release of {dist!r} that supports the installed versions, or skip "
                  f"it with TILELANG_HOSTCG_DISABLE={dist}")
    elif dist is None:
        advice = f"fix the import path {info.value!r}"
    else:
        advice = (f"fix or reinstall {dist!r} (pip install --force-reinstall {dist}), or skip it "
                  f"with TILELANG_HOSTCG_DISABLE={dist}")
    return _problem(info.state, f"{_problem_text(info)}; {advice}", kind=canonical_kind(info.kind),
                    group=info.group, distribution=dist, version=info.origin.version,
                    entry_point=info.origin.entry_point)


def _split_kinds(kinds: Iterable[str]) -> list[str]:
    out: list[str] = []
    for item in kinds:
        for kind in item.split(","):
            kind = kind.strip()
            if kind and kind not in out:
                out.append(kind)
    return out


def _tvm_kinds() -> set[str]:
    from tvm.target import Target

    return set(Target.list_kinds())


def _validate_required(kinds: Sequence[str], hook_kinds: Sequence[str], known: set[str],
                       advertised: set[tuple[str, str]]) -> None:
    from ._targets import is_host_target, parse_target

    for group, wanted in ((CODEGEN_GROUP, kinds), (HOOK_GROUP, hook_kinds)):
        for kind in wanted:
            canon = canonical_kind(kind)
            if canon not in known and (group, canon) not in advertised:
                flag = "--require" if group == CODEGEN_GROUP else "--require-hook"
                raise UnknownKindError(
                    f"unknown kind {kind!r} in {flag}: the installed TVM has no such target kind "
                    f"and no installed plugin advertises it; known kinds: "
                    f"{', '.join(sorted(known))}", kind=kind)
            if group == CODEGEN_GROUP and canon in known and not is_host_target(
                    parse_target(canon)):
                raise UnknownKindError(
                    f"{kind!r} in --require is a device kind; host codegens serve host kinds "
                    f"such as 'llvm', 'c' or 'cuda_host' (use --require-hook {kind} to require "
                    "its hooks)", kind=kind)


def check_document(*, require: Sequence[str] = (), require_hooks: Sequence[str] = (),
                   lock: str | Path | None = None, strict: bool = False) -> Doc:
    """Load every advertised plugin and report every problem found, in one document.

    ``ok`` is false when any problem has severity ``error``; with ``strict`` every
    warning counts as an error. Raises :class:`UnknownKindError` for a required kind
    that neither TVM nor any plugin knows, or a required codegen kind that is a device
    kind, and :class:`LockFileError` for an unusable lock file (both before loading
    any plugin's code where possible).
    """
    from ._targets import is_host_target, parse_target

    locked = read_lock(lock) if lock is not None else None
    kinds, hook_kinds = _split_kinds(require), _split_kinds(require_hooks)
    session = _Session()
    registry = session.registry
    captured: list[str] = []
    problems: list[Doc] = []
    with _capture(captured):
        registry.load_all()
        sources = registry.sources()
        known = _tvm_kinds()
        advertised = {(s.group, canonical_kind(s.kind)) for s in sources}
        _validate_required(kinds, hook_kinds, known, advertised)
        codegens = registry.registrations(CODEGEN_GROUP)
        hooks = registry.registrations(HOOK_GROUP)

        bad_prefixes = []
        for info in sources:
            if info.state in ("broken", "incompatible"):
                problems.append(_source_problem(info))
                bad_prefixes.append(f"plugin {info.origin.describe()} ")

        for group, wanted in ((CODEGEN_GROUP, kinds), (HOOK_GROUP, hook_kinds)):
            have = {r.kind for r in (codegens if group == CODEGEN_GROUP else hooks)}
            for kind in wanted:
                canon = canonical_kind(kind)
                if canon in have:
                    continue
                problems.append(_missing(group, kind, [s for s in sources if s.group == group
                                                       and canonical_kind(s.kind) == canon]))

        for kind in sorted({r.kind for r in codegens}):
            where = [r for r in codegens if r.kind == kind]
            if kind not in known:
                problems.append(_unknown_kind(kind, CODEGEN_GROUP, where))
                continue
            target = parse_target(kind)
            if not is_host_target(target):
                names = ", ".join(repr(r.name) for r in where)
                problems.append(_problem(
                    "device-kind", f"host codegen(s) {names} are registered for {kind!r}, which "
                    "TVM reports as a device kind; they are never used (host codegens are "
                    "resolved from the host target). Register them under the host kind, e.g. "
                    f"'{kind}_host'", severity="warning", kind=kind, group=CODEGEN_GROUP,
                    distribution=where[0].origin.distribution))
                continue
            try:
                registry.resolve_host_codegen(target)
            except HostCodegenError as exc:
                from ._errors import AmbiguousHostCodegenError

                if isinstance(exc, AmbiguousHostCodegenError):
                    problems.append(_problem(
                        "ambiguous", f"{exc} (judged on the default target {kind!r})", kind=kind,
                        group=CODEGEN_GROUP,
                        distribution=", ".join(d for _, d in exc.candidates)))
                # No match for the default target is legitimate (variant codegens), and
                # a plugin that failed to load is reported above.

        for kind in sorted({r.kind for r in hooks}):
            if kind not in known:
                problems.append(_unknown_kind(kind, HOOK_GROUP,
                                              [r for r in hooks if r.kind == kind]))

        for reg in codegens:
            name = _build_function(reg)
            if name is None:
                continue
            from ._global_func import GlobalFuncBuild

            build = reg.obj.build  # type: ignore[union-attr]
            if isinstance(build, GlobalFuncBuild) and not build.exists():
                problems.append(_problem(
                    "missing-build-function",
                    f"host codegen {reg.name!r} for kind {reg.kind!r} "
                    f"({reg.origin.describe()}) calls TVM global function {name!r}, which the "
                    f"installed TVM ({_tvm_version()}) does not provide; install a TVM build "
                    "with it, or a release of the plugin built for this TVM",
                    kind=reg.kind, group=CODEGEN_GROUP, distribution=reg.origin.distribution,
                    version=reg.origin.version, entry_point=reg.origin.entry_point))

        for dup in session.index.duplicates:
            name, locations = dup
            problems.append(_problem(
                "duplicate-distribution",
                f"distribution {name!r} is installed {len(locations)} times on sys.path "
                f"({', '.join(locations)}); the first is used and the others are stale metadata. "
                f"Remove the stale copies (pip uninstall {name}, repeated, then reinstall)",
                severity="warning", distribution=name))

        lock_path = str(lock) if lock is not None else None
        if locked is not None and lock_path is not None:
            problems.extend(_lock_drift(locked, _lock_from(registry, sources), lock_path))
        controls = registry.controls

    for text in captured:
        if any(text.startswith(prefix) for prefix in bad_prefixes):
            continue  # the registry's warning about a plugin already reported as broken
        problems.append(_problem("plugin-warning", text, severity="warning"))
    if strict:
        for problem in problems:
            problem["severity"] = "error"
    errors = sum(p["severity"] == "error" for p in problems)
    dists = sorted({(normalize_name(s.origin.distribution), s.origin.version or "?")
                    for s in sources if s.origin.distribution is not None})
    return {
        "schema": SCHEMA,
        "command": "check",
        "version": __version__,
        "ok": errors == 0,
        "strict": strict,
        "lock": lock_path,
        "required": {"codegens": kinds, "hooks": hook_kinds},
        "controls": _controls(controls),
        "distributions": [{"name": n, "version": v} for n, v in dists],
        "kinds": {"codegens": sorted({r.kind for r in codegens}),
                  "hooks": sorted({r.kind for r in hooks})},
        "problems": problems,
        "summary": {"errors": errors, "warnings": len(problems) - errors},
    }


def _missing(group: str, kind: str, providers: Sequence[SourceInfo]) -> Doc:
    noun = "host codegen" if group == CODEGEN_GROUP else "host codegen hook"
    flag = "--require" if group == CODEGEN_GROUP else "--require-hook"
    message = f"required kind {kind!r} ({flag}) has no {noun}"
    notes = []
    for info in providers:
        if info.state in ("disabled", "incompatible"):
            notes.append(f"{info.origin.distribution!r} provides it but is skipped "
                         f"({info.reason})" if info.state == "disabled" else
                         f"{info.origin.distribution!r} provides it but is incompatible")
        elif info.state == "broken":
            notes.append(f"{info.origin.distribution!r} provides it but failed to load")
    if notes:
        message += ": " + "; ".join(notes)
    else:
        message += "; install a plugin distribution that provides it"
    code = "missing-codegen" if group == CODEGEN_GROUP else "missing-hook"
    return _problem(code, message, kind=canonical_kind(kind), group=group)


def _unknown_kind(kind: str, group: str, regs: Sequence[Registration]) -> Doc:
    names = ", ".join(f"{r.name!r} ({r.origin.describe()})" for r in regs)
    return _problem(
        "unknown-kind", f"{names} registered for kind {kind!r}, which is not a target kind of the "
        f"installed TVM ({_tvm_version()}); nothing can resolve to it until TVM knows the kind",
        severity="warning", kind=kind, group=group,
        distribution=regs[0].origin.distribution if regs else None)


def _tvm_version() -> str:
    try:
        import tvm

        return f"apache-tvm {tvm.__version__}"
    except ImportError:  # pragma: no cover - TVM is a dependency
        return "no apache-tvm installed"


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
    :class:`~tilelang_hostcg.TargetParseError` when TVM cannot parse them. The
    document's ``codegen`` is ``null`` (and ``error`` says why) when nothing resolves.
    """
    from ._targets import host_of, is_host_target, parse_target

    parsed = parse_target(target, host=host)
    session = _Session()
    registry = session.registry
    captured: list[str] = []
    device = not is_host_target(parsed)
    target_host = host_of(parsed)
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
        prefer = registry.controls.prefer.get(kind)
        candidates = _codegen_candidates(registry, kind, target_host, chosen, prefer)
        hooks = _hook_candidates(registry, parsed) if device else []
    return {
        "schema": SCHEMA,
        "command": "explain",
        "version": __version__,
        "target": _target_json(parsed),
        "device": device,
        "host": _target_json(target_host),
        "host_kind": kind,
        "host_from": ("target" if not device else
                      "target.host" if parsed.host is not None else "tvm-default"),
        "prefer": prefer,
        "codegen": next((c for c in candidates if c["selected"]), None),
        "error": error,
        "candidates": candidates,
        "hook_kind": canonical_kind(parsed.kind.name) if device else None,
        "hooks": hooks,
        "warnings": captured,
    }


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
            elif sum(matches[id(r)][0] for r in regs) == 1:
                why = "selected: the only codegen that matches"
            elif any(matches[id(r)][0] and r.priority == reg.priority and r is not reg
                     for r in regs):
                why = (f"selected: highest priority {reg.priority}, registered before the "
                       "others of equal priority (same distribution or code)")
            else:
                why = f"selected: highest priority ({reg.priority}) among the matches"
        elif raised is not None:
            why = f"passed over: {raised} (fix the plugin's predicate)"
        elif not ok:
            why = "passed over: its supports_target returned False for this target"
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
