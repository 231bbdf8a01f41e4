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
        switch = None
        try:
            from _tilelang_hostcg_switch import ENV_AUTO_INSTALL, activation_off

            switch = ENV_AUTO_INSTALL
            if activation_off():
                self.leave()
                return None
            from tilelang_hostcg.tilelang._activation import find_spec

            return find_spec(self, name, path, target)
        except Exception as exc:  # the usual finders still import TileLang
            self.leave()  # one warning, not one per look
            try:
                from tilelang_hostcg.diagnosis import warn_activation_failed

                warn_activation_failed("TileLang", exc)
            except Exception as missing:  # the package is gone (deleted by hand): the hook says so alone
                _warn_package_gone(missing, switch)
            return None

    def leave(self) -> bool:
        """Take this finder off ``sys.meta_path``; whether it was there."""
        # A new list: the import system, in this thread or another, may be iterating over it.
        here = self in sys.meta_path
        sys.meta_path = [f for f in sys.meta_path if f is not self]
        return here


def _warn_package_gone(missing: BaseException, switch: "str | None") -> None:
    """One warning at the user's ``import tilelang`` line (shown, never raised, also under ``-W
    error``): the hook is installed but the package is not, so TileLang runs stock; how to turn it off
    (the off switch, where its module is still here) and which files are left. Never raises."""
    try:
        import os
        import warnings

        folder = os.path.dirname(os.path.abspath(__file__))
        left = [f for f in ("_tilelang_hostcg_hook.py", "_tilelang_hostcg_switch.py", "tilelang_hostcg_hook.pth",
                            "tilelang_hostcg_hook.start") if os.path.exists(os.path.join(folder, f))]
        off = f"set {switch}=0 to turn it off, or " if switch else ""
        message = (f"tilelang-hostcg's start-up hook is installed but its package tilelang_hostcg cannot be "
                   f"imported ({type(missing).__name__}: {missing}), so TileLang runs stock, without plugins. "
                   f"Reinstall tilelang-hostcg as you installed it; {off}remove what is left of it from "
                   f"{folder}: {', '.join(left)}")
        frame = sys._getframe(1)
        while frame.f_back is not None and (frame.f_globals.get("__name__") == __name__ or (
                "importlib" in frame.f_code.co_filename and "_bootstrap" in frame.f_code.co_filename)):
            frame = frame.f_back  # past this hook and the import system: the user's line
        where = (frame.f_code.co_filename, frame.f_lineno, frame.f_globals.get("__name__"))
        try:
            warnings.warn_explicit(message, UserWarning, *where,
                                   registry=frame.f_globals.setdefault("__warningregistry__", {}))
        except UserWarning as raised:  # -W error: no code can catch it at an import; show it
            warnings.showwarning(raised, UserWarning, where[0], where[1])
    except Exception:  # never break an import
        pass


def start() -> None:
    """Put the finder first on ``sys.meta_path`` unless one is there already. Never raises."""
    try:
        if not any(type(f).__name__ == "_Finder" and type(f).__module__ == __name__
                   for f in sys.meta_path):
            sys.meta_path.insert(0, _Finder())
    except Exception:  # never break interpreter start
        pass


start()
