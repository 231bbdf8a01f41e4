"""Findings in words: one function per code, reading only the finding's facts. A new warning is a
class in :mod:`..core` with its code, and one function here."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from _tilelang_hostcg_switch import ENV_AUTO_INSTALL

from ..core import NATIVE_DECLARATION
from ._advice import reinstall
from ._control_words import control
from ._plugin_words import plugin_skipped

if TYPE_CHECKING:
    from ._findings import Finding

_SHOWN = (f"`tilelang-hostcg check` shows it with a probe build, and {ENV_AUTO_INSTALL}=0 turns activation off, "
          "leaving the compiler stock")


def _activation_failed(f: Finding) -> str:
    compiler = f["compiler"]
    return (f"tilelang-hostcg did not activate its {compiler} integration: {f['cause']}. {compiler} runs stock, "
            f"without plugins. Set {ENV_AUTO_INSTALL}=0 to turn activation off")


def _extension_point_taken(f: Finding) -> str:
    return (f"TVM's global function {f['taken']} is already registered by another package; tilelang-hostcg leaves it "
            "as it is, so TVM's builds do not use the installed plugins. Uninstall the package that registers it to "
            "have them used")


def native_calls(compiler: str, point: str | None, module: str, declared: str, served: str, confirmed: bool) -> str:
    """``native: COMPILER calls tilelang-hostcg itself (...)``: a compiler that calls the registry itself
    (at its extension ``point``, else as ``module`` declares it: the ``declared`` API, against the
    ``served`` ones), and whether a build in this process confirmed it."""
    seen = "confirmed by a build" if confirmed else "not yet confirmed by a build in this process"
    if point is not None:
        return f"native: {compiler} calls tilelang-hostcg itself ({point}); {seen}"
    return (f"native: {compiler} calls tilelang-hostcg itself ({module} declares native API {declared}; this "
            f"tilelang-hostcg serves API {served}); {seen}")


def _install_patches_nothing(f: Finding) -> str:
    problem = f["problem"]
    effect = f". {problem}" if problem is not None else ", so its host builds go through the registry without it"
    return f"tilelang_hostcg.{f['client']}.install() patches nothing: {f['native']}{effect}"


def _native_undeclared(f: Finding) -> str:
    module = f["module"]
    return (f"{module} calls tilelang_hostcg.native.{f['function']} without declaring {NATIVE_DECLARATION} = 1 (the "
            "API it was written for), so reports cannot tell that it builds through tilelang-hostcg itself and "
            f"activation may route it as well. Add that line to {module}")


def cannot_build(function: str, tvm: str) -> str:
    """Why a codegen cannot build: one wording for errors, warnings, ``list``, ``check`` and ``explain``."""
    return f"cannot build with {tvm}: it needs TVM global function {function!r}"


def verdict(judged: str, detail: str | None, tvm: str) -> str:
    """Why a codegen or hook does not serve a target, by its verdict (``judged``) and its ``detail``:
    one wording for warnings and ``explain`` (``tvm``: the TVM in use, described)."""
    if judged == "missing-build":
        return cannot_build(str(detail), tvm)
    if judged == "raised":
        return f"supports_target raised {detail}; fix the plugin's predicate"
    if judged == "not-bool":
        return (f"supports_target returned {detail}, not a bool; fix the plugin's predicate to return True or "
                "False")
    return "its supports_target returned False for this target"


def _near_miss(f: Finding) -> str:
    return (f"distribution {f['distribution']!r} ({f['location']!r}) advertises entry points in the group "
            f"[{f['group']}], which tilelang-hostcg does not read (did you mean [{f['ours']}]?); its entry points "
            "there are ignored. Rename the group in its packaging metadata and reinstall it")


def _predicate_failed(f: Finding) -> str:
    return (f"{f['name']!r} ({f['origin']}): {verdict(str(f['verdict']), f['detail'], '')}; it is treated as not "
            "matching")


def _native_declaration(f: Finding) -> str:
    module, served, unserved = f["module"], f["served"], f["unserved"]
    if unserved == "newer":
        what = f"a native API newer than this tilelang-hostcg serves ({served})"
    elif unserved == "no-version":
        what = f"which is no native API version (they are {served})"
    else:  # the declared value's type
        what = f"a {unserved}, not a native API version (an int: {served})"
    return (f"{module} declares {NATIVE_DECLARATION} = {f['declared']}, {what}. Its builds use the compiler's own "
            f"codegens and hooks alone: installed plugins are not used for them. The declaration is {module}'s to "
            f"fix: a module that calls tilelang_hostcg.native declares the API it was written for ({served})")


def _route_arguments(f: Finding) -> str:
    client, compiler = f["client"], f["compiler"]
    return (f"tilelang-hostcg: {compiler} called {f['point']}, which tilelang_hostcg.{client} replaced, with "
            f"{f['arguments']}: arguments that replacement was not written for. {compiler}'s own {f['function']} "
            f"served the call, so this build's host code is {compiler}'s own and the installed plugins are not used; "
            f"tilelang_hostcg.{client}.is_installed() is false while builds pass them. A release of tilelang-hostcg "
            f"written for these arguments is needed; {_SHOWN}")


def held_by(point: str, holder: str | None, compiler: str) -> str:
    """A point a build did not reach, and why: who holds it instead (``holder``), or the compiler's code."""
    if holder is None:
        return f"{point} ({compiler}'s code no longer reaches it)"
    return f"{point} (held by {holder}, which does not call it)"


def _route_bypassed(f: Finding) -> str:
    client, compiler = f["client"], f["compiler"]
    remedy = (f"A release of tilelang-hostcg that knows where this {compiler} builds host code is needed"
              if f["held"] is None else
              "For plugins to be used, that package must call the function it replaced (or be uninstalled)")
    return (f"tilelang-hostcg: a {compiler} build completed without calling {f['points']}, which "
            f"tilelang_hostcg.{client} replaced. Its host code is {compiler}'s own and the installed plugins are not "
            f"used; tilelang_hostcg.{client}.is_installed() is false from this build on. {remedy}; {_SHOWN}")


def _uninstall_left(f: Finding) -> str:
    compiler = f["compiler"]
    if f["wraps"] is not None:
        held = f"around tilelang_hostcg's replacement, which from now on hands every call to {compiler}'s original"
    else:
        held = "in place of tilelang_hostcg's replacement (which it does not call)"
    return (f"tilelang_hostcg.{f['client']}.uninstall() left {f['point']} as it is: another package put a function "
            f"of {f['holder']} there, {held}. That change is the other package's to undo; to have {compiler}'s own "
            f"{f['function']} back, undo it as that package documents (or uninstall that package)")


def _metadata_repair(f: Finding) -> str:
    """The repair of a distribution's metadata, from its folder's name ``NAME-VERSION.dist-info``."""
    name = f["name"]
    if name is None:
        return "Remove the folder"
    return f"Reinstall it ({reinstall(name, f['version'])}) or remove the folder"


def _ignored(f: Finding) -> str:
    """What is ignored for a metadata file that cannot be used: the ``distribution``, its ``entry points``."""
    ignored = f["ignored"]
    if ignored is None:
        return ""
    if ignored == "distribution":
        return "; the distribution is ignored"
    return f"; the distribution's {ignored} are ignored"


def _plugin_metadata(f: Finding) -> str:
    problem, folder, file = f["problem"], f["folder"], f["file"]
    if problem == "not-a-file":
        return (f"distribution metadata {folder!r}: its {file} is {f['kind']}, not a file ({f['path']!r}); the "
                f"distribution is ignored. {_metadata_repair(f)}")
    if problem == "unreadable":
        return (f"distribution metadata {folder!r}: its {file} cannot be read by this user (permission denied: "
                "installed by another user under a restrictive umask?); the distribution is ignored. Make the folder "
                f"readable (its owner can run `chmod -R a+rX {folder}`, and the same for the package's own folder) "
                "or reinstall it as this user")
    if problem == "not-utf-8":
        reason = f"it is not UTF-8: {f['reason']} at byte {f['at']}"
    else:  # unparsable
        reason = f"it cannot be parsed: {f['error']}: {f['reason']}"
    named = f"its {file}" if file == "METADATA" else file  # the distribution's METADATA; another file by its name
    return f"distribution metadata {folder!r}: {named} cannot be used ({reason}){_ignored(f)}. {_metadata_repair(f)}"


def _overlap(f: Finding) -> str:
    """How installed TileLang builds overlap: one's files over another's in one folder, or one shadowing another."""
    what = []
    if f["overwritten"] is not None and f["undecided"] is not None:
        what.append("they were installed over each other in the same folder, and the files of the `tilelang` package "
                    "there match neither build (a file was changed since), so which build is in use cannot be told")
    elif f["overwritten"] is not None:
        what.append("they ship the same `tilelang` package into the same folder, so one's files overwrote the "
                    "other's, and uninstalling either takes the shared files away from both")
    if f["folders"] != "one":
        what.append(f"they sit in different folders; the `tilelang` package of {f['in_use']} is the one imported, the "
                    "other is shadowed")
    if f["ghosts"] is not None:
        what.append(f"{f['ghosts']}: metadata left behind, with no RECORD")
    return "; ".join(what)


def _tilelang_builds(f: Finding) -> str:
    kept = f["kept"]
    uses = (f"{kept} was installed last, so most of the files are its own" if f["undecided"] is not None
            else f"tilelang-hostcg uses {kept}")
    then = f", then {f['reinstall']}" if f["reinstall"] is not None else ""
    return (f"{f['count']} TileLang builds are installed ({f['builds']}); {_overlap(f)}. {uses}. Keep it: "
            f"{f['steps']}{then}")


WORDS: dict[str, Callable[[Finding], str]] = {
    "activation-failed": _activation_failed,
    "control": control,
    "extension-point-taken": _extension_point_taken,
    "install-patches-nothing": _install_patches_nothing,
    "native-declaration": _native_declaration,
    "native-undeclared": _native_undeclared,
    "near-miss": _near_miss,
    "plugin-metadata": _plugin_metadata,
    "plugin-skipped": plugin_skipped,
    "predicate-failed": _predicate_failed,
    "route-arguments": _route_arguments,
    "route-bypassed": _route_bypassed,
    "tilelang-builds": _tilelang_builds,
    "uninstall-left": _uninstall_left,
}
"""Each code's words (the codes of the warnings the package gives through :func:`._findings.warn`)."""


def words(finding: Finding) -> str:
    """``finding`` in words."""
    return WORDS[finding.code](finding)
