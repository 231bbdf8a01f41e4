"""The ``check`` document: load every plugin, then one ``_check_*`` function per problem
code (the table in ``docs/cli.md``), plus the plugin warnings nothing else reported."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..core import (
    APACHE_TVM,
    CODEGEN_GROUP,
    HOOK_GROUP,
    TILELANG,
    AmbiguousHostCodegenError,
    ControlPluginWarning,
    Facts,
    NearMissPluginWarning,
    Origin,
    SourceState,
    UnknownKindError,
    is_core,
    normalize_name,
    text_of,
)
from ..diagnosis import (
    ambiguous_problem,
    client_problem,
    device_kind_problem,
    duplicate_distribution_problem,
    missing_build_function_problem,
    missing_codegen_problem,
    missing_hook_problem,
    plugin_cannot_build_fix,
    printed_note,
    route_unused_problem,
    tilelang_requirement_problem,
    tvm_conflict_problem,
    unknown_kind_problem,
    words,
)
from ..discovery import ENV_DISABLE, ControlProblem, Controls, DiscoveryIndex, declaration_problems
from ..environment import (
    DEVICE_KIND,
    UNKNOWN_KIND,
    canonical_kind,
    describe_tvm,
    distribution_name,
    distribution_version,
    find,
    is_host_target,
    kind_misfit,
    other_build_requirements,
    parse_target,
    tilelang_overlap,
    tvm_document,
)
from ..registry import (
    AUTOLOAD_OFF_TEXT,
    Registration,
    Registry,
    Resolution,
    SourceInfo,
    advice,
    cannot_build_text,
    failure_site,
    failure_text,
    missing_build,
    module_of,
    plugin_traceback,
    state_text,
)
from ._lockfile import lock_drift, read_lock
from ._output import told
from ._probe_process import DEFAULT_BOUND, Bound, failure_fix, isolated, probed_client
from ._report import Doc, Session, controls_doc, document, lock_from

if TYPE_CHECKING:
    from importlib.metadata import Distribution

    from ..clients import Probe


@dataclass
class _Checked:
    registry: Registry
    index: DiscoveryIndex
    sources: list[SourceInfo]
    codegens: list[Registration]
    hooks: list[Registration]
    known: set[str]
    require: list[str]
    require_hooks: list[str]
    locked: Doc | None
    lock_path: str | None
    resolutions: dict[str, Resolution | None] = field(default_factory=dict)
    client: Doc | None = None  # the client document, after the probe build
    probe: Probe | None = None  # what the probe build showed
    reported: set[tuple[str, Facts]] = field(default_factory=set)  # the warnings' keys a problem reports


def _problem(code: str, message: str, *, severity: str = "error", kind: str | None = None,
             group: str | None = None, distribution: str | None = None, version: str | None = None,
             origin: Origin | None = None, traceback: list[str] | None = None,
             site: tuple[str, int] | None = None) -> Doc:
    """One problem record; ``origin`` gives its distribution, version and entry point."""
    if origin is not None:
        distribution, version = origin.distribution, origin.version
    return {"code": code, "severity": severity, "message": message, "kind": kind, "group": group,
            "distribution": distribution, "version": version, "entry_point": origin and origin.entry_point,
            "traceback": traceback, "file": site[0] if site else None, "line": site[1] if site else None}


def _resolution(c: _Checked, kind: str) -> Resolution | None:
    """The resolution record of the default ``Target(kind)``, once per run (``None``: a kind TVM does not know)."""
    if kind not in c.resolutions:
        c.resolutions[kind] = c.registry.resolution(parse_target(kind)) if kind in c.known else None
    return c.resolutions[kind]


def _check_sources(c: _Checked) -> list[Doc]:
    """``broken`` and ``incompatible``: entry points that did not load."""
    return [_problem(info.state, f"{failure_text(info)}; {advice(info, c.registry.controls)}",
                     kind=canonical_kind(info.kind), group=info.group, origin=info.origin,
                     traceback=plugin_traceback(info.error) or None,
                     site=failure_site(info.error, module_of(info.value)))
            for info in c.sources if info.state.failed]


def _check_required(c: _Checked) -> list[Doc]:
    """``missing-codegen`` and ``missing-hook``: a required kind nothing serves. A host kind is
    served exactly when ``explain KIND`` resolves (a kind the TVM in use cannot target is not)."""
    out = []
    for kind in c.require:
        canon = canonical_kind(kind)
        resolution = _resolution(c, canon)
        if resolution is None:
            message = missing_codegen_problem(kind, canon, tvm_lacks_kind=describe_tvm())
        elif resolution.choice is not None or isinstance(resolution.error, AmbiguousHostCodegenError):
            continue  # served, or reported (and failed) as ``ambiguous``
        else:
            error = text_of(resolution.error) if resolution.error else None
            message = missing_codegen_problem(kind, canon, error=error)
        out.append(_problem("missing-codegen", message, kind=canon, group=CODEGEN_GROUP))
    have = {r.kind for r in c.hooks}
    for kind, canon in ((k, canonical_kind(k)) for k in c.require_hooks):
        if canon in have:
            continue
        unusable = [(str(info.origin.distribution), state_text(info))
                    for info in c.sources if info.group == HOOK_GROUP and canonical_kind(info.kind) == canon
                    and info.state.unusable]
        off = AUTOLOAD_OFF_TEXT if not c.registry.controls.autoload else None
        out.append(_problem("missing-hook", missing_hook_problem(kind, unusable, off), kind=canon, group=HOOK_GROUP))
    return out


def _host_kinds(c: _Checked) -> list[str]:
    return [k for k in sorted({r.kind for r in c.codegens} & c.known) if is_host_target(parse_target(k))]


def _check_kinds(c: _Checked) -> list[Doc]:
    """``unknown-kind`` and ``device-kind``: registrations for a kind the installed TVM does not
    know, and codegens registered for a device kind (never used)."""
    out = []
    for group, regs in ((CODEGEN_GROUP, c.codegens), (HOOK_GROUP, c.hooks)):
        for kind in sorted({r.kind for r in regs
                            if kind_misfit(r.kind, c.known, host_codegen=False) == UNKNOWN_KIND}):
            where = [r for r in regs if r.kind == kind]
            registered = [(r.name, r.origin.describe()) for r in where]
            out.append(_problem(UNKNOWN_KIND, unknown_kind_problem(registered, kind, describe_tvm()),
                                severity="warning", kind=kind, group=group, distribution=where[0].origin.distribution))
    for kind in sorted({r.kind for r in c.codegens if kind_misfit(r.kind, c.known, host_codegen=True) == DEVICE_KIND}):
        where = [r for r in c.codegens if r.kind == kind]
        out.append(_problem(DEVICE_KIND, device_kind_problem([r.name for r in where], kind), severity="warning",
                            kind=kind, group=CODEGEN_GROUP, distribution=where[0].origin.distribution))
    return out


def _check_ambiguous(c: _Checked) -> list[Doc]:
    """``ambiguous``: a tie across distributions on the default ``Target(kind)``."""
    out = []
    for kind in _host_kinds(c):
        error = getattr(_resolution(c, kind), "error", None)
        if isinstance(error, AmbiguousHostCodegenError):  # no match is legitimate (variant codegens)
            out.append(_problem("ambiguous", ambiguous_problem(str(error), kind), kind=kind,
                                group=CODEGEN_GROUP, distribution=", ".join(d for _, d in error.candidates)))
    return out


def _check_build_functions(c: _Checked) -> list[Doc]:
    """``missing-build-function``: a codegen's TVM global function is missing: information for
    the core's own codegens and a client's defaults (they follow the TVM's build options), an
    error for a plugin's own."""
    out = []
    for reg in c.codegens:
        missing = missing_build(reg.obj)
        if missing is None:
            continue
        info = is_core(reg.origin.distribution) or reg.default
        fix = None if info else _plugin_cannot_build_fix(reg.origin.distribution, c.registry.controls)
        out.append(_problem(
            "missing-build-function", missing_build_function_problem(
                reg.name, reg.kind, reg.origin.describe(), cannot_build_text(missing), fix),
            severity="info" if info else "error", kind=reg.kind, group=CODEGEN_GROUP, origin=reg.origin))
    return out


def _plugin_cannot_build_fix(distribution: str | None, controls: Controls) -> str:
    """What to do about a plugin's codegen the TVM in use cannot build: where TileLang provides the
    TVM, never another TVM (apache-tvm beside TileLang breaks ``import tilelang``)."""
    if tvm_document().get("provider") != TILELANG:
        return plugin_cannot_build_fix(distribution, None)
    return plugin_cannot_build_fix(distribution, controls.suggest(ENV_DISABLE, distribution) if distribution
                                       else ENV_DISABLE)


def _check_duplicates(c: _Checked) -> list[Doc]:
    """``duplicate-distribution``: one distribution installed twice on ``sys.path``."""
    return [_problem("duplicate-distribution", duplicate_distribution_problem(name, locations), severity="warning",
                     distribution=name) for name, locations in c.index.duplicates]


def _check_controls(c: _Checked) -> list[Doc]:
    """``control``: a ``TILELANG_HOSTCG_*`` item that is malformed or names nothing (all plugins loaded)."""
    controls = c.registry.controls
    found: list[ControlProblem] = [*controls.problems, *controls.unknown_names(c.index.entry_points)]
    for kind in sorted(controls.prefer):
        names = [r.name for r in c.codegens if r.kind == canonical_kind(kind)]
        if not names:
            continue  # a kind no codegen serves: reported by unknown_names
        problem = controls.unknown_preference(kind, names)
        if problem is not None:
            found.append(problem)
    c.reported.update((ControlPluginWarning.code, (p.variable, p.item)) for p in found)
    return [_problem("control", p.message, severity="warning") for p in found]


def _check_lock(c: _Checked) -> list[Doc]:
    """``lock-added``, ``lock-removed``, ``lock-changed``: drift from the lock file."""
    if c.locked is None or c.lock_path is None:
        return []
    current = lock_from(c.registry, c.sources)
    return [_problem(code, message, kind=kind, distribution=dist, version=version)
            for code, message, kind, dist, version in lock_drift(c.locked, current, c.lock_path)]


def _check_declarations(c: _Checked) -> list[Doc]:
    """``declaration``: entry points in a near miss of our groups, or no requirement on ``tilelang-hostcg``."""
    c.reported.update((NearMissPluginWarning.code, miss) for miss in c.index.near_misses)
    return [_problem("declaration", message, severity="warning", distribution=dist)
            for dist, message in declaration_problems(c.index)]


def _check_tilelang_builds(c: _Checked) -> list[Doc]:
    """``tilelang-builds``: more than one TileLang build installed (they share one folder)."""
    if (overlap := tilelang_overlap()) is None:
        return []
    c.reported.add((overlap.code, overlap.key))
    return [_problem(overlap.code, words(overlap), severity="warning")]


def _tilelang_distribution() -> Distribution | None:
    """The installed distribution whose files hold the TileLang that ``import tilelang`` gives."""
    found = find(TILELANG)
    return found.owners[0] if found is not None and found.owners else None


def _check_tilelang_requirements(c: _Checked) -> list[Doc]:
    """``tilelang-requirement``: a compatible plugin requiring another TileLang build than the one installed."""
    dist = _tilelang_distribution()
    if dist is None:
        return []
    in_use = f"{distribution_name(dist)} {distribution_version(dist) or '?'}"
    out, seen = [], set()
    for ep in c.index.entry_points:
        key = normalize_name(ep.distribution)
        if key in seen or is_core(key) or ep.incompatible is not None:
            continue
        seen.add(key)
        for line, build in other_build_requirements(ep.requires, distribution_name(dist)):
            out.append(_problem(
                "tilelang-requirement", tilelang_requirement_problem(ep.distribution, ep.version, line, in_use, build),
                severity="warning", distribution=ep.distribution, version=ep.version))
    return out


def _check_tilelang_environment(c: _Checked) -> list[Doc]:
    """``tvm-conflict``: ``apache-tvm`` installed beside TileLang, or TileLang's requirement on
    ``apache-tvm-ffi`` not met (even while ``import tilelang`` still works)."""
    from ..environment import FFI, foreign_tvm, tilelang_repair, unmet_requirement
    dist = _tilelang_distribution()
    if dist is None:
        return []
    foreign, ffi = foreign_tvm(), unmet_requirement(dist, FFI)
    if foreign is None and ffi is None:
        return []
    in_use = f"{distribution_name(dist)} {distribution_version(dist) or '?'}"
    message = tvm_conflict_problem(in_use, foreign, FFI, ffi, tilelang_repair(dist, importable=True))
    return [_problem("tvm-conflict", message, distribution=APACHE_TVM if foreign is not None else FFI)]


def _check_compiler_metadata(c: _Checked) -> list[Doc]:
    """``metadata-file``: beside the TileLang or TVM in use, a metadata file that is a FIFO, a device or a
    folder (never read: reading it would wait or fail)."""
    from ..environment import folder_problems
    sites = [found.tree for found in map(find, (TILELANG, "tvm")) if found is not None]
    return [_problem("metadata-file", words(finding), severity="warning")
            for site in dict.fromkeys(sites) for finding in folder_problems(site)]


def _plugins_installed(c: _Checked) -> bool:
    """Whether a third-party plugin is installed and not turned off by the controls."""
    return not all(is_core(s.origin.distribution) or s.state == SourceState.DISABLED for s in c.sources)


def _check_client(c: _Checked) -> list[Doc]:
    """``client``: a third-party plugin is installed and the compiler in use will not use it (a
    warning; the user's own switch: information)."""
    client = c.client
    if client is None or client["routed"] is not False or not _plugins_installed(c) or _probe_not_called(c):
        return []
    return [_problem("client", client_problem(client["client"], client["problem"] or client["describe"]),
                     severity="warning" if client["problem"] else "info")]


def _probe_not_called(c: _Checked) -> bool:
    return c.client is not None and (c.client.get("probe") or {}).get("called") is False


def _check_probe(c: _Checked) -> list[Doc]:
    """``route-unused``: every integration point is there, but ``check``'s probe build did not call
    the route, so the installed plugins are not used (a warning)."""
    if c.client is None or not _probe_not_called(c) or not _plugins_installed(c):
        return []
    message = route_unused_problem(c.client["client"], c.client["problem"], bool(c.client.get("native")))
    return [_problem("route-unused", message, severity="warning")]


def _check_probe_failed(c: _Checked) -> list[Doc]:
    """``probe-failed``: ``check``'s probe build failed, so it proves nothing: an error where a plugin's codegen
    or hook raised, hung or ended it; else (a plugin's code printed, the compiler's own code failed) a warning."""
    failure = c.probe.failure if c.probe is not None else None
    if c.probe is None or failure is None:
        return []
    running = failure.running
    return [_problem("probe-failed", f"{c.probe.text}. {failure_fix(failure, c.registry.controls)}",
                     severity="error" if failure.blames_plugin else "warning",
                     kind=running.kind if running else None, group=running.group if running else None,
                     origin=running.origin if running else None)]


_CHECKS: tuple[Callable[[_Checked], list[Doc]], ...] = (
    _check_sources, _check_required, _check_kinds, _check_ambiguous, _check_build_functions, _check_duplicates,
    _check_controls, _check_lock, _check_declarations, _check_tilelang_builds, _check_tilelang_requirements,
    _check_tilelang_environment, _check_compiler_metadata, _check_client, _check_probe, _check_probe_failed)


def split_kinds(kinds: Iterable[str]) -> list[str]:
    """Kinds given as repeated or comma-separated options, in order, without repeats."""
    return list(dict.fromkeys(kind.strip() for item in kinds for kind in item.split(",") if kind.strip()))


def validate_required(require: Sequence[str], require_hooks: Sequence[str], known: set[str],
                      advertised: set[tuple[str, str]]) -> None:
    """Raise :class:`UnknownKindError` for a required kind that is unknown, or of the wrong
    sort for its option (TVM's host/device rule: device type CPU is a host kind)."""
    for group, wanted, flag in ((CODEGEN_GROUP, require, "--require"), (HOOK_GROUP, require_hooks, "--require-hook")):
        for kind in wanted:
            canon = canonical_kind(kind)
            if canon not in known:
                if (group, canon) in advertised:
                    continue  # a kind only a plugin knows: nothing to judge it by
                raise UnknownKindError(f"unknown kind {kind!r} in {flag}: the installed TVM has no such target kind "
                                       f"and no installed plugin advertises it; known kinds: "
                                       f"{', '.join(sorted(known))}", kind=kind)
            host = is_host_target(parse_target(canon))
            if group == CODEGEN_GROUP and not host:
                raise UnknownKindError(f"{kind!r} in --require is a device kind; host codegens serve host kinds such "
                                       f"as 'llvm', 'c' or 'cuda_host' (use --require-hook {kind} to require its "
                                       "hooks)", kind=kind)
            if group == HOOK_GROUP and host:
                raise UnknownKindError(f"{kind!r} in --require-hook is a host kind; hooks serve device kinds such as "
                                       f"'cuda' or 'rocm' (use --require {kind} to require its codegen)", kind=kind)


def check_document(*, require: Sequence[str] = (), require_hooks: Sequence[str] = (),
                   lock: str | Path | None = None, strict: bool = False, probe_bound: Bound = DEFAULT_BOUND) -> Doc:
    """Load every advertised plugin and report every problem found; ``ok`` is false when one is an
    ``error`` (with ``strict``, every warning). The probe build runs in a process of its own within
    ``probe_bound``. Raises :class:`UnknownKindError` for a bad required kind and :class:`LockFileError`
    for an unusable lock file."""
    locked = read_lock(lock) if lock is not None else None
    kinds, hook_kinds = split_kinds(require), split_kinds(require_hooks)
    session = Session()
    session.add_client_defaults()  # imports TVM
    registry = session.registry
    with session.capture():
        registry.load_all()
        sources = registry.sources()
        from tvm.target import Target

        known = set(Target.list_kinds())
        validate_required(kinds, hook_kinds, known, {(s.group, canonical_kind(s.kind)) for s in sources})
        client, probe = probed_client(isolated(probe_bound))
        checked = _Checked(registry, session.index, sources, registry.registrations(CODEGEN_GROUP),
                           registry.registrations(HOOK_GROUP), known, kinds, hook_kinds, locked,
                           str(lock) if lock is not None else None, client=client, probe=probe)
        problems = [p for check in _CHECKS for p in check(checked)]
    told(checked.reported)  # and the warnings caught, by the session's capture
    # ``plugin-warning``: captured warnings no other problem reports (by code and facts; a failed plugin is one)
    problems += [_problem("plugin-warning", str(warning), severity="warning") for warning in session.caught
                 if not warning.failed_plugin and warning.key not in checked.reported]
    for problem in problems:
        if strict and problem["severity"] == "warning":
            problem["severity"] = "error"
    errors = sum(p["severity"] == "error" for p in problems)
    infos = sum(p["severity"] == "info" for p in problems)
    dists = sorted({(normalize_name(s.origin.distribution), s.origin.version or "?")
                    for s in sources if s.origin.distribution is not None})
    return document("check", tvm_document(), client=checked.client, ok=errors == 0, strict=strict,
                    lock=checked.lock_path,
                    required={"codegens": kinds, "hooks": hook_kinds}, controls=controls_doc(registry.controls),
                    distributions=[{"name": n, "version": v} for n, v in dists],
                    kinds={"codegens": sorted({r.kind for r in checked.codegens}),
                           "hooks": sorted({r.kind for r in checked.hooks})}, problems=problems,
                    printed=[{"distribution": o.distribution, "version": o.version, "group": o.group,
                              "entry_point": o.entry_point, "stdout": len(so), "stderr": len(se)}
                             for o, so, se in session.printed],
                    summary={"errors": errors, "warnings": len(problems) - errors - infos, "info": infos})


def printed_text(item: Doc) -> str:
    """One line naming the plugin that wrote to stdout or stderr while it was imported."""
    origin = Origin(item["distribution"], item["version"], item["group"], item["entry_point"])
    return printed_note(origin.describe(), item["stdout"], item["stderr"])
