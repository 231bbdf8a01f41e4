"""Activation at ``import tvm``: TVM's ``tvm.backends`` entry point of the core's own distribution.

``import tvm`` ends with TVM's autoload of that group, which calls :func:`autoload`.
It calls :func:`tilelang_hostcg.tvm.install` under the rule of TileLang's activation
(:func:`tilelang_hostcg.discovery._planning.third_party_planned`, the same function): only where a
distribution other than ``tilelang-hostcg`` advertises our entry points that the controls
(``TILELANG_HOSTCG_DISABLE_PLUGIN_AUTOLOAD=1``, ``TILELANG_HOSTCG_ONLY``,
``TILELANG_HOSTCG_DISABLE``) do not all skip, as :func:`tilelang_hostcg._routing.routing`
answers. Otherwise TVM is not touched at all; nor with
``TILELANG_HOSTCG_AUTO_INSTALL=0``, in TVM's runtime-only mode (``TVM_USE_RUNTIME_LIB=1``,
silently), or where TileLang is being imported (TileLang's integration applies there). A
TVM that lacks an integration point, or a ``tir_to_runtime`` another package replaced, is one
:class:`~tilelang_hostcg.PluginWarning` naming it and the off switch, and TVM stays stock.
:func:`autoload` never raises, and under ``python -W error`` its warnings are shown, not
raised (``at_import``). It imports no registry and no ``packaging``: the registry comes with the first build.
"""

from __future__ import annotations

import contextlib
import os
import sys

from _tilelang_hostcg_hook import ENV_AUTO_INSTALL, OFF

from .._errors import at_import, warn_plugin

__all__ = ["autoload"]


@at_import()
def autoload() -> None:
    """TVM's ``tvm.backends`` entry point: turn the TVM integration on where a third-party
    plugin is installed. Never raises (but ``KeyboardInterrupt`` and ``SystemExit``)."""
    try:
        _activate()
    except Exception as exc:
        try:
            cause = str(exc) or type(exc).__name__
        except Exception:
            cause = type(exc).__name__
        _warn(f"tilelang-hostcg did not activate its TVM integration: {cause}. TVM runs stock, "
              f"without plugins. Set {ENV_AUTO_INSTALL}=0 to turn activation off")


def _activate() -> None:
    value = os.environ.get(ENV_AUTO_INSTALL)
    if value is not None and value.strip().lower() in OFF:
        return
    tvm = sys.modules.get("tvm")
    if tvm is None or getattr(tvm, "_RUNTIME_ONLY", False) or "tilelang" in sys.modules:
        return
    from .._routing import routing

    # The one answer (its Controls warn of each control problem once); install() raises what
    # blocks it, naming it.
    answer = routing("tvm", activating=True)
    if answer.pending or answer.blocker is not None:
        from . import install

        install()


def _warn(message: str) -> None:
    from .._routing import FAILED

    FAILED["tvm"] = message  # what the client line of this process quotes
    with contextlib.suppress(Exception):  # never fail the import
        warn_plugin(message)
