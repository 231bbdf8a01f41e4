"""What to say where ``import tilelang`` failed: in TileLang, or in a module it imports (a broken
dependency, repaired alone). Used on the error path only."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, NamedTuple

from ..core import APACHE_TVM, normalize_name
from ..diagnosis import reinstall, uninstall
from ._advice import foreign_tvm, tilelang_repair, unmet_requirement
from ._metadata import editable_source, owner, shipping

if TYPE_CHECKING:
    from ._finding import Found


def tilelang_failed(found: Found, exc: BaseException) -> str:
    """What to say where ``import tilelang`` raised ``exc`` (in TileLang, or in a module it imports)."""
    foreign = foreign_tvm()
    beside = (f"; apache-tvm {foreign} is installed beside it, which does not belong there (TileLang bundles its "
              "own TVM)") if foreign else ""
    steps: list[str] = []
    kept = found.kept()  # of builds installed over each other and changed since: the one installed last
    if kept is not None:
        info = owner(kept)
        where = f"TileLang ({info.describe()}) is installed (at {found.tree})"
        source = editable_source(kept)
        named = (source, None) if source else (info.name, info.version)
        steps = tilelang_repair(kept, named=named, editable=source is not None)
    else:
        where = f"TileLang from a source tree at {found.tree} (the `tilelang` that `import tilelang` gives)"
    otherwise, cause = "Repair that tree (or take it off PYTHONPATH), then run again", ""
    dependency = failed_dependency(os.path.dirname(found.init_file), exc)
    if dependency is not None:
        cause = (f" The failure is in the module {dependency.module!r} ({dependency.text}), which TileLang imports, "
                 "not in TileLang itself.")
        if not _required_otherwise(found, dependency.distribution):  # broken in place: reinstalled alone
            removed = [uninstall(APACHE_TVM)] if foreign else []
            steps = [*removed, *dependency.steps] if dependency.steps else []
            otherwise = f"Repair or reinstall what provides {dependency.module!r}, then run again"
    repair = f"Repair it with: {' && '.join(steps)} (nothing else changes)" if steps else otherwise
    return (f"{where} but cannot be imported ({type(exc).__name__}: {exc}), so its bundled TVM is not usable"
            f"{beside}.{cause} {repair}")


class Dependency(NamedTuple):
    """A module outside a package where the package's import failed: ``text`` says where it is and what
    installed it (``distribution``, where known); ``steps`` reinstall that distribution alone."""

    module: str
    text: str
    steps: list[str]
    distribution: str | None = None


def _required_otherwise(found: Found, distribution: str | None) -> bool:
    """Whether TileLang's distribution requires another version of ``distribution`` than the one installed:
    then TileLang's repair (which puts back the version it requires) is the one, not a reinstall as it is."""
    if distribution is None or not found.owners:
        return False
    return unmet_requirement(found.owners[0], normalize_name(distribution)) is not None


def failed_dependency(package_folder: str, exc: BaseException) -> Dependency | None:
    """Where ``exc`` of a package's import was raised in a module outside ``package_folder`` (a broken
    dependency): the module, what provides it, and the commands that reinstall it alone; else ``None``."""
    where = _raised_in(exc)
    package = os.path.realpath(package_folder) + os.sep
    if where is None or os.path.realpath(where[1]).startswith(package):
        return None
    module, filename = where
    try:
        shippers = shipping(module.partition(".")[0], _folders_of(module, filename))
    except Exception:  # metadata that cannot be read: the module is named, not its distribution
        shippers = []
    for dist in shippers:
        info = owner(dist)
        if info.version is not None:
            return Dependency(module, f"at {filename}, installed by {info.name} {info.version}",
                              [reinstall(info.name, info.version)], info.name)
    return Dependency(module, f"at {filename}", [])


def _folders_of(module: str, filename: str) -> list[str]:
    """Where to look for what installed ``module``: the folder on ``sys.path`` that holds its file, else (a
    compiled module names its source file relative to where it was built) every folder on ``sys.path``."""
    if os.path.isabs(filename) and os.path.exists(filename):
        return [_site_of(module, filename)]
    return [entry for entry in sys.path if isinstance(entry, str) and entry and os.path.isdir(entry)]


def _site_of(module: str, filename: str) -> str:
    """The folder on ``sys.path`` that holds ``module`` (its file ``filename``): above its top-level package."""
    depth = module.count(".") + (os.path.basename(filename) == "__init__.py")
    folder = os.path.dirname(os.path.realpath(filename))
    for _ in range(depth):
        folder = os.path.dirname(folder)
    return folder


def _raised_in(exc: BaseException) -> tuple[str, str] | None:
    """The module and file where ``exc`` was raised: a syntax error's file, else the innermost frame of
    its traceback that is not the import system's."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return _module_named_by(exc.filename), exc.filename
    tb, found = exc.__traceback__, None
    while tb is not None:
        code = tb.tb_frame.f_code
        if not code.co_filename.startswith("<"):  # <frozen importlib._bootstrap>
            found = (str(tb.tb_frame.f_globals.get("__name__") or _module_named_by(code.co_filename)),
                     code.co_filename)
        tb = tb.tb_next
    return found


def _module_named_by(filename: str) -> str:
    """The module name of ``filename`` by the ``sys.path`` folder that holds it (its path below it)."""
    real = os.path.realpath(filename)
    for entry in sys.path:
        folder = os.path.realpath(entry or os.curdir) + os.sep
        if isinstance(entry, str) and real.startswith(folder):
            parts = os.path.splitext(real[len(folder):])[0].split(os.sep)
            return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
    return os.path.splitext(os.path.basename(filename))[0]
