"""Activation without code: once ``import tilelang`` has executed, :func:`activate` calls
:func:`tilelang_hostcg.tilelang.install` where a third-party plugin the controls do not skip is
advertised, for the ``tilelang`` module just executed (whatever distribution ships it, or none; a
stray module of that name with no integration point is left alone). A failure is one warning;
TileLang stays stock."""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

from _tilelang_hostcg_switch import ENV_AUTO_INSTALL

from ..core import at_import

if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType

    from _tilelang_hostcg_hook import _Finder

@at_import()
def find_spec(finder: _Finder, name: str, path: Sequence[str] | None,
              target: ModuleType | None) -> ModuleSpec | None:
    """TileLang's spec as the finders after ``finder`` find it, with a loader that runs
    :func:`activate` once TileLang's module has executed (a look is not an import)."""
    from ..discovery import auto_install_problem, warn_control_problems
    if (problem := auto_install_problem(os.environ.get(ENV_AUTO_INSTALL))) is not None:
        warn_control_problems([problem])
    meta_path = sys.meta_path
    for other in meta_path[meta_path.index(finder) + 1:] if finder in meta_path else ():
        find = getattr(other, "find_spec", None)
        if find is None:
            return None  # a legacy finder: leave the search to the import system
        spec: ModuleSpec | None = find(name, path, target)
        if spec is None:
            continue
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec  # a namespace package, or a loader we do not know: not TileLang
        spec.loader = _Loader(loader, spec, finder)  # type: ignore[assignment]
        return spec
    return None


class _Loader:
    """TileLang's loader; once TileLang's module has executed, the finder leaves
    ``sys.meta_path`` and :func:`activate` runs (once: only if the finder was still there)."""

    __slots__ = ("finder", "loader", "spec")

    def __init__(self, loader: object, spec: ModuleSpec, finder: _Finder) -> None:
        self.loader = loader
        self.spec = spec
        self.finder = finder

    def __getattr__(self, name: str) -> object:
        return getattr(self.loader, name)

    def exec_module(self, module: ModuleType) -> None:
        try:
            self.loader.exec_module(module)  # type: ignore[attr-defined]
        finally:
            # TileLang's module and spec get TileLang's own loader back.
            current: object = self.spec.loader
            if current is self:
                self.spec.loader = self.loader  # type: ignore[assignment]
            if module.__dict__.get("__loader__") is self:
                module.__loader__ = self.loader
        if self.finder.leave():
            activate()


@at_import()
def activate() -> None:
    """Install the TileLang integration where :func:`~tilelang_hostcg.clients.routing` says so, for
    the ``tilelang`` module just executed; never raises (but ``KeyboardInterrupt`` and ``SystemExit``)."""
    from . import CLIENT
    try:
        if CLIENT.native() is not None:  # TileLang calls the registry itself: nothing to patch
            return
        from ..clients import routing

        # install() raises what blocks it, naming it; a stray `tilelang` with no integration point
        # that no distribution ships is not TileLang: left alone.
        answer = routing(CLIENT, activating=True)
        if answer.pending or (answer.blocker is not None and _is_tilelang()):
            CLIENT.install()
    except Exception as exc:
        CLIENT.activation_failed(exc)


def _is_tilelang() -> bool:
    """Whether the imported ``tilelang`` is TileLang: it has a layout's first point, or an installed
    distribution ships it."""
    from ..core import TILELANG
    from ..environment import find
    from ._points import has_points
    found = find(TILELANG)
    return found is not None and (bool(found.owners) or has_points())
