"""The one place that finds and imports TVM, and says which TVM is in use.

The providers are ``apache-tvm`` (0.27) and the TVM TileLang bundles (importable only
after ``import tilelang``). The rule: a ``tvm`` already imported is the TVM in use; else,
where TileLang's distribution metadata is installed, its ``tilelang`` package is imported
first (a stray ``tilelang.py`` in the working directory is not TileLang), so the TVM is
TileLang's, as in any TileLang process; else ``import tvm``. Nothing here runs at import
of :mod:`tilelang_hostcg`.
"""

from __future__ import annotations

import sys
from contextlib import suppress
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from ._errors import HostCodegenError
from ._names import APACHE_TVM, TILELANG

if TYPE_CHECKING:
    from importlib.metadata import Distribution
    from types import ModuleType
    from typing import Any

__all__ = ["TVMInfo", "TVMNotFoundError", "describe_tvm", "get_global_func", "import_tvm", "tilelang_distribution",
           "tvm_document", "tvm_info"]


class TVMNotFoundError(HostCodegenError, ImportError):
    """No TVM can be imported: neither ``apache-tvm`` nor TileLang is installed."""


@dataclass(frozen=True, slots=True)
class TVMInfo:
    """Which TVM is in use: ``provider`` (``apache-tvm`` or ``tilelang``, the distribution
    that ships it) and its version, TVM's ``version``, and whether it has LLVM, the
    ``cuda_host`` kind and ``tvm.tirx`` (``tir_module``, else ``tvm.tir``)."""

    provider: str
    provider_version: str | None
    version: str
    path: str
    llvm: bool
    cuda_host: bool
    tir_module: str

    def describe(self) -> str:
        """One phrase, e.g. ``apache-tvm 0.27.0`` or ``TVM 0.25.dev0 bundled with tilelang 0.1.15``."""
        if self.provider == TILELANG:
            return f"TVM {self.version} bundled with tilelang {self.provider_version or '?'}"
        return f"{self.provider} {self.provider_version or self.version}"


_INFO: list[TVMInfo] = []


def tilelang_distribution() -> Distribution | None:
    """TileLang's installed distribution as ``importlib.metadata`` sees it (the first copy
    on ``sys.path``), or ``None``: what is importable under the name does not count.
    Metadata only, never the import system: a look at ``tilelang`` through the import
    system would reach the start-up hook's finder.
    """
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        return distribution(TILELANG)
    except PackageNotFoundError:
        return None
    except Exception:  # unreadable metadata: TileLang is not usable as installed
        return None


def _tilelang_installed() -> bool:
    """Whether TileLang's distribution metadata is installed (see the module docstring)."""
    return tilelang_distribution() is not None


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
                raise TVMNotFoundError(
                    f"TileLang {dist.version} is installed (at {dist.locate_file('')}) but "
                    f"cannot be imported ({type(exc).__name__}: {exc}), so its bundled TVM is "
                    "not usable; repair TileLang (pip install --force-reinstall "
                    f"tilelang=={dist.version}) or use apache-tvm in an environment without "
                    "TileLang") from exc
    try:
        import tvm
    except Exception as exc:
        if isinstance(exc, ImportError) and getattr(exc, "name", None) == "tvm":
            raise TVMNotFoundError(
                "No TVM is installed: tilelang-hostcg uses the TVM of the environment. Install "
                "one with `pip install tilelang-hostcg[tvm]` (apache-tvm 0.27) or `pip install "
                f"tilelang-hostcg[tilelang]` (TileLang and its bundled TVM) [{exc}]") from exc
        raise TVMNotFoundError(
            f"TVM is installed but cannot be imported ({type(exc).__name__}: {exc}); repair it "
            "(pip install --force-reinstall apache-tvm, or tilelang where TileLang provides "
            "TVM)") from exc
    return tvm  # type: ignore[no-any-return]  # untyped package


def _provider(tvm: Any) -> tuple[str, str | None]:
    path = getattr(tvm, "__file__", None) or ""
    tilelang = sys.modules.get("tilelang")
    tl_file = getattr(tilelang, "__file__", None) if tilelang is not None else None
    if tl_file:
        import os

        root = os.path.dirname(os.path.abspath(tl_file))
        if os.path.abspath(path).startswith(root + os.sep):
            return TILELANG, str(getattr(tilelang, "__version__", None) or _dist_version(TILELANG))
    return APACHE_TVM, _dist_version(APACHE_TVM)


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

    provider, provider_version = _provider(tvm)
    llvm = bool(tvm.runtime.enabled("llvm"))
    kinds = set(tvm.target.Target.list_kinds())
    tir = "tvm.tirx" if "tvm.tirx" in sys.modules or find_spec("tvm.tirx") is not None else "tvm.tir"
    info = TVMInfo(provider, provider_version, str(getattr(tvm, "__version__", "?")),
                   getattr(tvm, "__file__", None) or "", llvm, "cuda_host" in kinds, tir)
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
    if _tilelang_installed():
        version = _dist_version(TILELANG)
        return {"provider": TILELANG, "provider_version": version, "version": None,
                "describe": f"TVM bundled with tilelang {version or '?'} (not imported)"}
    version = _dist_version(APACHE_TVM)
    if version is None:
        return {"provider": None, "describe": "no TVM installed"}
    return {"provider": APACHE_TVM, "provider_version": version, "version": None,
            "describe": f"apache-tvm {version} (not imported)"}
