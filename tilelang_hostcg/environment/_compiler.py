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

from ..core._errors import TVMNotFoundError
from ..core._names import APACHE_TVM, TILELANG
from ._advice import installed_version, reinstall
from ._import_failure import tilelang_failed
from ._importing import is_initializing
from ._metadata import Owner, files_match, folder_of, owner, owners_of, shipping, unusable_entry_points
from ._requirements import UNKNOWN_VERSION
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


def tilelang_builds(found: Found | None = None) -> tuple[Distribution, ...]:
    """Every installed distribution that ships a ``tilelang`` package where one is importable (in the
    folder of the one in use and in the folders on ``sys.path`` that hold one): the one in use first."""
    found = find(TILELANG) if found is None else found
    folders = [p or os.curdir for p in sys.path if isinstance(p, str)]
    parents = [os.path.realpath(f) for f in folders if os.path.isfile(os.path.join(f, TILELANG, "__init__.py"))]
    if found is not None:
        parents.insert(0, found.tree)
    in_use = list(found.owners) if found is not None else []
    seen = {os.path.realpath(folder_of(d)) for d in in_use}
    others = [d for d in shipping(TILELANG, list(dict.fromkeys(parents)))
              if os.path.realpath(folder_of(d)) not in seen]
    return (*in_use, *others)


def _uninstall_step(dist: Distribution) -> str:
    """How to remove ``dist``: ``pip uninstall`` where it lists its files, else its metadata folder."""
    info = owner(dist)
    if info.record:
        return f"`pip uninstall {info.name}`"
    return (f"remove its metadata folder {info.folder!r} by hand (it lists no files, so pip cannot uninstall "
            "it; it ships nothing of its own)")


def tilelang_overlap(found: tuple[Distribution, ...] | None = None) -> str | None:
    """The warning where more than one installed distribution ships TileLang (default: :func:`tilelang_builds`)."""
    in_use = find(TILELANG) if found is None else None
    found = tilelang_builds(in_use) if found is None else found
    if len(found) < 2:
        return None
    infos = [owner(d) for d in found]
    named = ", ".join(i.describe() for i in infos)
    folders = {os.path.dirname(os.path.realpath(i.folder)) for i in infos}
    if len(folders) == 1 and in_use is not None and in_use.undecided():
        return _neither_build(found, infos, named)
    if len(folders) == 1:
        how = ("they ship the same `tilelang` package into the same folder, so one's files overwrote the other's, "
               "and uninstalling either takes the shared files away from both")
    else:
        how = (f"they sit in different folders; the `tilelang` package of {infos[0].describe()} is the one "
               "imported, the other is shadowed")
    steps = "; ".join(_uninstall_step(d) for d in found[1:])
    then = f", then `{reinstall(infos[0].name, infos[0].version)}`" if len(folders) == 1 and infos[0].record else ""
    return (f"{len(found)} TileLang builds are installed ({named}); {how}. tilelang-hostcg uses "
            f"{infos[0].describe()}. Keep one: {steps}{then}")


def _neither_build(found: tuple[Distribution, ...], infos: list[Owner], named: str) -> str:
    """The warning where builds were installed over each other and the files match none of them."""
    steps = "; ".join(_uninstall_step(d) for d in found)
    choices = " or ".join(f"`{reinstall(i.name, i.version)}`" for i in infos if i.record)
    then = f", then reinstall the one you want: {choices}" if choices else ""
    return (f"{len(found)} TileLang builds are installed ({named}) over each other in the same folder, and the "
            "files of the `tilelang` package there match neither build (a file was changed since), so which build "
            f"is in use cannot be told. Keep one: {steps}{then}")


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
        culprits = "; ".join(unusable_entry_points())  # TVM's autoload reads every distribution's
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


class TVMInfo(NamedTuple):
    """Which TVM is in use: its ``provider`` (``apache-tvm``: a TVM of its own; ``tilelang``: the TVM
    a TileLang bundles), the ``distribution`` whose files hold it (``None``: a source tree at
    ``tree``) and its version, TVM's ``version``, and its capabilities."""

    provider: str
    provider_version: str | None
    version: str
    path: str
    llvm: bool
    cuda_host: bool
    tir_module: str
    distribution: str | None = None
    tree: str | None = None

    def describe(self) -> str:
        """One phrase, e.g. ``apache-tvm 0.27.0``, ``TVM 0.25.dev0 bundled with tilelang 0.1.15``."""
        if self.distribution is None:
            source = f"a source tree at {self.tree}"
        else:
            source = f"{self.distribution} {self.provider_version or '?'}"
        if self.provider == TILELANG:
            bundled = source if self.distribution is not None else f"TileLang from {source}"
            return f"TVM {self.version} bundled with {bundled}"
        if self.distribution == APACHE_TVM:
            return f"{APACHE_TVM} {self.provider_version or self.version}"
        return f"TVM {self.version} from {source}"


_INFO: list[TVMInfo] = []


def _bundling_tilelang(tvm_file: str) -> Found | None:
    """The imported TileLang whose folder holds ``tvm_file`` (its bundled TVM), else ``None``."""
    tilelang = find(TILELANG) if sys.modules.get(TILELANG) is not None else None
    if tilelang is not None and tvm_file.startswith(os.path.dirname(tilelang.init_file) + os.sep):
        return tilelang
    return None


def tvm_info() -> TVMInfo:
    """Which TVM is in use (importing it as :func:`import_tvm` does) and its capabilities."""
    tvm = import_tvm()
    path = getattr(tvm, "__file__", None) or ""
    if _INFO and _INFO[0].path == path:
        return _INFO[0]
    real = os.path.realpath(path)
    tilelang = _bundling_tilelang(real)
    source = tilelang if tilelang is not None else find("tvm")
    found = source.owner if source is not None else None
    provider = TILELANG if tilelang is not None else APACHE_TVM
    version = source.version() if source is not None else None
    llvm = bool(tvm.runtime.enabled("llvm"))
    kinds = set(tvm.target.Target.list_kinds())
    tir = "tvm.tirx" if has_module("tvm.tirx") else "tvm.tir"
    info = TVMInfo(provider, version, str(getattr(tvm, "__version__", "?")), path, llvm, "cuda_host" in kinds, tir,
                   found.name if found is not None else None, source.tree if source is not None else None)
    _INFO[:] = [info]
    return info


def describe_tvm() -> str:
    """:meth:`TVMInfo.describe` of the TVM in use, or what is wrong (``no TVM installed``)."""
    return str(tvm_document()["describe"])


def get_global_func(name: str) -> Any:
    """TVM's global function ``name``, or ``None`` when the TVM in use lacks it."""
    return import_tvm().get_global_func(name, allow_missing=True)


_NOT_IMPORTED = {False: "no TVM installed", True: "TVM cannot be imported"}  # by TVMNotFoundError.installed


def tvm_document(*, import_it: bool = True) -> dict[str, Any]:
    """:class:`TVMInfo`'s fields and ``describe``, for the CLI; with ``import_it=False`` and no TVM
    imported yet, what the import system would import, named from installed metadata."""
    if import_it or "tvm" in sys.modules:
        try:
            info = tvm_info()
        except TVMNotFoundError as exc:
            return {"provider": None, "describe": _NOT_IMPORTED[exc.installed], "error": str(exc)}
        return {**info._asdict(), "describe": info.describe()}
    return _predicted_document()


def _predicted_document() -> dict[str, Any]:
    """The TVM document from what ``import tilelang`` / ``import tvm`` would give, nothing imported."""
    tilelang = find(TILELANG)
    if tilelang is not None:
        found = tilelang.owner
        name = found.name if found is not None else None
        bundler = tilelang.describe() if found is not None else f"TileLang from {tilelang.describe()}"
        describe = f"TVM bundled with {bundler}"
        return {"provider": TILELANG, "distribution": name, "provider_version": tilelang.version(), "version": None,
                "tree": None if found is not None else tilelang.tree, "describe": f"{describe} (not imported)"}
    tvm = find("tvm")
    if tvm is None:
        version = installed_version(APACHE_TVM)
        if version is None:
            return {"provider": None, "describe": "no TVM on sys.path (no `tilelang` or `tvm` package there; not "
                                                  "imported: one that an import hook serves, as some editable "
                                                  "installs do, shows with `list --load`)"}
        return {"provider": APACHE_TVM, "distribution": APACHE_TVM, "provider_version": version, "version": None,
                "describe": f"apache-tvm {version} (metadata only: its package was not found; not imported)"}
    found = tvm.owner
    if found is not None and found.name == APACHE_TVM:
        describe = f"apache-tvm {found.version or '?'}"
    else:
        describe = f"TVM from {tvm.describe()}"
    return {"provider": APACHE_TVM, "distribution": found.name if found is not None else None,
            "provider_version": tvm.version(), "version": None, "tree": None if found is not None else tvm.tree,
            "describe": f"{describe} (not imported)"}


def provider_versions() -> dict[str, str | None]:
    """For requirement checks, imports nothing: the version of the TileLang that ``import tilelang``
    gives, under its distribution's name (``tilelang`` for a source tree); the version of the TVM that
    ``import tvm`` gives, as ``apache-tvm``, whatever ships it (beside a TileLang: an installed
    ``apache-tvm``'s); :data:`UNKNOWN_VERSION` where a source tree does not say; ``None``: none."""
    found: dict[str, str | None] = {TILELANG: None, APACHE_TVM: None}
    tilelang = find(TILELANG)
    if tilelang is not None:
        name = tilelang.owner.name if tilelang.owner is not None else TILELANG
        found[name] = tilelang.version() or UNKNOWN_VERSION
        found[APACHE_TVM] = installed_version(APACHE_TVM)
    elif (tvm := find("tvm")) is not None:
        found[APACHE_TVM] = _tvm_version(tvm)
    return found


def _tvm_version(tvm: Found) -> str:
    """The version of the TVM package ``tvm``: ``apache-tvm``'s where it ships it, else the imported
    module's, else its distribution's, else unknown."""
    owner = tvm.owner
    if owner is not None and owner.name == APACHE_TVM and owner.version:
        return owner.version
    module = sys.modules.get("tvm") if tvm.imported else None
    version = getattr(module, "__version__", None) or (owner.version if owner is not None else None)
    return str(version) if version else UNKNOWN_VERSION

