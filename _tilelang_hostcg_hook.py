"""tilelang-hostcg's start-up hook: activates the TileLang integration when TileLang is imported.

``tilelang_hostcg_hook.pth``, installed beside this module, imports it at interpreter
start, as ``site`` does for every ``.pth`` file. It imports nothing and only puts a
finder first on ``sys.meta_path``, which answers ``None`` for every module but
``tilelang``; the rest is in ``tilelang_hostcg.tilelang.activation``, imported when
TileLang is. Nothing here raises or prints: a failure is one warning, and TileLang
stays stock. ``TILELANG_HOSTCG_AUTO_INSTALL=0`` turns activation off.

PYTEST_DONT_REWRITE: pytest marks every module of a distribution with a ``pytest11``
plugin (ours: ``tilelang_hostcg.testing``) for assertion rewriting and warns about one
already imported, as this one is at start; under ``filterwarnings = error`` that
warning would fail every test run of a TileLang environment with the package installed.
"""

import sys

# Not ``from typing import TYPE_CHECKING``: this module runs at every interpreter start,
# where importing ``typing`` (or ``__future__``) would cost more than the whole hook.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType

__all__ = ["ENV_AUTO_INSTALL", "OFF", "ON"]

ENV_AUTO_INSTALL = "TILELANG_HOSTCG_AUTO_INSTALL"
OFF = ("0", "false", "no", "off")
"""Values of ``TILELANG_HOSTCG_AUTO_INSTALL`` that turn activation off (any case)."""
ON = ("", "1", "true", "yes", "on")
"""Values that leave it on; any other value leaves it on with a warning."""


class _Finder:
    """Finds nothing but ``tilelang``, which it hands to the activation module."""

    __slots__ = ()

    def find_spec(self, name: str, path: "Sequence[str] | None" = None,
                  target: "ModuleType | None" = None) -> "ModuleSpec | None":
        if name != "tilelang":
            return None
        try:
            import os

            if os.environ.get(ENV_AUTO_INSTALL, "").strip().lower() in OFF:
                sys.meta_path = [f for f in sys.meta_path if f is not self]
                return None
            from tilelang_hostcg.tilelang.activation import find_spec

            return find_spec(self, name, path, target)
        except Exception as exc:  # the usual finders still import TileLang
            try:
                import warnings

                warnings.warn(f"tilelang-hostcg could not activate its TileLang integration "
                              f"({type(exc).__name__}); TileLang runs stock. Reinstall "
                              f"tilelang-hostcg, or set {ENV_AUTO_INSTALL}=0", stacklevel=2)
            except Exception:
                pass
            return None


try:
    if not any(type(f).__name__ == "_Finder" and type(f).__module__ == __name__ for f in sys.meta_path):
        sys.meta_path.insert(0, _Finder())
except Exception:  # never break interpreter start
    pass
