"""Finding the compiler: the TileLang and the TVM are the modules that ``import tilelang`` and
``import tvm`` give in this process, by the import system's own rules (``sys.path`` in its own
order; no folder put first, no finder asked anything). Where ``tilelang`` is an importable package,
it is imported first, as a TileLang program does (it puts its bundled TVM on ``sys.path``); then
``import tvm``. Installed metadata only names what was imported (:mod:`._metadata`): the
distribution whose files hold the module, whatever its name, else a source tree. Nothing here runs
at import of :mod:`tilelang_hostcg`."""

from __future__ import annotations

import os
import sys
from importlib.machinery import PathFinder
from typing import TYPE_CHECKING, NamedTuple

from ..core import APACHE_TVM, TILELANG, TVMNotFoundError
from ..diagnosis import reinstall
from ._advice import installed_version
from ._importing import is_initializing
from ._metadata import Owner, files_match, has_record, installed_at, owner, owners_of, unusable_entry_points
from ._tilelang_layout import holds_tilelang_layout

if TYPE_CHECKING:
    from importlib.machinery import ModuleSpec
    from importlib.metadata import Distribution
    from types import ModuleType
    from typing import Any


class Found(NamedTuple):
    """Where an importable package (``tilelang`` or ``tvm``) comes from: its ``__init__.py``
    (``init_file``), whether it is imported, and the installed distributions whose files hold it
    (``owners``: the first names it; none: a source tree; more: a broken installation)."""

    package: str
    init_file: str
    imported: bool
    owners: tuple[Distribution, ...]

    @property
    def owner(self) -> Owner | None:
        """The distribution that names the package, or ``None`` (a source tree)."""
        return owner(self.owners[0]) if self.owners else None

    @property
    def tree(self) -> str:
        """The folder that holds the package (a ``site-packages`` or a source tree)."""
        return os.path.dirname(os.path.dirname(self.init_file))

    def version(self) -> str | None:
        """The owner's version, else the imported module's ``__version__``, else ``None``."""
        found = self.owner
        if found is not None and found.version:
            return found.version
        module = sys.modules.get(self.package) if self.imported else None
        version = getattr(module, "__version__", None)
        return str(version) if version else None

    def kept(self) -> Distribution | None:
        """The build to keep and repair: the owner whose files are installed (the first); where
        :meth:`undecided`, the one installed last among those that list files (its files were written
        over the others', then one was changed); ``None`` for a source tree."""
        if not self.undecided():
            return self.owners[0] if self.owners else None
        listing = [d for d in self.owners if has_record(d)] or list(self.owners)
        return max(listing, key=lambda d: (installed_at(d), -listing.index(d)))

    def undecided(self) -> bool:
        """Whether more than one distribution lists the package's files and the files installed match
        none of them (a file changed since): which build is in use cannot be told."""
        return len(self.owners) > 1 and not any(files_match(d, self.package, self.init_file) for d in self.owners)

    def describe(self) -> str:
        """``tilelang-musa 0.1.16``, ``a source tree at PATH``, or, where :meth:`undecided`, every build."""
        found = self.owner
        if found is None:
            return f"a source tree at {self.tree}"
        if self.undecided():
            return (" or ".join(owner(d).describe() for d in self.owners)
                    + " (the files installed match neither build: changed since)")
        return found.describe()


def _package_file(package: str) -> tuple[str | None, bool]:
    """The ``__init__.py`` of ``package`` as ``import`` gives it (imported, or found on ``sys.path``
    without importing), and whether it is imported; ``None``: not an importable package there (a
    plain module or a namespace folder of that name is not the compiler)."""
    module = sys.modules.get(package)
    if module is None and package in sys.modules:
        return None, False  # blocked (``sys.modules[package] = None``): ``import`` raises, nothing is found
    if module is not None:
        origin = getattr(module, "__file__", None)
        imported = True
    else:
        origin = getattr(_path_spec(package), "origin", None)
        imported = False
    if isinstance(origin, str) and os.path.basename(origin) == "__init__.py":
        return os.path.realpath(origin), imported
    return None, imported


def _path_spec(package: str) -> ModuleSpec | None:
    """The spec that ``sys.path`` gives ``package``: the import system's own path finder, asked as
    ``import`` asks it. No other finder on ``sys.meta_path`` is asked anything: a package that only
    another tool's finder serves (some editable installs) is found by importing it
    (:func:`import_tilelang`), as a program does."""
    try:
        return PathFinder.find_spec(package)
    except Exception:  # a broken path entry: not importable from it
        return None


def has_module(name: str) -> bool:
    """Whether the module ``name`` (``tvm.tirx``, ``tilelang.backend.module``) is imported or held by
    the folders of its package, without importing anything, asked of the path finder alone (as
    :func:`_path_spec`): within an imported package, its ``__path__`` says where its modules are."""
    return name in sys.modules or _module_spec(name) is not None


def _module_spec(name: str) -> Any:
    """The spec of the module ``name``: its own where imported, else the path finder's, in the
    folders of its package (found the same way) or on ``sys.path``."""
    module = sys.modules.get(name)
    if module is not None:
        return module  # its __path__ says where its modules are
    parent, _, _ = name.rpartition(".")
    if not parent:
        return _path_spec(name)
    package = _module_spec(parent)
    folders = getattr(package, "__path__", None) or getattr(package, "submodule_search_locations", None)
    if not folders:
        return None
    try:
        return PathFinder.find_spec(name, list(folders))
    except Exception:  # a broken folder entry
        return None


def find(package: str) -> Found | None:
    """Where ``package`` (``tilelang`` or ``tvm``) comes from in this process, without importing it. A
    ``tilelang`` is TileLang where it holds a module of TileLang's layouts or an installed distribution
    ships it (a broken TileLang, named for its repair); any other (a user's own package of that name, a
    stub) is none."""
    init_file, imported = _package_file(package)
    if init_file is None:
        return None
    likely = (APACHE_TVM,) if package == "tvm" else (TILELANG,)
    owners = tuple(owners_of(package, init_file, likely))
    if package == TILELANG and not owners and not holds_tilelang_layout([os.path.dirname(init_file)]):
        return None
    return Found(package, init_file, imported, owners)


def import_tilelang() -> ModuleType | None:
    """``import tilelang`` where ``tilelang`` is an importable package (``None`` where it is not); a
    failure is a :class:`TVMNotFoundError` naming it and the repair. A module or namespace folder
    named ``tilelang`` is not imported; a TileLang that only another tool's finder serves is imported
    where an editable install of a TileLang build is installed (as a TileLang program imports it), and by
    :func:`import_tvm` where ``import tvm`` alone finds no TVM."""
    found = find(TILELANG)
    if found is None:
        from ._metadata import editable_builds  # here: only where no folder on sys.path holds a TileLang
        builds = editable_builds(TILELANG) if TILELANG not in sys.modules else []
        return _import_served_tilelang(builds) if builds else None
    if found.imported and not is_initializing(sys.modules.get(TILELANG)):
        return sys.modules[TILELANG]
    try:
        # The import statement waits for another thread's import to finish (in the importing
        # thread it returns the module as is).
        return __import__(TILELANG)
    except Exception as exc:  # any failure of TileLang's import: name it, never crash
        from ._import_failure import tilelang_failed  # the error path only
        raise TVMNotFoundError(tilelang_failed(found, exc)) from exc


def _import_served_tilelang(builds: list[Distribution] | None = None) -> ModuleType | None:
    """``import tilelang`` where no folder on ``sys.path`` holds a ``tilelang`` (else ``None``): the
    package another tool's finder serves (some editable installs: ``builds``, where known), asked by the
    import itself; ``None`` where nothing answers. A failure of its import is named, with its repair."""
    if _path_spec(TILELANG) is not None:  # a module or namespace folder on sys.path: not TileLang
        return None
    try:
        module = __import__(TILELANG)
    except Exception as exc:  # any failure of TileLang's import: name it, never crash
        if isinstance(exc, ModuleNotFoundError) and exc.name == TILELANG:
            return None
        from ._metadata import editable_source
        source = editable_source(builds[0]) if builds else None
        if builds and source:
            init_file = os.path.join(source, TILELANG, "__init__.py")
            from ._import_failure import tilelang_failed  # the error path only
            raise TVMNotFoundError(tilelang_failed(Found(TILELANG, init_file, False, tuple(builds)), exc)) from exc
        raise TVMNotFoundError(f"`import tilelang` gives a TileLang that no folder on sys.path holds (an import "
                               f"hook serves it, as some editable installs do) and it cannot be imported "
                               f"({type(exc).__name__}: {exc}), so its bundled TVM is not usable. Repair that "
                               "TileLang, then run again") from exc
    return module if find(TILELANG) is not None else None


def import_tvm() -> ModuleType:
    """The ``tvm`` module in use, imported by the rule above, else :class:`TVMNotFoundError`."""
    loaded = sys.modules.get("tvm")
    if loaded is not None and not is_initializing(loaded):
        return loaded
    import_tilelang()
    try:
        tvm = _import_tvm_module()
    except Exception as exc:
        if isinstance(exc, ImportError) and getattr(exc, "name", None) == "tvm":
            raise TVMNotFoundError("No TVM is installed: tilelang-hostcg uses the TVM of the environment. "
                                   f"{_no_tvm_advice()} [{exc}]", installed=False) from exc
        from ..diagnosis import words  # the findings' words: only where TVM cannot be imported
        culprits = "; ".join(map(words, unusable_entry_points()))  # TVM's autoload reads every distribution's
        raise TVMNotFoundError(f"TVM is installed but cannot be imported ({type(exc).__name__}: {exc}): " + (
            f"`import tvm` reads the entry points of every installed distribution, and {culprits}"
            if culprits else f"repair it ({reinstall(APACHE_TVM, installed_version(APACHE_TVM))})")) from exc
    return tvm


def _import_tvm_module() -> ModuleType:
    """``import tvm``; where it finds none and no TileLang is imported, once more after importing a
    TileLang that only another tool's finder serves (it may bundle the TVM)."""
    try:
        import tvm
    except ModuleNotFoundError as exc:
        if exc.name != "tvm" or sys.modules.get(TILELANG) is not None or _import_served_tilelang() is None:
            raise
        import tvm
    return tvm  # type: ignore[no-any-return]  # untyped package


def _no_tvm_advice() -> str:
    """What to do where no TVM can be imported: never install a TVM beside a TileLang."""
    from importlib.metadata import distributions

    from ._metadata import distribution_name, distribution_version, ships_package
    if tilelang := find(TILELANG):
        return (f"`import tilelang` gives TileLang from {tilelang.describe()}, which bundles no importable TVM: "
                "repair that TileLang")
    if dist := next((d for d in distributions() if ships_package(d, TILELANG)), None):  # an error's path
        name = distribution_name(dist)
        return (f"TileLang's metadata ({name} {distribution_version(dist) or '?'}) is installed but its `tilelang` "
                f"package is not importable: repair it with `{reinstall(name, distribution_version(dist))}`")
    return ("Install one with `pip install tilelang-hostcg[tvm]` (apache-tvm) or `pip install "
            "tilelang-hostcg[tilelang]` (TileLang and its bundled TVM)")
