"""tilelang-hostcg's start-up hook: activates the TileLang integration when TileLang is imported.

At interpreter start ``site`` imports this module, whose import calls :func:`start`:
through the entry ``_tilelang_hostcg_hook:start`` of ``tilelang_hostcg_hook.start`` on
Python 3.15 and later (PEP 829: ``site`` resolves the entry, which imports the module,
calls it, and skips the ``import`` line of the ``.pth`` of the same name), through that
line of ``tilelang_hostcg_hook.pth`` before. :func:`start` is idempotent: one finder
however often it runs. It imports nothing and puts a finder first on ``sys.meta_path``
that answers ``None`` for every module but ``tilelang``; the rest is in
``tilelang_hostcg.tilelang._activation``, imported when TileLang is looked up. The finder
stays until TileLang's module has executed: a look (``importlib.util.find_spec``) or a
failed import changes nothing. Nothing here raises or prints: a failure is one warning
(shown, not raised, where warnings are errors), and TileLang stays stock.
``TILELANG_HOSTCG_AUTO_INSTALL=0`` turns activation off.

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

__all__ = ["ENV_AUTO_INSTALL", "OFF", "start"]

ENV_AUTO_INSTALL = "TILELANG_HOSTCG_AUTO_INSTALL"
OFF = ("0", "false", "no", "off")
"""Values of ``TILELANG_HOSTCG_AUTO_INSTALL`` that turn activation off (any case); any
other value leaves it on (one not understood is warned about by the rule of
``tilelang_hostcg.discovery._controls``)."""


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
        # A new list, not a change of this one: the import system, in this thread or
        # another, may be iterating over it now.
        here = self in sys.meta_path
        sys.meta_path = [f for f in sys.meta_path if f is not self]
        return here


def start() -> None:
    """Put the finder first on ``sys.meta_path``, unless one is there already (so calling
    it again, or from a second copy of this file, changes nothing). Never raises."""
    try:
        if not any(type(f).__name__ == "_Finder" and type(f).__module__ == __name__
                   for f in sys.meta_path):
            sys.meta_path.insert(0, _Finder())
    except Exception:  # never break interpreter start
        pass


start()
