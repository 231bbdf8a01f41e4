"""Activation without code: TileLang uses the registry once a third-party plugin is installed.

The start-up hook (``_tilelang_hostcg_hook``, imported by ``tilelang_hostcg_hook.pth``
at every interpreter start) puts a finder first on ``sys.meta_path``. On ``import
tilelang`` (unless ``TILELANG_HOSTCG_AUTO_INSTALL=0``) it calls :func:`find_spec`
here, which takes the finder off ``sys.meta_path``, lets the other finders find
TileLang, and wraps TileLang's loader; once TileLang's module has executed, the module
and its spec get TileLang's own loader back and :func:`activate` runs.
:func:`activate` calls :func:`tilelang_hostcg.tilelang.install` only where it has
something to do:

- a distribution other than ``tilelang-hostcg`` advertises our entry points, and the
  controls do not skip all of them (``TILELANG_HOSTCG_DISABLE_PLUGIN_AUTOLOAD=1``,
  ``TILELANG_HOSTCG_ONLY``, ``TILELANG_HOSTCG_DISABLE``): decided by the default
  registry's discovery (its cache included), as resolution will see it;
- TileLang's distribution is installed (an importable ``tilelang`` that is not TileLang
  is left alone).

Otherwise TileLang is not touched at all. A failure (an unsupported TileLang, a broken
environment) is one :class:`~tilelang_hostcg.PluginWarning` naming the cause and the
off switch, and TileLang stays stock: ``import tilelang`` never fails because of us.
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from typing import TYPE_CHECKING

from _tilelang_hostcg_hook import ENV_AUTO_INSTALL

from .._errors import PluginWarning, outside_level
from .._names import CORE_DISTRIBUTION

if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType

__all__ = ["activate", "find_spec", "third_party_plugins"]


def find_spec(finder: object, name: str, path: Sequence[str] | None,
              target: ModuleType | None) -> ModuleSpec | None:
    """TileLang's spec as the finders after ``finder`` find it, with a loader that runs
    :func:`activate` once TileLang's module has executed (``None``: leave it to them)."""
    meta_path = sys.meta_path
    # A new list, not a change of this one: the import system, in this thread or another,
    # may be iterating over it now.
    sys.meta_path = [f for f in meta_path if f is not finder]
    from ..discovery.controls import auto_install_problem, warn_control_problems

    problem = auto_install_problem(os.environ.get(ENV_AUTO_INSTALL))
    if problem is not None:
        with contextlib.suppress(Exception):  # where warnings are errors: never fail the import
            warn_control_problems([problem])
    after = meta_path[meta_path.index(finder) + 1:] if finder in meta_path else sys.meta_path
    for other in after:
        find = getattr(other, "find_spec", None)
        if find is None:
            return None  # a legacy finder: leave the search to the import system
        spec: ModuleSpec | None = find(name, path, target)
        if spec is None:
            continue
        loader = spec.loader
        if loader is None or not hasattr(loader, "exec_module"):
            return spec  # a namespace package, or a loader we do not know: not TileLang
        spec.loader = _Loader(loader, spec)  # type: ignore[assignment]
        return spec
    return None


class _Loader:
    """TileLang's loader, called as it would be; :func:`activate` runs after it."""

    __slots__ = ("loader", "spec")

    def __init__(self, loader: object, spec: ModuleSpec) -> None:
        self.loader = loader
        self.spec = spec

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
        activate()


def third_party_plugins() -> bool:
    """Whether the default registry has entry points of a third-party distribution that
    the controls do not skip (an incompatible one counts: resolution then says why it is
    not used). The one place activation asks discovery."""
    from .._api import default_registry

    return any(s.origin.distribution not in (None, CORE_DISTRIBUTION) and s.state != "disabled"
               for s in default_registry().sources())


def activate() -> None:
    """Turn the TileLang integration on if a third-party plugin is installed; never raises
    (but ``KeyboardInterrupt`` and ``SystemExit``). Called once TileLang is imported."""
    try:
        if not third_party_plugins():
            return
        from .gate import tilelang_version

        if tilelang_version() is None:
            return  # something named tilelang, but not TileLang's distribution
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
    with contextlib.suppress(Exception):  # where warnings are errors: never fail the import
        warnings.warn(message, PluginWarning, stacklevel=outside_level(sys._getframe(1)))
