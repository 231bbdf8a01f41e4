"""Activation at ``import tvm`` (TVM's ``tvm.backends`` entry point), where a third-party plugin the
controls keep is installed: where the TVM in use has its own host-codegen extension point, the adapter
registered there (:mod:`._provider`); else :func:`tilelang_hostcg.tvm.install` where
:func:`tilelang_hostcg.clients.routing` says so;
never with ``TILELANG_HOSTCG_AUTO_INSTALL=0``, in TVM's runtime-only mode or while TileLang is imported.
Cheap (no registry, no ``packaging``) and never raising: a failure is one PluginWarning, TVM stays stock."""

from __future__ import annotations

import sys

from _tilelang_hostcg_switch import activation_off

from ..clients import routing
from ..core import at_import
from . import CLIENT
from ._points import extension_point_names


@at_import()
def autoload() -> None:
    """Turn the TVM integration on where a third-party plugin is installed; never raises (but
    ``KeyboardInterrupt`` and ``SystemExit``); its warnings are shown, not raised, under ``-W error``."""
    try:
        _activate()
    except Exception as exc:
        CLIENT.activation_failed(exc)


def _activate() -> None:
    if activation_off():
        return
    tvm = sys.modules.get("tvm")
    if tvm is None or getattr(tvm, "_RUNTIME_ONLY", False) or CLIENT.stands_aside() is not None:
        return
    if CLIENT.native() is not None:  # TVM calls the registry itself: nothing to patch
        return
    if extension_point_names() is not None:  # TVM's own extension point: the adapter goes there, nothing is patched
        from ..discovery import Controls, third_party_planned
        if third_party_planned(Controls.from_environ()):
            from ._provider import ADAPTER
            ADAPTER.register()
        return
    # The one answer (its Controls warn of each control problem once); install() raises what blocks it.
    answer = routing(CLIENT, activating=True)
    if answer.pending or answer.blocker is not None:
        CLIENT.install()
