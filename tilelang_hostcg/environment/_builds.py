"""TileLang installed more than once: every distribution that ships the ``tilelang`` package where
one is importable (the one in use first), and the finding that says which is used and how to keep
one (where the files match no build, the one installed last), its steps fit to how each was installed:
``pip`` for what lists its files, by hand for metadata that lists none (:mod:`..diagnosis` words it)."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from ..core import TILELANG, TileLangBuildsPluginWarning
from ..diagnosis import reinstall_by_hand, remove_by_hand, uninstall
from ._advice import reinstall_as_installed
from ._finding import Found, find
from ._metadata import Owner, direct_url, folder_of, owner, shipping

if TYPE_CHECKING:
    from importlib.metadata import Distribution

    from ..diagnosis import Finding


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


def _uninstall_step(info: Owner) -> str:
    """How to remove a build other than the one kept: ``pip uninstall`` where it lists its files, else
    its metadata folder, by hand (pip cannot uninstall what lists no files)."""
    if info.record:
        return f"`{uninstall(info.name)}`"
    return remove_by_hand(info.folder)


def _reinstall_step(dist: Distribution, info: Owner) -> str:
    """The reinstall of the kept build, as it was installed; for one that lists no files, what to do,
    since pip cannot reinstall it as written."""
    if not info.record:
        return reinstall_by_hand(info.describe())
    return f"`{reinstall_as_installed(info.name, info.version, direct_url(dist))}`"


def tilelang_overlap(in_use: Found | None = None) -> Finding | None:
    """The finding where more than one installed distribution ships TileLang (``in_use``: the TileLang
    ``import tilelang`` gives, found where not given): the builds, the one kept, how they overlap, and the
    steps that keep one build, each safe to follow as written: pip for what lists its files, by hand for
    metadata that lists none."""
    in_use = find(TILELANG) if in_use is None else in_use
    found = tilelang_builds(in_use)
    if len(found) < 2:
        return None
    infos = [owner(d) for d in found]
    one_folder = len({os.path.dirname(os.path.realpath(i.folder)) for i in infos}) == 1
    undecided = one_folder and in_use is not None and in_use.undecided()
    keep = in_use.kept() if in_use is not None and undecided else None
    kept = next((n for n, d in enumerate(found) if d is keep), 0)  # else the one in use, first
    others = [n for n in range(len(found)) if n != kept]
    listing = [infos[n] for n in others if infos[n].record]  # their files were written into the folder
    ghosts = [infos[n] for n in others if not infos[n].record]
    overwritten = one_folder and bool(listing)
    from ..diagnosis import Finding  # a finding: only where builds overlap
    return Finding.of(
        TileLangBuildsPluginWarning, "environment", wording=("steps", "reinstall"),
        count=str(len(found)), builds=", ".join(i.describe() for i in infos), in_use=infos[0].describe(),
        kept=infos[kept].describe(), folders="one" if one_folder else "several",
        undecided="yes" if undecided else None, overwritten="yes" if overwritten else None,
        ghosts=", ".join(g.describe() for g in ghosts) or None,
        steps="; ".join(_uninstall_step(infos[n]) for n in others),
        reinstall=_reinstall_step(found[kept], infos[kept]) if overwritten else None)
