"""What a user needs to debug a failed plugin: what is wrong with its source, the file and
line where it failed, its own traceback (our frames and the import system's hidden) and
the command that reinstalls it the way it was installed. Imported on failure only."""

from __future__ import annotations

import shlex
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ._errors import PluginWarning, text_of
from ._sources import module_of

if TYPE_CHECKING:
    from ._sources import SourceInfo

__all__ = ["advice", "capture", "failure_site", "failure_text", "plugin_traceback", "reinstall_command",
           "site_text"]

_PACKAGE = __name__.rpartition(".")[0]
_HIDDEN = (_PACKAGE, "importlib", "_frozen_importlib", "_frozen_importlib_external")


def _hidden(module: object) -> bool:
    return isinstance(module, str) and any(
        module == name or module.startswith(name + ".") for name in _HIDDEN)


@contextmanager
def capture(into: list[str]) -> Iterator[None]:
    """Collect plugin warnings as text (each once) instead of showing them; other warnings
    keep the filters in force and are shown afterwards."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", PluginWarning)
        yield
    for item in caught:
        if not issubclass(item.category, PluginWarning):
            warnings.showwarning(item.message, item.category, item.filename, item.lineno)
        elif str(item.message) not in into:
            into.append(str(item.message))


def failure_site(exc: BaseException | None, module: str | None = None) -> tuple[str, int] | None:
    """``(file, line)`` where a plugin failed: the innermost frame of ``module``'s package
    (the entry point's module), else the innermost frame that is not ours; ``None`` when
    the failure has no plugin frame (a missing module, or a problem found by us)."""
    if exc is None:
        return None
    import traceback

    frames = [(str(name), frame.f_code.co_filename, line) for frame, line in traceback.walk_tb(exc.__traceback__)
              if not _hidden(name := frame.f_globals.get("__name__"))]
    top = (module or "").partition(".")[0]
    own = [f for f in frames if top and f[0].partition(".")[0] == top]
    return (own or frames)[-1][1:] if frames else None


def site_text(exc: BaseException | None, module: str | None = None) -> str:
    """`` (at FILE:LINE)`` for :func:`failure_site`, or the empty string."""
    site = failure_site(exc, module)
    return f" (at {site[0]}:{site[1]})" if site else ""


def plugin_traceback(exc: BaseException | None) -> list[str]:
    """The lines of ``exc``'s traceback as Python prints it (causes and contexts first),
    with our frames and the import system's left out. The text is the plugin's own: escape
    it with :func:`~tilelang_hostcg._text.shown` to show it. Empty for no exception."""
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


def reinstall_command(distribution: str, location: str | None = None) -> str:
    """The ``pip`` command that reinstalls ``distribution`` as it was installed (PEP 610
    ``direct_url.json``, of the metadata folder ``location`` when known): ``pip install -e
    FOLDER`` (editable), ``--force-reinstall SOURCE`` (a folder, file or repository) or
    ``--force-reinstall NAME`` (an index)."""
    from importlib.metadata import Distribution, PackageNotFoundError

    from .discovery.scan import direct_url, file_url_path, is_editable

    try:
        info = direct_url(Distribution.at(location) if location else Distribution.from_name(distribution))
    except (PackageNotFoundError, OSError, ValueError):
        info = {}
    url = info.get("url")
    if not isinstance(url, str) or not url:
        return f"pip install --force-reinstall {shlex.quote(distribution)}"
    source = file_url_path(url) or url
    vcs = info.get("vcs_info")
    if isinstance(vcs, dict) and isinstance(vcs.get("vcs"), str):
        revision = vcs.get("requested_revision") or vcs.get("commit_id")
        source = f"{vcs['vcs']}+{url}" + (f"@{revision}" if isinstance(revision, str) else "")
    if is_editable(info):
        return f"pip install -e {shlex.quote(source)}"
    return f"pip install --force-reinstall {shlex.quote(source)}"


def failure_text(info: SourceInfo) -> str:
    """One phrase on what is wrong with a source: ``plugin <origin> <what>``."""
    err = info.error
    if info.state == "incompatible":
        what = f"is incompatible: {info.reason}"
    elif info.state == "disabled":
        what = f"is skipped: {info.reason}"
    elif err is None:
        what = "failed to load"
    elif isinstance(err, SystemExit):
        what = f"exited while being imported (sys.exit({err.code!r})){site_text(err, module_of(info.value))}"
    else:
        what = (f"failed to load: {type(err).__name__}: {text_of(err)}"
                f"{site_text(err, module_of(info.value))}")
    if info.state == "lazy" and err is not None:
        what += " (a transient failure: it is retried at the next use)"
    return f"plugin {info.origin.describe()} {what}"


def advice(info: SourceInfo) -> str:
    """What to do about a source that failed, is disabled or is incompatible."""
    dist = info.origin.distribution
    if dist is None:
        return f"fix the import path {info.value!r} passed to register_lazy_*()"
    skip = f", or skip it with TILELANG_HOSTCG_DISABLE={dist}"
    if info.state == "incompatible":
        return f"install a release of {dist!r} that supports the installed versions{skip}"
    return f"fix or reinstall {dist!r} ({reinstall_command(dist, info.location)}){skip}"
