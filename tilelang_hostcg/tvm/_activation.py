"""Activation at ``import tvm`` (TVM's ``tvm.backends`` entry point): :func:`tilelang_hostcg.tvm.install`
where :func:`tilelang_hostcg._routing.routing` says a third-party plugin the controls keep is installed;
never with ``TILELANG_HOSTCG_AUTO_INSTALL=0``, in TVM's runtime-only mode or while TileLang is imported.
Cheap (no registry, no ``packaging``) and never raising: a failure is one PluginWarning, TVM stays stock."""

from __future__ import annotations

import contextlib
import os
import sys

from _tilelang_hostcg_hook import ENV_AUTO_INSTALL, OFF

from .._errors import at_import, warn_plugin
from .._routing import FAILED, routing


@at_import()
def autoload() -> None:
    """Turn the TVM integration on where a third-party plugin is installed; never raises (but
    ``KeyboardInterrupt`` and ``SystemExit``); its warnings are shown, not raised, under ``-W error``."""
    try:
        _activate()
    except Exception as exc:
        try:
            cause = str(exc) or type(exc).__name__
        except Exception:
            cause = type(exc).__name__
        FAILED["tvm"] = message = (f"tilelang-hostcg did not activate its TVM integration: {cause}. TVM runs stock, "
                                   f"without plugins. Set {ENV_AUTO_INSTALL}=0 to turn activation off")
        with contextlib.suppress(Exception):  # never fail the import
            warn_plugin(message)


def _activate() -> None:
    value = os.environ.get(ENV_AUTO_INSTALL)
    if value is not None and value.strip().lower() in OFF:
        return
    tvm = sys.modules.get("tvm")
    if tvm is None or getattr(tvm, "_RUNTIME_ONLY", False) or "tilelang" in sys.modules:
        return
    # The one answer (its Controls warn of each control problem once); install() raises what blocks it.
    answer = routing("tvm", activating=True)
    if answer.pending or answer.blocker is not None:
        from . import install

        install()
