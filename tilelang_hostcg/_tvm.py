"""The one place that finds and imports TVM (``apache-tvm``, or the TVM TileLang bundles) and
says which is in use: a ``tvm`` already imported; else the installed TileLang (found from
metadata, whatever its distribution's name) imported first; else ``import tvm``. Nothing here
runs at import of :mod:`tilelang_hostcg`."""

from __future__ import annotations

import os
import sys
from contextlib import suppress
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from ._advice import foreign_tvm, installed_version, reinstall, tilelang_repair
from ._errors import HostCodegenError
from ._names import APACHE_TVM, TILELANG
from .discovery._records import normalize_name

if TYPE_CHECKING:
    from importlib.metadata import Distribution
    from types import ModuleType
    from typing import Any

class TVMNotFoundError(HostCodegenError, ImportError):
    """No TVM can be imported: neither ``apache-tvm`` nor TileLang is installed."""


@dataclass(frozen=True, slots=True)
class TVMInfo:
    """Which TVM is in use: its ``provider`` (``apache-tvm`` or ``tilelang``), the provider's
    version and ``distribution``, TVM's ``version``, and its capabilities."""

    provider: str
    provider_version: str | None
    version: str
    path: str
    llvm: bool
    cuda_host: bool
    tir_module: str
    distribution: str | None = None

    def describe(self) -> str:
        """One phrase, e.g. ``apache-tvm 0.27.0`` or ``TVM 0.25.dev0 bundled with tilelang 0.1.15``."""
        if self.provider == TILELANG:
            return (f"TVM {self.version} bundled with {self.distribution or TILELANG} "
                    f"{self.provider_version or '?'}")
        return f"{self.provider} {self.provider_version or self.version}"


_INFO: list[TVMInfo] = []
_PACKAGE_FILE = f"{TILELANG}/__init__.py"


def tilelang_distribution() -> Distribution | None:
    """The installed TileLang in use (the first of :func:`tilelang_distributions`), or ``None``."""
    found = tilelang_distributions()
    return found[0] if found else None


def tilelang_distributions() -> tuple[Distribution, ...]:
    """Every installed distribution that ships the ``tilelang`` package, whatever its name, from
    metadata alone (never the import system, which would reach the start-up hook's finder): the
    one in use first (whose ``RECORD`` matches the installed files, else first on ``sys.path``).
    More than one is a broken installation (:func:`tilelang_overlap`)."""
    from importlib.metadata import distributions
    found: dict[str, Distribution] = {}
    parents = _package_parents()
    for folder in parents:
        for dist in distributions(path=[folder]):
            if _ships_tilelang(dist):
                found.setdefault(distribution_name(dist), dist)
    if parents and not found:  # an editable install (PEP 610) whose source folder holds the package
        for dist in distributions():
            if (source := editable_source(dist)) and any((p + os.sep).startswith(source + os.sep) for p in parents):
                found.setdefault(distribution_name(dist), dist)
    return tuple(sorted(found.values(), key=_in_use_rank) if len(found) > 1 else found.values())


def _package_parents() -> list[str]:
    """The folders that hold a ``tilelang`` package: the imported one's, those on ``sys.path``,
    and those the other finders on ``sys.meta_path`` (an editable install's) would import."""
    from importlib.machinery import PathFinder
    origins = [getattr(sys.modules.get(TILELANG), "__file__", None)]
    for finder in sys.meta_path:
        if type(finder).__name__ != "_Finder" and finder is not PathFinder and hasattr(finder, "find_spec"):
            with suppress(Exception):  # a finder that cannot answer knows no TileLang
                origins.append(getattr(finder.find_spec(TILELANG, None), "origin", None))
    folders = [os.path.dirname(os.path.dirname(o)) for o in origins
               if isinstance(o, str) and o.endswith("__init__.py")]
    folders += [p or os.curdir for p in sys.path if isinstance(p, str)]
    real = [os.path.realpath(f) for f in folders if os.path.isfile(os.path.join(f, _PACKAGE_FILE))]
    return list(dict.fromkeys(real))


def _ships_tilelang(dist: Distribution) -> bool:
    """Whether ``dist``'s ``top_level.txt`` names ``tilelang`` or, without one, its ``RECORD`` (searched
    whole, never parsed: TileLang's is over 0.5 MB) lists a file under ``tilelang/``."""
    try:
        top_level = dist.read_text("top_level.txt")
        if top_level is not None:
            return TILELANG in top_level.split()
        record = dist.read_text("RECORD") or ""
        return record.startswith("tilelang/") or "\ntilelang/" in record
    except Exception:  # unreadable metadata: not usable as installed
        return False


def direct_url(dist: Distribution) -> dict[str, Any]:
    """``dist``'s PEP 610 ``direct_url.json`` (empty without a readable one: installed from an index)."""
    import json
    try:
        doc = json.loads(dist.read_text("direct_url.json") or "null")
    except Exception:  # unreadable: as if installed from an index
        return {}
    return doc if isinstance(doc, dict) else {}


def file_url_path(url: object) -> str | None:
    """The local path a ``file:`` URL names, else ``None``."""
    from urllib.parse import unquote, urlsplit
    parts = urlsplit(str(url))
    return unquote(parts.path) if parts.scheme == "file" else None


def is_editable(doc: dict[str, Any]) -> bool:
    """Whether a :func:`direct_url` document says the install is editable."""
    dir_info = doc.get("dir_info")
    return isinstance(dir_info, dict) and dir_info.get("editable") is True


def editable_source(dist: Distribution) -> str | None:
    """The source folder of ``dist`` where it is an editable install, else ``None``."""
    doc = direct_url(dist)
    path = file_url_path(doc.get("url", "")) if is_editable(doc) else None
    return os.path.realpath(path) if path else None


def _in_use_rank(dist: Distribution) -> tuple[bool, int]:
    """Sort key: whose ``RECORD`` hash matches the installed ``tilelang/__init__.py``, then ``sys.path`` order."""
    import base64
    import hashlib
    owns = False
    with suppress(Exception):  # no such line or file, or a hash this Python lacks
        path = next(p for p in dist.files or () if p.as_posix() == _PACKAGE_FILE)
        with open(path.locate(), "rb") as stream:
            digest = hashlib.new(path.hash.mode, stream.read()).digest()  # type: ignore[union-attr]
        owns = base64.urlsafe_b64encode(digest).rstrip(b"=").decode() == path.hash.value  # type: ignore[union-attr]
    where = os.path.realpath(str(dist.locate_file("")))
    paths = [os.path.realpath(p or os.curdir) for p in sys.path]
    return not owns, paths.index(where) if where in paths else len(paths)


def distribution_name(dist: Distribution) -> str:
    """``dist``'s metadata ``Name``, PEP 503 normalized (``?`` where it cannot be read)."""
    try:
        name = str(dist.metadata["Name"] or "")
    except Exception:  # unreadable metadata
        name = ""
    return normalize_name(name) or "?"


def tilelang_overlap(found: tuple[Distribution, ...] | None = None) -> str | None:
    """The warning where more than one of ``found`` (default: :func:`tilelang_distributions`) ships TileLang."""
    found = tilelang_distributions() if found is None else found
    if len(found) < 2:
        return None
    named = [f"{distribution_name(d)} {d.version}" for d in found]
    others = " ".join(distribution_name(d) for d in found[1:])
    return (f"{len(found)} TileLang builds are installed ({', '.join(named)}); they ship the "
            "same `tilelang` package into the same folder, so one's files overwrote the "
            "other's, and uninstalling either breaks both. tilelang-hostcg uses "
            f"{named[0]}. Keep one: `pip uninstall {others}`, then "
            f"`{reinstall(distribution_name(found[0]), found[0].version)}`")


def import_tilelang(dist: Distribution) -> None:
    """Import ``dist``'s ``tilelang`` package with its folder first on ``sys.path`` meanwhile (a stray
    ``tilelang.py`` in the working directory is not it); a failure is a :class:`TVMNotFoundError`."""
    import importlib
    home, source = os.path.realpath(str(dist.locate_file(""))), editable_source(dist) or "\0"
    folder = next((p for p in _package_parents() if p == home or (p + os.sep).startswith(source + os.sep)), None)
    if folder is not None:
        sys.path.insert(0, folder)
    try:
        importlib.import_module(TILELANG)
    except Exception as exc:  # any failure of TileLang's import: name it, never crash
        raise TVMNotFoundError(
            f"TileLang ({distribution_name(dist)} {dist.version}) is installed (at {dist.locate_file('')}) but "
            f"cannot be imported ({type(exc).__name__}: {exc}), so its bundled TVM is not usable" + (
                f"; apache-tvm {foreign_tvm()} is installed beside it, which does not belong there (TileLang "
                "bundles its own TVM)" if foreign_tvm() else "")
            + f". Repair it with: {' && '.join(tilelang_repair(dist))} (nothing else changes)") from exc
    finally:
        if folder is not None:
            with suppress(ValueError):
                sys.path.remove(folder)


def _initializing(module: object) -> bool:
    """Whether ``module`` is still being imported (by this thread or another)."""
    return bool(getattr(getattr(module, "__spec__", None), "_initializing", False))


def import_tvm() -> ModuleType:
    """The ``tvm`` module in use, imported by the rule above, else :class:`TVMNotFoundError`."""
    loaded = sys.modules.get("tvm")
    if loaded is not None and not _initializing(loaded):
        return loaded
    # Another thread may be importing TileLang (which puts its TVM on ``sys.path``) or TVM: the
    # import statement waits for it to finish (in the importing thread it returns the module as is).
    tilelang = sys.modules.get(TILELANG)
    if tilelang is not None and _initializing(tilelang):
        with suppress(Exception):  # its failure is named below, where TVM cannot be imported
            __import__(TILELANG)
    if TILELANG not in sys.modules:
        dist = tilelang_distribution()
        if dist is not None:
            import_tilelang(dist)  # puts TileLang's bundled TVM on sys.path
    try:
        import tvm
    except Exception as exc:
        if isinstance(exc, ImportError) and getattr(exc, "name", None) == "tvm":
            raise TVMNotFoundError("No TVM is installed: tilelang-hostcg uses the TVM of the environment. "
                                   f"{_no_tvm_advice()} [{exc}]") from exc
        from .discovery._scan import unusable_entry_points

        culprits = "; ".join(unusable_entry_points())  # TVM's autoload reads every distribution's
        raise TVMNotFoundError(f"TVM is installed but cannot be imported ({type(exc).__name__}: {exc}): " + (
            f"`import tvm` reads the entry points of every installed distribution, and {culprits}"
            if culprits else f"repair it ({reinstall(APACHE_TVM, installed_version(APACHE_TVM))})")) from exc
    return tvm  # type: ignore[no-any-return]  # untyped package


def _no_tvm_advice() -> str:
    """What to do where no TVM can be imported: never install a TVM beside a TileLang."""
    from importlib.metadata import distributions
    if found := _package_parents():
        return (f"A `tilelang` package is importable (from {found[0]}) but no installed distribution ships it: "
                "import tilelang in the program first, and its bundled TVM is the TVM in use")
    if dist := next((d for d in distributions() if _ships_tilelang(d)), None):  # an error's path: all metadata
        return (f"TileLang's metadata ({distribution_name(dist)} {dist.version}) is installed but its "
                f"`tilelang` package is not: repair it with `{reinstall(distribution_name(dist), dist.version)}`")
    return ("Install one with `pip install tilelang-hostcg[tvm]` (apache-tvm) or `pip install "
            "tilelang-hostcg[tilelang]` (TileLang and its bundled TVM)")


def tvm_info() -> TVMInfo:
    """Which TVM is in use (importing it as :func:`import_tvm` does) and its capabilities."""
    tvm = import_tvm()
    path = getattr(tvm, "__file__", None) or ""
    if _INFO and _INFO[0].path == path:
        return _INFO[0]
    from importlib.util import find_spec
    tilelang = sys.modules.get(TILELANG)
    tl_file = getattr(tilelang, "__file__", None)
    provider, provider_version, distribution = APACHE_TVM, installed_version(APACHE_TVM), APACHE_TVM
    if tl_file and os.path.abspath(path).startswith(os.path.dirname(os.path.abspath(tl_file)) + os.sep):
        dist = tilelang_distribution()  # its version: TileLang's __version__ reads stock's name only
        version = dist.version if dist is not None else getattr(tilelang, "__version__", None)
        provider, provider_version = TILELANG, None if version is None else str(version)
        distribution = distribution_name(dist) if dist is not None else TILELANG
    llvm = bool(tvm.runtime.enabled("llvm"))
    kinds = set(tvm.target.Target.list_kinds())
    tir = "tvm.tirx" if "tvm.tirx" in sys.modules or find_spec("tvm.tirx") is not None else "tvm.tir"
    info = TVMInfo(provider, provider_version, str(getattr(tvm, "__version__", "?")), path, llvm,
                   "cuda_host" in kinds, tir, distribution)
    _INFO[:] = [info]
    return info


def describe_tvm() -> str:
    """:meth:`TVMInfo.describe` of the TVM in use, or what is wrong (``no TVM installed``)."""
    return str(tvm_document()["describe"])


def get_global_func(name: str) -> Any:
    """TVM's global function ``name``, or ``None`` when the TVM in use lacks it."""
    return import_tvm().get_global_func(name, allow_missing=True)


def tvm_document(*, import_it: bool = True) -> dict[str, Any]:
    """:class:`TVMInfo`'s fields and ``describe``, for the CLI; with ``import_it=False`` and no TVM
    imported yet, from installed metadata only."""
    if import_it or "tvm" in sys.modules:
        try:
            info = tvm_info()
        except TVMNotFoundError as exc:
            missing = "no TVM installed" if str(exc).startswith("No TVM is installed") else "TVM cannot be imported"
            return {"provider": None, "describe": missing, "error": str(exc)}
        return {**asdict(info), "describe": info.describe()}
    dist = tilelang_distribution()
    if dist is not None:
        name, version = distribution_name(dist), None
        with suppress(Exception):  # unreadable metadata
            version = str(dist.version)
        return {"provider": TILELANG, "distribution": name, "provider_version": version,
                "version": None, "describe": f"TVM bundled with {name} {version or '?'} (not imported)"}
    version = installed_version(APACHE_TVM)
    if version is None:
        return {"provider": None, "describe": "no TVM installed"}
    return {"provider": APACHE_TVM, "distribution": APACHE_TVM, "provider_version": version,
            "version": None, "describe": f"apache-tvm {version} (not imported)"}

