"""The list and lock documents and the records explain and check share: JSON-ready dicts
(``docs/cli.md``) from a fresh, discovering registry. Plain ``list`` imports no plugin, nor TVM."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any

from .. import __version__
from ..clients import tilelang_takes_builds
from ..core import (
    CODEGEN_GROUP,
    CORE_ENTRY_POINTS,
    HOOK_GROUP,
    Origin,
    PluginWarning,
    TVMNotFoundError,
    is_core,
    normalize_name,
    text_of,
)
from ..diagnosis import what_failed
from ..discovery import (
    Controls,
    DiscoveryIndex,
    PlannedSource,
    discover,
    plan_sources,
)
from ..environment import canonical_kind, import_tvm, required_global_funcs, tvm_document
from ..registry import (
    Registry,
    SourceInfo,
    can_build_text,
    cannot_build_text,
    capture,
    error_message,
    failure_site,
    failure_text,
    install_record,
    missing_build,
    module_of,
    plugin_traceback,
    wrong_entry_point,
)
from ..tilelang import UnsupportedTileLangError, add_defaults
from ._lockfile import LOCK_SCHEMA
from ._output import printed_while, told

if TYPE_CHECKING:
    from ..registry import Registration

SCHEMA = 1  # the version of the ``--json`` documents
Doc = dict[str, Any]
CORE_KINDS = frozenset(name for group, name, _ in CORE_ENTRY_POINTS if group == CODEGEN_GROUP)


def document(command: str, tvm: Doc, **fields: Any) -> Doc:
    """A ``--json`` document of ``command``: the schema, our version, the TVM in use, ``fields``."""
    from ._client import client_document
    return {"schema": SCHEMA, "command": command, "version": __version__, "tvm": tvm, "client": client_document(tvm),
            **fields}


class Session:
    """A fresh discovering registry, the ``index`` it read, and what each plugin printed while imported."""

    def __init__(self) -> None:
        self.index = DiscoveryIndex()
        self.printed: list[tuple[Origin, bytes, bytes]] = []
        self.caught: list[PluginWarning] = []  # captured by the commands while plugins load
        self.registry = Registry(discover=True, index_loader=self._plan, watch=lambda origin: printed_while(
            lambda out, err: self.printed.append((origin, out, err))))

    @property
    def warnings(self) -> list[str]:
        """The text of each plugin warning caught, as the documents give them."""
        return [str(warning) for warning in self.caught]

    @contextmanager
    def capture(self) -> Iterator[None]:
        """Collect the plugin warnings of the block into :attr:`caught` (see :func:`capture`); the document
        tells them (:func:`told`)."""
        with capture(self.caught):
            yield
        told(warning.key for warning in self.caught)

    def _plan(self, controls: Controls) -> Sequence[PlannedSource]:
        self.index = discover(controls)
        return plan_sources(self.index.entry_points, controls, __version__)

    def add_client_defaults(self) -> None:
        """Register the client's own codegens as its integration does (imports TVM)."""
        import_tvm()
        if tilelang_takes_builds():
            with suppress(UnsupportedTileLangError):  # no integration there: answer for build()
                add_defaults(self.registry)
        elif (tvm := sys.modules.get("tilelang_hostcg.tvm")) is not None and tvm.is_installed():
            tvm.add_defaults(self.registry)


def error_doc(exc: BaseException | None) -> Doc | None:
    """``{"type", "message"}`` of an exception (``None`` for none)."""
    return None if exc is None else {"type": type(exc).__name__, "message": text_of(exc)}


def describe_state(entry: Doc) -> str:
    """An entry point's state, with its error (and where it failed) or reason."""
    state = str(entry["state"])
    error = entry.get("error")
    if error:
        site = f"{error['file']}:{error['line']}" if error.get("file") else None
        return f"{state}: {what_failed(error['type'], error['message'], site, error.get('wrong_entry_point'))}"
    return f"{state}: {entry['reason']}" if entry.get("reason") else state


def source_doc(info: SourceInfo) -> Doc:
    """The document of one entry point (or lazy module registered in code)."""
    dist = info.origin.distribution
    error = error_doc(info.error)
    if error is not None and info.error is not None:  # where the plugin failed, for its author
        site = failure_site(info.error, module_of(info.value))
        error.update(message=error_message(info.error), file=site[0] if site else None,
                     line=site[1] if site else None, wrong_entry_point=wrong_entry_point(info))
    return {"group": info.group, "kind": canonical_kind(info.kind), "name": info.kind, "value": info.value,
            "entry_point": info.origin.entry_point, "distribution": dist, "version": info.origin.version,
            "location": info.location or None, "core": is_core(dist), "state": info.state, "reason": info.reason,
            "extends_core": info.group == CODEGEN_GROUP and not is_core(dist) and info.kind in CORE_KINDS,
            "error": error, "traceback": plugin_traceback(info.error) or None}


def _without_tvm(judge: Callable[[Any], str | None], obj: Any) -> str | None:
    with suppress(TVMNotFoundError):  # no TVM: nothing to say
        return judge(obj)
    return None


def registration_doc(reg: Registration, group: str) -> Doc:
    """The document of one registered codegen or hook."""
    dist = reg.origin.distribution
    foreign_core = group == CODEGEN_GROUP and reg.kind in CORE_KINDS and not is_core(dist)
    doc = {"kind": reg.kind, "name": reg.name, "priority": reg.priority, "distribution": dist,
           "version": reg.origin.version, "entry_point": reg.origin.entry_point, "core": is_core(dist),
           "extends_core": foreign_core, "default": reg.default,
           "replaces_core": foreign_core and reg.name == reg.kind}  # the core's names are its kinds
    if group == CODEGEN_GROUP:
        needs, missing = required_global_funcs(reg.obj), _without_tvm(missing_build, reg.obj)
        doc.update(build_function=needs[0] if needs else None, global_funcs=list(needs), buildable=missing is None,
                   cannot_build=None if missing is None else cannot_build_text(missing),
                   can_build=_without_tvm(can_build_text, reg.obj) if missing is None else None)
    return doc


def _kinds(registry: Registry, group: str, sources: Sequence[SourceInfo], loaded: bool) -> list[Doc]:
    entries: dict[str, list[Doc]] = {}
    for info in sources:
        if info.group == group:
            entries.setdefault(canonical_kind(info.kind), []).append(source_doc(info))
    regs: dict[str, list[Doc]] = {}
    for reg in registry.registrations(group) if loaded else []:
        regs.setdefault(reg.kind, []).append(registration_doc(reg, group))
    return [{"kind": kind, "entry_points": entries.get(kind, []),
             "extends_core": any(e["extends_core"] for e in entries.get(kind, ())),
             "registrations": regs.get(kind, []) if loaded else None} for kind in sorted(entries.keys() | regs.keys())]


def controls_doc(controls: Controls) -> Doc:
    """The document of the controls in force."""
    return {"autoload": controls.autoload, "disable": sorted(controls.disable),
            "only": None if controls.only is None else sorted(controls.only),
            "prefer": dict(sorted(controls.prefer.items())),
            "problems": [{"variable": p.variable, "message": p.message} for p in controls.problems]}


def unlisted_defaults(tvm: Doc, *, load: bool) -> str | None:
    """Plain ``list``'s note where TileLang provides the TVM: its own codegens and hooks show with ``--load``."""
    if load or tvm.get("provider") != "tilelang":
        return None
    return (f"TileLang's own host codegens and hooks (such as 'tilelang-c', 'tilelang-llvm' and the hook 'tilelang-"
            f"metal') are not listed: TileLang registers them when imported, and plain `list` imports nothing. "
            f"`tilelang-hostcg list --load` imports TileLang ({_tilelang_named(tvm)}) and lists them too, where it "
            "has the integration points")


def _tilelang_named(tvm: Doc) -> str:
    """The TileLang of a TVM document: its distribution and version, or its source tree."""
    if tvm.get("distribution") is None:
        return f"from a source tree at {tvm.get('tree')}"
    return f"{tvm.get('distribution')} {tvm.get('provider_version') or '?'}"


def list_document(*, load: bool = False) -> Doc:
    """Every advertised kind with its entry points; with ``load`` every plugin is imported and
    ``registrations`` lists each kind's codegens or hooks in resolution order."""
    session = Session()
    registry = session.registry
    with session.capture():
        if load:
            with suppress(TVMNotFoundError):  # the document says what is wrong
                session.add_client_defaults()
            registry.load_all()
        sources = registry.sources()
        controls = registry.controls
    tvm = tvm_document(import_it=load)
    return document("list", tvm, loaded=load, note=unlisted_defaults(tvm, load=load), controls=controls_doc(controls),
                    codegens=_kinds(registry, CODEGEN_GROUP, sources, load),
                    hooks=_kinds(registry, HOOK_GROUP, sources, load), warnings=session.warnings,
                    duplicates=[{"distribution": name, "locations": list(locations)}
                                for name, locations in session.index.duplicates])


def lock_from(registry: Registry, sources: Sequence[SourceInfo]) -> Doc:
    """The lock document of what ``registry`` loaded from ``sources``."""
    located = [(info, normalize_name(info.origin.distribution)) for info in sources if info.origin.distribution]
    firsts = {dist: info for info, dist in reversed(located)}  # the first one found
    dists = [{"name": dist, "version": info.origin.version or "?",
              **_installed_from(dist, info.location)} for dist, info in sorted(firsts.items())]

    def records(items: Iterable[Doc]) -> list[Doc]:
        fields = ("group", "kind", "name", "distribution", "value")
        return sorted(items, key=lambda d: [str(d.get(k, "")) for k in fields])

    return {"schema": LOCK_SCHEMA, "command": "lock",
            "distributions": dists,
            "entry_points": records({"group": info.group, "kind": info.kind, "value": info.value, "distribution": dist}
                                    for info, dist in located),
            **{key: records({"kind": r.kind, "name": r.name, "priority": r.priority,
                             "distribution": normalize_name(r.origin.distribution)}
                            for r in registry.registrations(group) if r.origin.distribution is not None)
               for key, group in (("codegens", CODEGEN_GROUP), ("hooks", HOOK_GROUP))}}


def _installed_from(distribution: str, location: str) -> Doc:
    """``{"direct_url": ...}`` where ``distribution`` was installed from a folder, file, URL or VCS (its
    PEP 610 document, which a lock keeps for advice once the distribution is gone), else nothing."""
    record = install_record(distribution, location or None)
    return {"direct_url": record} if record else {}


def lock_document() -> tuple[Doc, list[str]]:
    """The installed plugin set as a lock document (every plugin imported), and notes: broken or
    incompatible entry points (locked, registering nothing) and captured plugin warnings."""
    session = Session()
    registry = session.registry
    with session.capture():
        registry.load_all()
        sources = registry.sources()
    notes = [failure_text(info) for info in sources if info.state.failed]
    return lock_from(registry, sources), session.warnings + notes

