"""``check``'s problems in words: one function per problem code (the table in ``docs/cli.md``), reading
only the facts ``check`` decided (kinds, names, what the TVM in use is, the repair that fits)."""

from __future__ import annotations

from collections.abc import Sequence

from ..core import CORE_DISTRIBUTION
from ._advice import reinstall, uninstall


def missing_codegen_problem(kind: str, canon: str, *, tvm_lacks_kind: str | None = None,
                            error: str | None = None) -> str:
    """A kind required with ``--require`` that no host codegen serves: the TVM in use (``tvm_lacks_kind``,
    described) has no such kind, or the resolution failed with ``error``, or nothing resolves."""
    if tvm_lacks_kind is not None:
        why = f"the TVM in use ({tvm_lacks_kind}) has no target kind {canon!r}, so nothing can be built for it"
    else:
        why = error or "nothing resolves"
    return (f"required kind {kind!r} (--require) has no host codegen that can build with the TVM in use: "
            f"{why}")


def missing_hook_problem(kind: str, unusable: Sequence[tuple[str, str]], autoload_off: str | None) -> str:
    """A kind required with ``--require-hook`` that no hook serves: the ``unusable`` providers of one (their
    distribution and state, worded), else why autoload is off, else the advice to install one."""
    notes = [f"{distribution!r} provides it but {state}" for distribution, state in unusable]
    if not notes and autoload_off is not None:
        notes = [autoload_off]
    fix = ": " + "; ".join(notes) if notes else "; install a plugin distribution that provides it"
    return f"required kind {kind!r} (--require-hook) has no host codegen hook{fix}"



def duplicate_distribution_problem(name: str, locations: Sequence[str]) -> str:
    """One distribution installed more than once on ``sys.path``, and what to do."""
    return (f"distribution {name!r} is installed {len(locations)} times on sys.path ({', '.join(locations)}); the "
            f"first is used and the others are stale metadata. Remove the stale metadata folder(s) "
            f"{', '.join(locations[1:])} (or take their parent folder off sys.path/PYTHONPATH)")

def unknown_kind_problem(registered: Sequence[tuple[str, str]], kind: str, tvm: str) -> str:
    """Registrations (their name and origin, described) for a ``kind`` the TVM in use (``tvm``) does not know."""
    names = ", ".join(f"{name!r} ({origin})" for name, origin in registered)
    return (f"{names} registered for kind {kind!r}, which is not a target kind of the installed TVM ({tvm}); "
            "nothing can resolve to it until TVM knows the kind")


def device_kind_problem(names: Sequence[str], kind: str) -> str:
    """Host codegens (``names``) registered for a device ``kind``: never used."""
    return (f"host codegen(s) {', '.join(map(repr, names))} are registered for {kind!r}, which TVM reports as a "
            "device kind; they are never used (host codegens are resolved from the host target). Register them "
            f"under the host kind, e.g. '{kind}_host'")


def ambiguous_problem(error: str, kind: str) -> str:
    """A tie (``error``, the resolution's own words) on the default target of ``kind``."""
    return f"{error} (judged on the default target {kind!r})"


def missing_build_function_problem(name: str, kind: str, origin: str, cannot_build: str, fix: str | None) -> str:
    """A codegen the TVM in use ``cannot_build`` with: a plugin's, and what to do (``fix``), or (``None``)
    the core's own or a client's default, which follow the TVM's build options."""
    why = fix if fix is not None else ("it is not used with this TVM (a capability of the TVM, not a problem of the "
                                       "installation)")
    return f"host codegen {name!r} for kind {kind!r} ({origin}) {cannot_build}; {why}"


def plugin_cannot_build_fix(distribution: str | None, skip: str | None) -> str:
    """What to do about a plugin's codegen the TVM in use cannot build: where TileLang provides the TVM
    (``skip``: the control that skips the plugin), never another TVM (apache-tvm beside TileLang breaks
    ``import tilelang``); else another TVM or release."""
    if skip is None:
        return "install a TVM build with it, or a release of the plugin built for this TVM"
    return (f"TileLang's bundled TVM is built without it, and no other TVM belongs beside TileLang: use the "
            f"plugin where a TVM with it is installed, and here uninstall it (`{uninstall(str(distribution))}`) or "
            f"skip it with {skip}")


def tilelang_requirement_problem(distribution: str, version: str, line: str, in_use: str, build: str) -> str:
    """A plugin (``distribution`` ``version``) whose requirement ``line`` names another TileLang ``build``
    than the one installed (``in_use``): install and upgrade it without its dependencies."""
    return (f"plugin distribution {distribution!r} {version} requires {line!r}, but the TileLang installed is "
            f"{in_use}: the plugin works with it, but pip, installing or upgrading {distribution} with its "
            f"dependencies, would install {build} over the same `tilelang/` folder, replacing {in_use}'s files. "
            f"Install and upgrade it without its dependencies (`{reinstall(distribution, version)}`); its author "
            "can move the requirement into an extra (`[tilelang]`, see docs/authoring.md)")


def tvm_conflict_problem(in_use: str, foreign: str | None, ffi: str, unmet: tuple[str, str | None] | None,
                 repair: Sequence[str]) -> str:
    """``apache-tvm`` (``foreign``: its version) installed beside TileLang (``in_use``), or TileLang's
    requirement on ``ffi`` ``unmet`` (the requirement, the version installed), and the ``repair`` commands."""
    what = [f"apache-tvm {foreign} is installed beside TileLang ({in_use}), which bundles its own TVM: it does not "
            f"belong there (installing it may replace the {ffi} TileLang needs, and `import tilelang` then fails)"
            ] if foreign is not None else []
    if unmet is not None:
        what.append(f"TileLang ({in_use}) requires {unmet[0]} but {ffi} {unmet[1] or '(none)'} is installed")
    return "; ".join(what) + ". Repair it with: " + " && ".join(repair) + " (nothing else changes)"


def client_problem(client: str, why: str) -> str:
    """The installed plugins are not used by the compiler in use (``client``), and ``why``."""
    return f"the installed plugins are not used by the compiler in use ({client}): {why}"


def route_unused_problem(client: str, problem: str, native: bool) -> str:
    """``check``'s probe build did not call the route (``problem``): the compiler's own declaration of the
    native API (``native``) is its maintainers' to fix, else a release that knows the compiler is needed."""
    fix = ("its declaration is its maintainers' to fix: a module declares the native API only where the "
           "compiler's builds call it" if native else
           "a release of tilelang-hostcg that knows where this compiler builds host code is needed")
    return (f"the installed plugins are not used by the compiler in use ({client}): {problem}. The compiler builds "
            f"its host code stock; {fix}")


def printed_note(origin: str, stdout: int, stderr: int) -> str:
    """A plugin (``origin``, described) that wrote ``stdout`` and ``stderr`` bytes while it was imported."""
    sizes = (("stdout", stdout), ("stderr", stderr))
    streams = " and ".join(f"{size} bytes to {name}" for name, size in sizes if size)
    return (f"plugin {origin} wrote {streams} while being imported (shown on stderr); in a user's program that "
            "lands in the program's own output")


def lock_record(key: str, kind: str, name: str, distribution: str) -> str:
    """A record of a lock file in words: its noun (by the lock's ``key``) and what names it (``name``: an
    entry point's value, or a codegen's or hook's name)."""
    if key == "entry_points":
        return f"entry point '{kind} = {name}' of {distribution!r}"
    noun = "host codegen" if key == "codegens" else "host codegen hook"
    return f"{noun} {name!r} for kind {kind!r} from {distribution!r}"


def _lock_fix(path: str) -> str:
    """What to do where a change from the lock file is intended."""
    return f"if the change is intended, update the lock with `tilelang-hostcg lock -o {path}`"


def lock_drift_problem(code: str, path: str, *, record: str | None = None, distribution: str | None = None,
                       version: str | None = None, was: str | None = None, now: str | None = None,
                       repair: str | None = None) -> str:
    """``check``'s ``lock-added``, ``lock-removed`` or ``lock-changed`` problem: a ``record`` (worded by
    :func:`lock_record`: its priority ``now`` against the lock's ``was``) or a ``distribution`` (its ``version``,
    or ``now`` against the lock's ``was``; ``repair``: how to put back the lock's) that differs from the
    lock file at ``path``."""
    fix = _lock_fix(path)
    if record is not None:
        if code == "lock-added":
            return f"{record} is not in the lock file {path!r}; {fix}"
        if code == "lock-removed":
            return f"{record} in the lock file {path!r} is gone; {fix}"
        return f"{record} has priority {now}, the lock file {path!r} has {was}; {fix}"
    if code == "lock-added":
        return (f"distribution {distribution!r} {version} is installed but not in the lock file {path!r}; "
                f"uninstall it, or {fix}")
    if code == "lock-removed":
        return (f"distribution {distribution!r} {version} is in the lock file {path!r} but not installed; {repair}, "
                f"or {fix}")
    return f"distribution {distribution!r} is {now} but the lock file {path!r} has {was}; {repair}, or {fix}"


def no_core_requirement_problem(distribution: str, version: str, location: str) -> str:
    """``check``'s ``declaration`` problem of a plugin distribution that declares no requirement on the core."""
    return (f"plugin distribution {distribution!r} {version} ({location!r}) advertises tilelang-hostcg entry points "
            f"but declares no requirement on {CORE_DISTRIBUTION}, so nothing keeps an incompatible "
            f"{CORE_DISTRIBUTION} from being installed beside it. Add e.g. '{CORE_DISTRIBUTION}>=0.1,<1' to its "
            "dependencies")
