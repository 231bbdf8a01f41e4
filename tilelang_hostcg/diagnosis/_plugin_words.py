"""A plugin that failed, or was skipped, in words: what is wrong with it and what to do, from the facts
:mod:`..registry` found (its origin, its state, the exception, where it failed, the commands that
repair it). Errors, warnings and the command line word it here alone."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._findings import Finding


def did_you_mean(guess: str | None) -> str:
    """`` (did you mean 'x'?)`` for the nearest name found, or ``""``."""
    return f" (did you mean {guess!r}?)" if guess else ""


def wrong_entry_point(f: Finding) -> str | None:
    """What is wrong with an entry point's value that names a missing module or attribute, else ``None``."""
    wrong, value, name = f["wrong"], f["value"], f["wrong_name"]
    if wrong == "module":
        return f"{value!r} names module {name!r}, which does not exist{did_you_mean(f['wrong_guess'])}"
    if wrong == "attribute":
        return (f"{value!r} names attribute {name!r}, which {f['wrong_owner']!r} does not have"
                f"{did_you_mean(f['wrong_guess'])}")
    return None


def what_failed(error: str, message: str, site: str | None, wrong: str | None) -> str:
    """What failed when a plugin was loaded: ``its entry point is wrong: ...`` where its value names a
    missing module or attribute (``wrong``), else the exception's ``error``: ``message`` and where (``site``)."""
    if wrong is not None:
        return f"its entry point is wrong: {wrong}"
    at = f" (at {site})" if site is not None else ""
    return f"{error}: {message}{at}"


def plugin_state(f: Finding) -> str:
    """A source that serves nothing, in words: ``is skipped: REASON``, ``is incompatible: REASON`` or
    ``failed to load`` (:func:`plugin_failure` says what failed)."""
    if f["state"] == "incompatible":
        return f"is incompatible: {f['reason']}"
    if f["state"] == "disabled":
        return f"is skipped: {f['reason']}"
    return "failed to load"


def plugin_failure(f: Finding) -> str:
    """One phrase on what is wrong with a source: ``plugin <origin> <what>``."""
    at = f" (at {f['site']})" if f["site"] is not None else ""
    wrong = wrong_entry_point(f)
    if f["state"] in ("disabled", "incompatible") or f["error"] is None:
        what = plugin_state(f)
    elif f["exit"] is not None:
        what = f"exited while being imported (sys.exit({f['exit']})){at}"
    else:
        what = f"failed to load: {what_failed(str(f['error']), str(f['message']), f['site'], wrong)}"
    if f["state"] == "lazy" and f["error"] is not None:
        what += " (a transient failure: it is retried at the next use)"
    return f"plugin {f['origin']} {what}"


def _clash(f: Finding, skip: str) -> str:
    """Two plugins register one name for one kind: rename it in one of the two (the one installed
    last, most likely a copy that kept the names it was copied with), or skip one."""
    newer, older = f["clash_newer"], f["clash_older"]
    return (f"{f['distribution']!r} and {f['clash_other']!r} both register {f['clash_name']!r} for "
            f"{f['clash_kind']!r}, and a name is one registration per kind across all plugins: rename it in the one "
            f"you are writing ({newer!r} was installed last; a copy of {older!r} keeps its names until they are "
            f"renamed, as the template's README lists them), then reinstall that one{skip}")


def plugin_advice(f: Finding) -> str:
    """What to do about a source that failed or is incompatible."""
    dist, value = f["distribution"], f["value"]
    if dist is None and (f["error"] is None or f["wrong"] is not None):
        return f"fix the import path {value!r} passed to register_lazy_*()"
    if dist is None:
        return (f"the module raised while {value!r} was imported: fix the module (the import path "
                f"passed to register_lazy_*() is right; the traceback shows where it raised)")
    skip = f", or skip it with {f['skip']}"
    if f["state"] == "incompatible":
        return f"install a release of {dist!r} that supports the installed versions{skip}"
    if f["clash_other"] is not None:
        return _clash(f, skip)
    if f["wrong"] is not None:
        return (f"fix the value of entry point '{f['entry_point']}' in {dist!r}'s metadata "
                f"(the [project.entry-points.\"{f['group']}\"] table of its pyproject.toml), then "
                f"reinstall it ({f['reinstall']}){skip}")
    return f"fix or reinstall {dist!r} ({f['reinstall']}){skip}"


def plugin_skipped(f: Finding) -> str:
    """A plugin that failed to load, or is incompatible, skipped for what something else served."""
    return f"{plugin_failure(f)}; it is skipped for {f['what']}. {plugin_advice(f)}"
