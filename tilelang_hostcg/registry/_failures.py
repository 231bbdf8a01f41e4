"""A failed plugin as a finding: what is wrong, where it failed, its traceback, the facts of what to do (on
failure only); :mod:`..diagnosis` words it."""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..core import PluginWarning, SkippedPluginWarning, text_of
from ._clash import clash_facts
from ._sources import module_of

if TYPE_CHECKING:
    from ..diagnosis import Finding
    from ..discovery import Controls
    from ._sources import SourceInfo

_PACKAGE = __name__.partition(".")[0]
_HIDDEN = (_PACKAGE, "importlib", "_frozen_importlib", "_frozen_importlib_external")


def _hidden(module: object) -> bool:
    return isinstance(module, str) and any(
        module == name or module.startswith(name + ".") for name in _HIDDEN)


@contextmanager
def capture(into: list[PluginWarning]) -> Iterator[None]:
    """Collect the block's plugin warnings into ``into``, each finding once (by :attr:`PluginWarning.key`:
    its code and facts, not its words); other warnings are shown afterwards."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PluginWarning)
        yield
    known = {warning.key for warning in into}
    for item in caught:
        warning = item.message
        if not isinstance(warning, PluginWarning):
            warnings.showwarning(item.message, item.category, item.filename, item.lineno)
            continue
        if warning.key not in known:
            known.add(warning.key)
            into.append(warning)


def failure_site(exc: BaseException | None, module: str | None = None) -> tuple[str, int] | None:
    """``(file, line)`` where a plugin failed (innermost frame of ``module``'s package, else not ours)."""
    if exc is None:
        return None
    if isinstance(exc, SyntaxError) and exc.filename and exc.lineno and not exc.filename.startswith("<"):
        return exc.filename, exc.lineno  # the file that does not compile: no frame of it runs
    import traceback
    frames = []
    for frame, line in traceback.walk_tb(exc.__traceback__):
        name = frame.f_globals.get("__name__")
        if not _hidden(name):
            frames.append((str(name), frame.f_code.co_filename, line))
    if not frames:
        return None
    top = (module or "").partition(".")[0]
    own = [f for f in frames if top and f[0].partition(".")[0] == top]
    return (own or frames)[-1][1:]


def plugin_traceback(exc: BaseException | None) -> list[str]:
    """``exc``'s traceback lines as Python prints them, without our frames and the import system's."""
    if exc is None:
        return []
    import traceback
    report = traceback.TracebackException.from_exception(exc)
    todo: list[tuple[traceback.TracebackException, BaseException]] = [(report, exc)]
    while todo:  # each exception of the chain keeps only the plugin's frames
        item, error = todo.pop()
        item.stack = traceback.StackSummary.extract(
            (frame, line) for frame, line in traceback.walk_tb(error.__traceback__)
            if not _hidden(frame.f_globals.get("__name__")))
        todo += [(t, e) for t, e in ((item.__cause__, error.__cause__),
                                     (item.__context__, error.__context__))
                 if t is not None and e is not None]
    return "".join(report.format()).rstrip("\n").split("\n")


def install_record(distribution: str, location: str | None = None) -> dict[str, Any]:
    """How ``distribution`` (its metadata folder ``location``, else the first on ``sys.path``) was
    installed: its PEP 610 ``direct_url.json`` where that names a source (a folder, file, URL or VCS),
    else empty (from an index, or not installed). A lock keeps it for when the distribution is gone."""
    from importlib.metadata import Distribution, PackageNotFoundError

    from ..environment import direct_url, pip_source
    try:
        doc = direct_url(Distribution.at(location) if location else Distribution.from_name(distribution))
    except (PackageNotFoundError, OSError, ValueError):
        return {}
    return {k: v for k, v in doc.items() if k in _PEP_610} if pip_source(doc) is not None else {}


_PEP_610 = ("url", "dir_info", "archive_info", "vcs_info", "subdirectory")  # what direct_url.json holds


def reinstall_command(distribution: str, location: str | None = None) -> str:
    """The reinstall of ``distribution`` as it was installed (PEP 610 ``direct_url.json``)."""
    from importlib.metadata import Distribution, PackageNotFoundError

    from ..environment import reinstall_as_installed
    try:
        dist = Distribution.at(location) if location else Distribution.from_name(distribution)
        version = dist.version
    except (PackageNotFoundError, OSError, ValueError):
        version = None
    return reinstall_as_installed(distribution, version if isinstance(version, str) else None,
                                  install_record(distribution, location))


def failure_finding(info: SourceInfo, controls: Controls | None = None, *, what: str | None = None) -> Finding:
    """What is wrong with a source that serves nothing, as a finding: what it is (its group, kind, value,
    distribution and, for a plugin skipped, ``what`` it was skipped for), and the facts that word it (its
    origin and state, the exception and where it raised, what is wrong with its entry point); with
    ``controls``, also those of the advice (the ``DISABLE`` that skips it, the reinstall, a clash of names)."""
    from ..diagnosis import Finding  # a finding's words: only where one is given
    err = info.error
    site = failure_site(err, module_of(info.value))
    facts: dict[str, str | None] = {
        "group": info.group, "kind": info.kind, "value": info.value, "distribution": info.origin.distribution,
        "what": what, "origin": info.origin.describe(), "entry_point": info.origin.entry_point,
        "state": info.state.value, "reason": info.reason, "error": None, "message": None, "exit": None,
        "site": f"{site[0]}:{site[1]}" if site else None, **_wrong_facts(info)}
    if isinstance(err, SystemExit):
        facts.update(error=type(err).__name__, exit=repr(err.code))
    elif err is not None:
        facts.update(error=type(err).__name__, message=error_message(err))
    if controls is not None:
        facts.update(_advice_facts(info, controls))
    return Finding.of(SkippedPluginWarning, info.origin.distribution or info.value,
                      wording=tuple(name for name in facts if name not in _IDENTITY), **facts)


_IDENTITY = ("group", "kind", "value", "distribution", "what")  # the facts that tell a failure from another


def _advice_facts(info: SourceInfo, controls: Controls) -> dict[str, str | None]:
    """The facts of the advice for a source that failed: the ``DISABLE`` setting that skips it, how to
    reinstall it as it was installed, and a clash of names with another distribution."""
    from ..discovery import ENV_DISABLE
    dist = info.origin.distribution
    if dist is None:
        return {"skip": None, "reinstall": None, **clash_facts(info)}
    return {"skip": controls.suggest(ENV_DISABLE, dist), "reinstall": reinstall_command(dist, info.location),
            **clash_facts(info)}


def state_text(info: SourceInfo) -> str:
    """A source that serves nothing, in words (:mod:`..diagnosis`'s): ``is skipped: REASON``, ``is
    incompatible: REASON`` or ``failed to load`` (:func:`failure_text` says what failed)."""
    from ..diagnosis import plugin_state  # a finding's words: only where one is given
    return plugin_state(failure_finding(info))


def reinstall_advice(distribution: str, version: str, recorded: object = None) -> str:
    """How to put back ``distribution`` at ``version``, as it was installed: from the folder, wheel, URL
    or VCS that ``recorded`` (its ``direct_url.json`` as a lock kept it) names, where that is still
    there; else as it is installed now (its own ``direct_url.json``), else from an index. Where it is
    not installed and the lock kept no source, how it was installed is not known, and the advice says so."""
    from importlib.metadata import Distribution, PackageNotFoundError

    from ..diagnosis import reinstall
    from ..environment import direct_url, pip_source, reinstall_as_installed
    source = pip_source(recorded)
    if source is not None:
        command = reinstall_as_installed(distribution, version, recorded)
        if source.spec.startswith(os.sep) and not os.path.exists(source.spec):
            return (f"it was installed from {source.spec!r}, which is gone: put that folder or file back, then "
                    f"`{command}`")
        return f"`{command}` (as it was installed when locked)"
    try:
        installed = Distribution.from_name(distribution)
    except (PackageNotFoundError, OSError, ValueError):
        return (f"`{reinstall(distribution, version)}` if it came from an index; if it came from a "
                f"source folder or a wheel, the same with that folder or file in place of "
                f"'{distribution}=={version}' (it is not installed, so how it was installed is not known)")
    if direct_url(installed).get("url"):
        return f"`{reinstall_command(distribution)}` (as it was installed)"
    return f"`{reinstall(distribution, version)}`"


def failure_text(info: SourceInfo) -> str:
    """One phrase on what is wrong with a source: ``plugin <origin> <what>`` (:mod:`..diagnosis`'s words)."""
    from ..diagnosis import plugin_failure  # a finding's words: only where one is given
    return plugin_failure(failure_finding(info))


def advice(info: SourceInfo, controls: Controls | None = None) -> str:
    """What to do about a source that failed or is incompatible (a ``DISABLE`` keeps what ``controls`` skip),
    in :mod:`..diagnosis`'s words."""
    from ..diagnosis import plugin_advice  # a finding's words: only where one is given
    from ..discovery import Controls
    return plugin_advice(failure_finding(info, controls or Controls()))


def error_message(exc: BaseException) -> str:
    """An exception's message; a ``SyntaxError``'s without its ``(file, line N)`` (the site says it)."""
    return str(exc.msg) if isinstance(exc, SyntaxError) and exc.msg else text_of(exc)


def wrong_entry_point(info: SourceInfo) -> str | None:
    """What is wrong with a source's value naming a missing module or attribute (:mod:`..diagnosis`'s words),
    else ``None``."""
    from ..diagnosis import wrong_entry_point as worded  # a finding's words: only where one is given
    return worded(failure_finding(info))


def _wrong_facts(info: SourceInfo) -> dict[str, str | None]:
    """Where a source's value names a module or attribute that is missing: which (``wrong``: ``module`` or
    ``attribute``), its name, the module that lacks the attribute, and the nearest name there is; else
    all ``None``."""
    from ..discovery import closest
    err, module = info.error, module_of(info.value)
    attr = info.value.partition(":")[2].partition("[")[0].strip() or None
    name = getattr(err, "name", None)
    facts: dict[str, str | None] = dict.fromkeys(("wrong", "wrong_name", "wrong_owner", "wrong_guess"))
    if isinstance(err, ModuleNotFoundError) and isinstance(name, str) and (
            module == name or module.startswith(name + ".")):
        installed = _modules_of(info, module)
        if module not in installed:  # else the value is right; the files are gone (another's uninstall): reinstall
            facts.update(wrong="module", wrong_name=module, wrong_guess=closest(module, installed))
    elif (isinstance(err, AttributeError) and attr is not None and name in attr.split(".")
            and failure_site(err, module) is None):  # raised by the lookup, not by the plugin
        owner = getattr(err, "obj", None)
        names = [n for n in dir(owner) if not n.startswith("_")] if owner is not None else []
        where = getattr(owner, "__name__", None) or module
        facts.update(wrong="attribute", wrong_name=str(name), wrong_owner=str(where),
                     wrong_guess=closest(str(name), names))
    return facts


def _modules_of(info: SourceInfo, module: str) -> list[str]:
    """The modules a source's distribution installs (its ``RECORD``), else those beside ``module``."""
    import pkgutil
    import sys
    from importlib.metadata import Distribution
    try:
        files = Distribution.at(info.location).files if info.location else None
    except Exception:  # unreadable metadata: look beside the module instead
        files = None
    found = [".".join(path.with_suffix("").parts).removesuffix(".__init__") for path in files or ()
             if path.suffix == ".py" and not any(part.endswith(".dist-info") for part in path.parts)]
    # An editable install's RECORD lists its finder or .pth, not the user's modules: never suggested.
    found = [name for name in found if not name.startswith("__editable__")]
    parent = module.rpartition(".")[0]
    package = sys.modules.get(parent) if parent else None
    if not found and package is not None:
        found = [f"{parent}.{m.name}" for m in pkgutil.iter_modules(getattr(package, "__path__", []))]
    return found
