"""Which repair fits how a thing was installed (read here; worded by :mod:`..diagnosis`): a
reinstall as the distribution was installed, the first-party plugins from the checkout, and in a
TileLang environment ``apache-tvm`` uninstalled and what was changed put back alone."""

from __future__ import annotations

from contextlib import suppress
from typing import TYPE_CHECKING

from ..core import APACHE_TVM
from ..diagnosis import first_party_install, reinstall, uninstall
from ._direct_url import file_url_path, pip_source

if TYPE_CHECKING:
    from importlib.metadata import Distribution

FFI = "apache-tvm-ffi"  # TileLang pins it to the release its bundled TVM was built with


def reinstall_as_installed(name: str, version: object, doc: object) -> str:
    """The reinstall of ``name`` as ``doc`` (its PEP 610 ``direct_url.json``) says it was installed: from
    its folder, file, URL or VCS (an editable install stays editable), else ``NAME==VERSION`` from an
    index."""
    source = pip_source(doc)
    if source is None:
        return reinstall(name, version)
    return reinstall(source.spec, editable=source.editable)


def first_party_install_as_installed(distribution: str, core_doc: object) -> str:
    """How to install the first-party plugin ``distribution``, which ships as the folder
    ``plugins/<distribution>`` of tilelang-hostcg's repository: from the checkout tilelang-hostcg was
    installed from, where ``core_doc`` (tilelang-hostcg's ``direct_url.json``) names one that holds it,
    else from the root of a checkout."""
    import os
    doc = core_doc if isinstance(core_doc, dict) else {}
    checkout = file_url_path(doc.get("url", ""))
    folder = os.path.join(checkout, "plugins", distribution) if checkout else None
    held = folder is not None and os.path.isfile(os.path.join(folder, "pyproject.toml"))
    return first_party_install(distribution, folder if held else None)


def installed_version(name: str) -> str | None:
    """The installed version of distribution ``name``; ``None`` where not installed or unreadable."""
    from importlib.metadata import version
    try:
        return str(version(name))
    except Exception:  # PackageNotFoundError, or metadata that cannot be read
        return None


def foreign_tvm() -> str | None:
    """The version of ``apache-tvm`` installed (it does not belong beside TileLang), or ``None``."""
    return installed_version(APACHE_TVM)


def unmet_requirement(dist: Distribution, name: str) -> tuple[str, str | None] | None:
    """``(requirement, installed version)`` of ``dist``'s requirement on ``name`` that is unmet, else ``None``."""
    from packaging.requirements import InvalidRequirement

    from ..core import normalize_name
    from ._requirements import applicable, meets
    installed = installed_version(name)
    try:
        lines = dist.requires or ()
    except Exception:  # metadata that cannot be read says nothing
        lines = []
    for line in lines:
        with suppress(InvalidRequirement):  # a line that cannot be parsed says nothing
            req = applicable(line)
            if req is not None and normalize_name(req.name) == name and not (installed and meets(req, installed)):
                return str(req), installed
    return None


def tilelang_repair(dist: Distribution, *, importable: bool = False, named: tuple[str, str | None] = ("", None),
                    editable: bool = False) -> list[str]:
    """The commands that repair ``dist``'s (TileLang's) environment: uninstall ``apache-tvm``; put
    back the ``apache-tvm-ffi`` TileLang requires; else, when TileLang cannot be imported, reinstall it
    (``named``: its name and version, as :mod:`._metadata` reads them; ``editable``: its source folder
    and ``None``, installed again in place)."""
    steps = [uninstall(APACHE_TVM)] if foreign_tvm() is not None else []
    ffi = unmet_requirement(dist, FFI)
    if ffi is not None:
        steps.append(reinstall(ffi[0]))
    elif not importable:
        steps.append(reinstall(named[0] or "tilelang", named[1], editable=editable))
    return steps

