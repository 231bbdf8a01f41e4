"""Repair advice, safe to follow as written: :func:`reinstall` words every reinstall, never with
the dependencies (they may replace torch's CPU build and pull in dozens of packages). In a
TileLang environment, what does not belong there (``apache-tvm``: TileLang bundles its own TVM)
is uninstalled, and what was changed is put back alone.

A leaf module (only ``_names`` of ours); metadata through ``importlib.metadata``,
requirements through ``packaging``, imported when a message needs them.
"""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

from ._names import APACHE_TVM

if TYPE_CHECKING:
    from importlib.metadata import Distribution

__all__ = ["FFI", "foreign_tvm", "reinstall", "tilelang_repair", "unmet_requirement"]

FFI = "apache-tvm-ffi"
"""The runtime library TileLang pins to the release its bundled TVM was built with."""


def reinstall(name: str, version: object = None, *, editable: bool = False) -> str:
    """``pip install --force-reinstall --no-deps 'NAME==VERSION'`` (``name`` may be a requirement,
    a folder, file or URL), or ``pip install --no-deps -e 'FOLDER'``: quoted for any shell."""
    spec = f"{name}=={version}" if version else str(name)
    quoted = q if (q := shlex.quote(spec)).startswith("'") else f"'{spec}'"  # quoted alike everywhere
    return f"pip install --no-deps -e {quoted}" if editable else f"pip install --force-reinstall --no-deps {quoted}"


def _installed(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return str(version(name))
    except PackageNotFoundError:
        return None
    except Exception:  # unreadable metadata: nothing to advise on
        return None


def foreign_tvm() -> str | None:
    """The version of ``apache-tvm`` installed (beside TileLang it does not belong), or ``None``."""
    return _installed(APACHE_TVM)


def unmet_requirement(dist: Distribution, name: str) -> tuple[str, str | None] | None:
    """``(requirement, installed version)`` of ``dist``'s requirement on ``name`` when the
    installed version does not meet it (markers evaluated, no extra), else ``None``."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    installed = _installed(name)
    for line in dist.requires or ():
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if canonicalize_name(req.name) != name:
            continue
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        if installed is None or not req.specifier.contains(installed, prereleases=True):
            return str(req), installed
    return None


def tilelang_repair(dist: Distribution, *, importable: bool = False) -> list[str]:
    """The commands that repair the TileLang environment of ``dist`` (TileLang's distribution),
    in order: uninstall ``apache-tvm`` where it is installed; put back the ``apache-tvm-ffi``
    TileLang requires where another one is installed; where that is not the cause and
    TileLang cannot be imported (not ``importable``), reinstall TileLang alone."""
    steps = []
    if foreign_tvm() is not None:
        steps.append(f"pip uninstall -y {APACHE_TVM}")
    ffi = unmet_requirement(dist, FFI)
    if ffi is not None:
        steps.append(reinstall(ffi[0]))
    elif not importable:
        steps.append(reinstall(str(dist.metadata["Name"] or "tilelang"), dist.version))
    return steps
