"""TileLang installed more than once: every distribution that ships the ``tilelang`` package where
one is importable (the one in use first), and the warning that says which is used and how to keep
one (where the files match no build, the one installed last), worded to fit how each was installed:
``pip`` for what lists its files, by hand for metadata that lists none."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from ..core import TILELANG
from ..diagnosis import reinstall_by_hand, remove_by_hand, uninstall
from ._advice import reinstall_as_installed
from ._finding import Found, find
from ._metadata import Owner, direct_url, folder_of, owner, shipping

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


def tilelang_overlap(in_use: Found | None = None) -> str | None:
    """The warning where more than one installed distribution ships TileLang (``in_use``: the TileLang
    ``import tilelang`` gives, found where not given), and the steps that keep one build, each safe to
    follow as written: pip for what lists its files, by hand for metadata that lists none."""
    in_use = find(TILELANG) if in_use is None else in_use
    found = tilelang_builds(in_use)
    if len(found) < 2:
        return None
    infos = [owner(d) for d in found]
    named = ", ".join(i.describe() for i in infos)
    one_folder = len({os.path.dirname(os.path.realpath(i.folder)) for i in infos}) == 1
    undecided = one_folder and in_use is not None and in_use.undecided()
    keep = in_use.kept() if in_use is not None and undecided else None
    kept = next((n for n, d in enumerate(found) if d is keep), 0)  # else the one in use, first
    others = [n for n in range(len(found)) if n != kept]
    listing = [infos[n] for n in others if infos[n].record]  # their files were written into the folder
    ghosts = [infos[n] for n in others if not infos[n].record]
    what = [_shared_text(undecided)] if one_folder and listing else []
    if not one_folder:
        what.append(f"they sit in different folders; the `tilelang` package of {infos[0].describe()} is the one "
                    "imported, the other is shadowed")
    if ghosts:
        what.append(f"{', '.join(g.describe() for g in ghosts)}: metadata left behind, with no RECORD")
    uses = (f"{infos[kept].describe()} was installed last, so most of the files are its own" if undecided
            else f"tilelang-hostcg uses {infos[kept].describe()}")
    steps = "; ".join(_uninstall_step(infos[n]) for n in others)
    then = f", then {_reinstall_step(found[kept], infos[kept])}" if one_folder and listing else ""
    return (f"{len(found)} TileLang builds are installed ({named}); {'; '.join(what)}. {uses}. Keep it: "
            f"{steps}{then}")


def _shared_text(undecided: bool) -> str:
    """What builds installed over each other in one folder did."""
    if undecided:
        return ("they were installed over each other in the same folder, and the files of the `tilelang` package "
                "there match neither build (a file was changed since), so which build is in use cannot be told")
    return ("they ship the same `tilelang` package into the same folder, so one's files overwrote the other's, "
            "and uninstalling either takes the shared files away from both")
