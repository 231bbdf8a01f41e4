"""The TVM in use, described: which TVM ``import tvm`` gives (its provider: apache-tvm, or the TVM a
TileLang build bundles), its version and place, its global functions, the document the command
line prints, and the installed versions the requirement checks judge. Finding and importing it is
:mod:`._finding`'s."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from ..core import APACHE_TVM, PROCESS, TILELANG, TVMInfo, TVMNotFoundError
from ._advice import installed_version
from ._finding import Found, find, has_module, import_tvm
from ._requirements import UNKNOWN_VERSION

if TYPE_CHECKING:
    from typing import Any


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
    known = PROCESS.tvm_info
    if known is not None and known.path == path:
        return known
    tilelang = _bundling_tilelang(os.path.realpath(path))
    source = tilelang if tilelang is not None else find("tvm")
    found = source.owner if source is not None else None  # its metadata parsed once
    provider = TILELANG if tilelang is not None else APACHE_TVM
    version = found.version if found is not None else None
    if not version and source is not None:
        version = source.version()  # a source tree's: the module's own __version__
    llvm = bool(tvm.runtime.enabled("llvm"))
    kinds = set(tvm.target.Target.list_kinds())
    tir = "tvm.tirx" if has_module("tvm.tirx") else "tvm.tir"
    info = TVMInfo(provider, version, str(getattr(tvm, "__version__", "?")), path, llvm, "cuda_host" in kinds, tir,
                   found.name if found is not None else None, source.tree if source is not None else None)
    PROCESS.tvm_info = info
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
