"""The one place that finds and imports TVM, and says which TVM is in use.

The providers are ``apache-tvm`` (0.27) and the TVM TileLang bundles (importable only
after ``import tilelang``). The rule: a ``tvm`` already imported is the TVM in use; else,
where TileLang's distribution metadata is installed, its ``tilelang`` package is imported
first (a stray ``tilelang.py`` in the working directory is not TileLang), so the TVM is
TileLang's, as in any TileLang process; else ``import tvm``. Nothing here runs at import
of :mod:`tilelang_hostcg`.

TileLang is whichever of its published builds is installed (:data:`TILELANG_BUILDS`:
stock ``tilelang``, ``tilelang-paddle``, ...), found by :func:`tilelang_distribution`
from metadata alone: a build counts when its ``RECORD`` lists files of the ``tilelang``
package (or, without a ``RECORD``, its ``top_level.txt`` names it; an editable install
counts too). Messages name that distribution.
"""

from __future__ import annotations

import re
import sys
from contextlib import suppress
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from ._errors import HostCodegenError
from ._names import APACHE_TVM, TILELANG, TILELANG_BUILDS

if TYPE_CHECKING:
    from importlib.metadata import Distribution
    from types import ModuleType
    from typing import Any

__all__ = ["TVMInfo", "TVMNotFoundError", "describe_tvm", "distribution_name", "get_global_func", "import_tvm",
           "tilelang_distribution", "tilelang_distributions", "tilelang_overlap", "tvm_document", "tvm_info"]


class TVMNotFoundError(HostCodegenError, ImportError):
    """No TVM can be imported: neither ``apache-tvm`` nor TileLang is installed."""


@dataclass(frozen=True, slots=True)
class TVMInfo:
    """Which TVM is in use: ``provider`` (``apache-tvm``, or ``tilelang`` for the TVM a
    TileLang build bundles), ``provider_version`` and ``distribution`` (the installed
    distribution that ships it: ``apache-tvm``, ``tilelang``, ``tilelang-paddle``, ...),
    TVM's ``version``, and whether it has LLVM, the ``cuda_host`` kind and ``tvm.tirx``
    (``tir_module``, else ``tvm.tir``)."""

    provider: str
    provider_version: str | None
    version: str
    path: str
    llvm: bool
    cuda_host: bool
    tir_module: str
    distribution: str | None = None

    def describe(self) -> str:
        """One phrase, e.g. ``apache-tvm 0.27.0`` or ``TVM 0.25.dev0 bundled with tilelang 0.1.15``
        (``... bundled with tilelang-paddle 0.1.13`` for PaddlePaddle's build)."""
        if self.provider == TILELANG:
            return (f"TVM {self.version} bundled with {self.distribution or TILELANG} "
                    f"{self.provider_version or '?'}")
        return f"{self.provider} {self.provider_version or self.version}"


_INFO: list[TVMInfo] = []


def tilelang_distribution() -> Distribution | None:
    """The installed TileLang build in use (the first of :func:`tilelang_distributions`),
    or ``None``: what is importable under the name ``tilelang`` does not count. Metadata
    only, never the import system: a look at ``tilelang`` through the import system would
    reach the start-up hook's finder.
    """
    found = tilelang_distributions()
    return found[0] if found else None


def tilelang_distributions() -> tuple[Distribution, ...]:
    """Every installed TileLang build: each distribution of :data:`TILELANG_BUILDS` (its
    first copy on ``sys.path``, as ``importlib.metadata`` finds it) whose metadata says it
    ships the ``tilelang`` package. More than one is a broken installation (they share the
    ``tilelang/`` folder, see :func:`tilelang_overlap`); the one in use comes first: the
    one whose ``RECORD`` matches the installed ``tilelang/__init__.py``, else the first on
    ``sys.path``, else the first of :data:`TILELANG_BUILDS`."""
    from importlib.metadata import distribution

    found = []
    for name in TILELANG_BUILDS:
        try:
            dist = distribution(name)
        except Exception:  # PackageNotFoundError, or unreadable metadata: not usable as installed
            continue
        if _ships_tilelang(dist):
            found.append(dist)
    if len(found) > 1:
        found.sort(key=_in_use_rank)  # stable: TILELANG_BUILDS' order breaks ties
    return tuple(found)


_PACKAGE_FILE = f"{TILELANG}/__init__.py"


def _ships_tilelang(dist: Distribution) -> bool:
    """Whether ``dist``'s metadata says it ships the ``tilelang`` package: a ``RECORD`` line
    under ``tilelang/`` (or, for an editable install, its PEP 610 ``direct_url.json``);
    without a ``RECORD``, ``top_level.txt``; metadata listing no files at all counts."""
    try:
        line = _record_line(dist, f"{TILELANG}/")
        if line is not None:
            return bool(line) or _editable(dist)
        top_level = dist.read_text("top_level.txt")
        return top_level is None or TILELANG in top_level.split()
    except Exception:  # unreadable metadata: not usable as installed
        return False


def _record_line(dist: Distribution, prefix: str) -> str | None:
    """The first line of ``dist``'s ``RECORD`` that starts with ``prefix``, ``""`` when none
    does, ``None`` when it has no ``RECORD``. Read line by line where the metadata is a
    folder: TileLang's ``RECORD`` is over a megabyte, and its package's lines come first."""
    folder = getattr(dist, "_path", None)  # PathDistribution's metadata folder
    if folder is not None and hasattr(folder, "joinpath"):
        try:
            with folder.joinpath("RECORD").open(encoding="utf-8") as stream:
                return next((line for line in stream if line.startswith(prefix)), "")
        except FileNotFoundError:
            return None
    text = dist.read_text("RECORD")
    if text is None:
        return None
    return next((line for line in text.splitlines() if line.startswith(prefix)), "")


def _editable(dist: Distribution) -> bool:
    """Whether ``dist`` is an editable install (PEP 610), whose files its ``RECORD`` omits."""
    import json

    doc = json.loads(dist.read_text("direct_url.json") or "{}")
    info = doc.get("dir_info") if isinstance(doc, dict) else None
    return isinstance(info, dict) and info.get("editable") is True


def _in_use_rank(dist: Distribution) -> tuple[bool, int]:
    """Sort key of the builds: whose files are installed first, then ``sys.path`` order."""
    import os

    where = os.path.realpath(str(dist.locate_file("")))
    paths = [os.path.realpath(p or os.curdir) for p in sys.path]
    return not _owns_package_file(dist), paths.index(where) if where in paths else len(paths)


def _owns_package_file(dist: Distribution) -> bool:
    """Whether the installed ``tilelang/__init__.py`` is ``dist``'s (its ``RECORD`` hash)."""
    import base64
    import hashlib
    from pathlib import Path

    try:
        line = _record_line(dist, _PACKAGE_FILE + ",")
        if not line:
            return False
        algorithm, _, digest = line.rstrip("\r\n").split(",")[1].partition("=")
        data = Path(str(dist.locate_file(_PACKAGE_FILE))).read_bytes()
        found = base64.urlsafe_b64encode(hashlib.new(algorithm, data).digest()).rstrip(b"=")
        return found.decode() == digest
    except Exception:  # no such line or file, or an algorithm this Python lacks
        return False


def distribution_name(dist: Distribution) -> str:
    """``dist``'s name as messages give it (its metadata's ``Name``, PEP 503 normalized)."""
    try:
        name = str(dist.metadata["Name"] or "")
    except Exception:  # unreadable metadata
        name = ""
    return re.sub(r"[-_.]+", "-", name).lower() or "?"


def tilelang_overlap() -> str | None:
    """What is wrong when more than one TileLang build is installed (a warning's text, the
    same wherever it is given), else ``None``."""
    found = tilelang_distributions()
    if len(found) < 2:
        return None
    named = [f"{distribution_name(d)} {d.version}" for d in found]
    used = distribution_name(found[0])
    others = " ".join(distribution_name(d) for d in found[1:])
    from ._advice import reinstall  # on a problem only: not at activation

    return (f"{len(found)} TileLang builds are installed ({', '.join(named)}); they ship the "
            "same `tilelang` package into the same folder, so one's files overwrote the "
            "other's, and uninstalling either breaks both. tilelang-hostcg uses "
            f"{named[0]}. Keep one: `pip uninstall {others}`, then "
            f"`{reinstall(used, found[0].version)}`")


def _import_installed_tilelang(dist: Distribution) -> None:
    """Import the ``tilelang`` package of ``dist``, not whatever comes first on ``sys.path``
    under that name (a stray ``tilelang.py`` or folder in the working directory).

    Where the package is not found in the distribution's folder (an editable install
    served by an import hook), the ordinary ``import tilelang`` runs.
    """
    import importlib
    import importlib.util
    from importlib.machinery import PathFinder

    spec = None
    try:
        spec = PathFinder.find_spec(TILELANG, [str(dist.locate_file(""))])
    except (ImportError, ValueError, OSError):
        spec = None
    if spec is None or spec.loader is None or spec.origin is None:
        importlib.import_module(TILELANG)
        return
    found = importlib.util.find_spec(TILELANG)
    if found is not None and found.origin == spec.origin:
        importlib.import_module(TILELANG)
        return
    module = importlib.util.module_from_spec(spec)
    sys.modules[TILELANG] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(TILELANG, None)
        raise


def _initializing(module: object) -> bool:
    """Whether ``module`` is still being imported (by this thread or another)."""
    return bool(getattr(getattr(module, "__spec__", None), "_initializing", False))


def import_tvm() -> ModuleType:
    """The ``tvm`` module in use, imported by the rule above; raises :class:`TVMNotFoundError`
    (an ``ImportError``) naming what failed and what to install or repair."""
    loaded = sys.modules.get("tvm")
    if loaded is not None and not _initializing(loaded):
        return loaded
    # Another thread may be importing TileLang (which puts its TVM on ``sys.path``) or TVM
    # itself: the import statement waits for that import to finish (in the importing thread
    # itself it returns the module as it is), where ``sys.modules`` holds half of it.
    tilelang = sys.modules.get(TILELANG)
    if tilelang is not None and _initializing(tilelang):
        with suppress(Exception):  # its failure is named below, where TVM cannot be imported
            __import__(TILELANG)
    if TILELANG not in sys.modules:
        dist = tilelang_distribution()
        if dist is not None:
            try:
                _import_installed_tilelang(dist)  # puts TileLang's bundled TVM on sys.path
            except Exception as exc:  # any failure of TileLang's import: name it, never crash
                from ._advice import foreign_tvm, tilelang_repair

                raise TVMNotFoundError(
                    f"TileLang ({distribution_name(dist)} {dist.version}) is installed (at "
                    f"{dist.locate_file('')}) but "
                    f"cannot be imported ({type(exc).__name__}: {exc}), so its bundled TVM is "
                    "not usable" + (f"; apache-tvm {foreign_tvm()} is installed beside it, "
                                    "which does not belong there (TileLang bundles its own TVM)"
                                    if foreign_tvm() else "")
                    + f". Repair it with: {' && '.join(tilelang_repair(dist))} (nothing else "
                    "changes); or use apache-tvm in an environment without TileLang") from exc
    try:
        import tvm
    except Exception as exc:
        if isinstance(exc, ImportError) and getattr(exc, "name", None) == "tvm":
            raise TVMNotFoundError(
                "No TVM is installed: tilelang-hostcg uses the TVM of the environment. Install "
                "one with `pip install tilelang-hostcg[tvm]` (apache-tvm 0.27) or `pip install "
                f"tilelang-hostcg[tilelang]` (TileLang and its bundled TVM) [{exc}]") from exc
        from ._advice import reinstall
        from .discovery._scan import unusable_entry_points

        culprits = "; ".join(unusable_entry_points())  # TVM's autoload reads every distribution's
        raise TVMNotFoundError(f"TVM is installed but cannot be imported ({type(exc).__name__}: {exc}): " + (
            f"`import tvm` reads the entry points of every installed distribution, and {culprits}"
            if culprits else f"repair it ({reinstall(APACHE_TVM, _dist_version(APACHE_TVM))})")) from exc
    return tvm  # type: ignore[no-any-return]  # untyped package


def _provider(tvm: Any) -> tuple[str, str | None, str]:
    """The provider of ``tvm``, its version and the distribution that ships it."""
    path = getattr(tvm, "__file__", None) or ""
    tilelang = sys.modules.get("tilelang")
    tl_file = getattr(tilelang, "__file__", None) if tilelang is not None else None
    if tl_file:
        import os

        root = os.path.dirname(os.path.abspath(tl_file))
        if os.path.abspath(path).startswith(root + os.sep):
            dist = tilelang_distribution()
            version = getattr(tilelang, "__version__", None) or (dist.version if dist else None)
            return (TILELANG, None if version is None else str(version),
                    distribution_name(dist) if dist is not None else TILELANG)
    return APACHE_TVM, _dist_version(APACHE_TVM), APACHE_TVM


def _dist_version(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    with suppress(PackageNotFoundError):
        return str(version(name))
    return None


def tvm_info() -> TVMInfo:
    """Which TVM is in use (importing it as :func:`import_tvm` does) and its capabilities."""
    tvm = import_tvm()
    if _INFO and _INFO[0].path == (getattr(tvm, "__file__", None) or ""):
        return _INFO[0]
    from importlib.util import find_spec

    provider, provider_version, distribution = _provider(tvm)
    llvm = bool(tvm.runtime.enabled("llvm"))
    kinds = set(tvm.target.Target.list_kinds())
    tir = "tvm.tirx" if "tvm.tirx" in sys.modules or find_spec("tvm.tirx") is not None else "tvm.tir"
    info = TVMInfo(provider, provider_version, str(getattr(tvm, "__version__", "?")),
                   getattr(tvm, "__file__", None) or "", llvm, "cuda_host" in kinds, tir, distribution)
    _INFO[:] = [info]
    return info


def describe_tvm() -> str:
    """:meth:`TVMInfo.describe` of the TVM in use, or what is wrong (``no TVM installed``)."""
    try:
        return tvm_info().describe()
    except TVMNotFoundError as exc:
        return _describe_missing(exc)


def _describe_missing(exc: TVMNotFoundError) -> str:
    return "no TVM installed" if str(exc).startswith("No TVM is installed") else "TVM cannot be imported"


def get_global_func(name: str) -> Any:
    """TVM's global function ``name``, or ``None`` when the TVM in use lacks it."""
    return import_tvm().get_global_func(name, allow_missing=True)


def tvm_document(*, import_it: bool = True) -> dict[str, Any]:
    """Which TVM is in use, for the CLI's documents (:class:`TVMInfo`'s fields and ``describe``);
    with ``import_it=False`` and no TVM imported yet, from installed metadata only."""
    if import_it or "tvm" in sys.modules:
        try:
            info = tvm_info()
        except TVMNotFoundError as exc:
            return {"provider": None, "describe": _describe_missing(exc), "error": str(exc)}
        return {**asdict(info), "describe": info.describe()}
    dist = tilelang_distribution()
    if dist is not None:
        name, version = distribution_name(dist), _version_of(dist)
        return {"provider": TILELANG, "distribution": name, "provider_version": version,
                "version": None, "describe": f"TVM bundled with {name} {version or '?'} (not imported)"}
    version = _dist_version(APACHE_TVM)
    if version is None:
        return {"provider": None, "describe": "no TVM installed"}
    return {"provider": APACHE_TVM, "distribution": APACHE_TVM, "provider_version": version,
            "version": None, "describe": f"apache-tvm {version} (not imported)"}


def _version_of(dist: Distribution) -> str | None:
    try:
        return str(dist.version)
    except Exception:  # unreadable metadata
        return None
