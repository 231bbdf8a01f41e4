"""tilelang-hostcg's start-up hook (run by ``tilelang_hostcg_hook.pth``, or on Python 3.15+ by
``tilelang_hostcg_hook.start``): a finder first on ``sys.meta_path`` that waits for ``import
tilelang`` and hands it to ``tilelang_hostcg.tilelang._activation`` unless the off switch
(:func:`_tilelang_hostcg_switch.activation_off`) says no. Imports nothing until then; never raises.

PYTEST_DONT_REWRITE: imported at start, it must not be marked for assertion rewriting.
"""

import sys

# Not ``from typing import TYPE_CHECKING``: importing ``typing`` would cost more than the hook.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from importlib.machinery import ModuleSpec
    from types import ModuleType

__all__ = ["start"]


class _Finder:
    """Finds nothing but ``tilelang``, which it hands to the activation module."""

    __slots__ = ()

    def find_spec(self, name: str, path: "Sequence[str] | None" = None,
                  target: "ModuleType | None" = None) -> "ModuleSpec | None":
        if name != "tilelang":
            return None
        try:
            from _tilelang_hostcg_switch import activation_off

            if activation_off():
                self.leave()
                return None
            from tilelang_hostcg.tilelang._activation import find_spec

            return find_spec(self, name, path, target)
        except Exception as exc:  # the usual finders still import TileLang
            self.leave()  # one warning, not one per look
            try:
                from tilelang_hostcg.core._errors import warn_activation_failed

                warn_activation_failed("TileLang", exc)
            except Exception as missing:  # not even the package imports: one line, never a raise
                try:  # noqa: SIM105 (importing contextlib would cost more than the hook)
                    sys.stderr.write(f"tilelang-hostcg's start-up hook could not import tilelang_hostcg "
                                     f"({type(missing).__name__}); TileLang runs stock. Reinstall "
                                     f"tilelang-hostcg, or uninstall it\n")
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
