"""tilelang-hostcg's start-up hook (run by ``tilelang_hostcg_hook.pth``, or on Python 3.15+ by
``tilelang_hostcg_hook.start``): a finder first on ``sys.meta_path`` that waits for ``import
tilelang`` and hands it to ``tilelang_hostcg.tilelang._activation``. Imports nothing, never raises.

PYTEST_DONT_REWRITE: imported at start, it must not be marked for assertion rewriting.
"""

import sys

# Not ``from typing import TYPE_CHECKING``: importing ``typing`` would cost more than the hook.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType

__all__ = ["ENV_AUTO_INSTALL", "OFF", "activation_off", "start"]

ENV_AUTO_INSTALL = "TILELANG_HOSTCG_AUTO_INSTALL"
OFF = ("0", "false", "no", "off")
"""Values of ``TILELANG_HOSTCG_AUTO_INSTALL`` that turn activation off (any case)."""


def activation_off(environ: "Mapping[str, str] | None" = None) -> bool:
    """The off switch, the one rule: ``TILELANG_HOSTCG_AUTO_INSTALL`` is one of :data:`OFF`."""
    if environ is None:
        import os

        environ = os.environ
    return (environ.get(ENV_AUTO_INSTALL) or "").strip().lower() in OFF


class _Finder:
    """Finds nothing but ``tilelang``, which it hands to the activation module."""

    __slots__ = ()

    def find_spec(self, name: str, path: "Sequence[str] | None" = None,
                  target: "ModuleType | None" = None) -> "ModuleSpec | None":
        if name != "tilelang":
            return None
        try:
            if activation_off():
                self.leave()
                return None
            from tilelang_hostcg.tilelang._activation import find_spec

            return find_spec(self, name, path, target)
        except Exception as exc:  # the usual finders still import TileLang
            self.leave()  # one warning, not one per look
            try:
                import warnings

                try:
                    warnings.warn(f"tilelang-hostcg could not activate its TileLang integration "
                                  f"({type(exc).__name__}); TileLang runs stock. Reinstall "
                                  f"tilelang-hostcg, or set {ENV_AUTO_INSTALL}=0", stacklevel=2)
                except UserWarning as raised:  # -W error: no code can catch it here; show it
                    warnings.showwarning(raised, UserWarning, __file__, 1)
            except Exception:
                pass
            return None

    def leave(self) -> bool:
        """Take this finder off ``sys.meta_path``; whether it was there."""
        # A new list: the import system, in this thread or another, may be iterating over it.
        here = self in sys.meta_path
        sys.meta_path = [f for f in sys.meta_path if f is not self]
        return here


def start() -> None:
    """Put the finder first on ``sys.meta_path`` unless one is there already. Never raises."""
    try:
        if not any(type(f).__name__ == "_Finder" and type(f).__module__ == __name__
                   for f in sys.meta_path):
            sys.meta_path.insert(0, _Finder())
    except Exception:  # never break interpreter start
        pass


start()
