"""Whether a package named ``tilelang`` is TileLang: it holds a module of one of TileLang's layouts.
Cheap, imports nothing (it runs at ``import tvm`` where a ``tilelang`` is imported)."""

from __future__ import annotations

import sys
from importlib.machinery import PathFinder

# The modules of TileLang's layouts' first points: a ``tilelang`` package holding neither (a user's own
# package of that name, a stub) is not TileLang, and is left alone everywhere.
TILELANG_LAYOUT_MODULES = ("tilelang.backend.module", "tilelang.engine.lower")


def holds_tilelang_layout(folders: list[str]) -> bool:
    """Whether the ``tilelang`` package of ``folders`` (its ``__path__``) holds a module of one of
    TileLang's layouts (imported, or found there by the import system's path finder; nothing imported)."""
    for name in TILELANG_LAYOUT_MODULES:
        if name in sys.modules:
            return True
        sub, _, _ = name.rpartition(".")
        try:
            package = PathFinder.find_spec(sub, folders)
            inner = package.submodule_search_locations if package is not None else None
            if inner and PathFinder.find_spec(name, list(inner)) is not None:
                return True
        except Exception:  # a broken folder entry: not found there
            continue
    return False
