"""Activation without code: TileLang uses the registry once a third-party plugin is installed.

The start-up hook's finder (``_tilelang_hostcg_hook``) calls :func:`find_spec` here when
``tilelang`` is looked up; only an import activates: once TileLang's module has
executed, the finder leaves ``sys.meta_path`` and :func:`activate` runs, once per
process. :func:`activate` calls :func:`tilelang_hostcg.tilelang.install` only where a
distribution other than ``tilelang-hostcg`` advertises our entry points that the
controls (``TILELANG_HOSTCG_DISABLE_PLUGIN_AUTOLOAD=1``, ``TILELANG_HOSTCG_ONLY``,
``TILELANG_HOSTCG_DISABLE``) do not all skip, as resolution will see them, and
TileLang's distribution is installed (an importable ``tilelang`` that is not TileLang
is left alone). Otherwise TileLang is not touched at all. A failure (an unsupported
TileLang, a broken environment) is one :class:`~tilelang_hostcg.PluginWarning` naming
the cause and the off switch, and TileLang stays stock: ``import tilelang`` never fails
because of us.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import TYPE_CHECKING

from _tilelang_hostcg_hook import ENV_AUTO_INSTALL

from .._errors import at_import, warn_plugin

if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType

    from _tilelang_hostcg_hook import _Finder

__all__ = ["activate", "find_spec"]


@at_import()
def find_spec(finder: _Finder, name: str, path: Sequence[str] | None,
              target: ModuleType | None) -> ModuleSpec | None:
    """TileLang's spec as the finders after ``finder`` find it, with a loader that runs
    :func:`activate` once TileLang's module has executed (``None``: leave it to them).
    ``finder`` stays on ``sys.meta_path`` until then: a look is not an import."""
    from ..discovery._controls import auto_install_problem, warn_control_problems

    problem = auto_install_problem(os.environ.get(ENV_AUTO_INSTALL))
    if problem is not None:
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
    """TileLang's loader, called as it would be; once TileLang's module has executed, the
    finder leaves ``sys.meta_path`` and :func:`activate` runs (once: only while the finder
    is still there)."""

    __slots__ = ("finder", "loader", "spec")

    def __init__(self, loader: object, spec: ModuleSpec, finder: _Finder) -> None:
        self.loader = loader
        self.spec = spec
        self.finder = finder

    def __getattr__(self, name: str) -> object:
        return getattr(self.loader, name)

    def create_module(self, spec: ModuleSpec) -> ModuleType | None:
        create = getattr(self.loader, "create_module", None)
        return create(spec) if create is not None else None

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
    """Turn the TileLang integration on if the default registry has entry points of a
    third-party distribution that the controls do not skip (an incompatible one counts:
    resolution then says why it is not used) and TileLang's distribution is installed;
    never raises (but ``KeyboardInterrupt`` and ``SystemExit``). Called once TileLang is
    imported."""
    try:
        from .._routing import routing
        from .._tvm import tilelang_distribution

        # The one answer (with no plugin, from a look at what is advertised: TileLang is not
        # touched); install() raises what blocks it, naming it. A `tilelang` no distribution
        # ships is not TileLang: left alone.
        answer = routing("tilelang", activating=True)
        if answer.pending or (answer.blocker is not None and tilelang_distribution() is not None):
            from . import install

            install()
    except Exception as exc:
        try:
            cause = f"{type(exc).__name__}: {exc}"
        except Exception:
            cause = type(exc).__name__
        _warn(f"tilelang-hostcg did not activate its TileLang integration: {cause}. TileLang "
              f"runs stock, without plugins. Set {ENV_AUTO_INSTALL}=0 to turn activation off")


def _warn(message: str) -> None:
    from .._routing import FAILED

    FAILED["tilelang"] = message  # what the client line of this process quotes
    with contextlib.suppress(Exception):  # never fail the import
        warn_plugin(message)
