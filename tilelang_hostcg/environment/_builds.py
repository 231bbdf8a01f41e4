"""TileLang installed more than once: every distribution that ships the ``tilelang`` package where
one is importable (the one in use first), and the warning that says which is used and how to keep
one, worded to fit how each was installed."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from ..core._names import TILELANG
from ._advice import reinstall
from ._finding import Found, find
from ._metadata import Owner, folder_of, owner, shipping

if TYPE_CHECKING:
    from importlib.metadata import Distribution


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
