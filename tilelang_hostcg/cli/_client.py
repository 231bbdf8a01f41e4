"""Which client integration is active: TileLang's, TVM's, or none (the ``client`` field of
``list``, ``check`` and ``explain``).

Where the command imported TVM, the answer is the integration's own state in this process
(the command's ``import tvm`` or ``import tilelang`` ran the same activation a user's
program runs). Plain ``list`` imports no TVM: it answers by the activation rule from
installed metadata (``predicted``)."""

from __future__ import annotations

import os
import sys
from typing import Any

__all__ = ["client_document", "client_text"]

_NAMES = {"tilelang": "TileLang integration (tilelang_hostcg.tilelang)",
          "tvm": "TVM integration (tilelang_hostcg.tvm)"}


def _installed(module: str) -> bool:
    loaded = sys.modules.get(module)
    return bool(loaded is not None and loaded.is_installed())


def client_document(tvm: dict[str, Any]) -> dict[str, Any]:
    """``{"active": "tilelang" | "tvm" | None, "predicted": bool, "describe": str}`` for the TVM
    document ``tvm`` of the command."""
    for name in ("tilelang", "tvm"):
        if _installed(f"tilelang_hostcg.{name}"):
            return {"active": name, "predicted": False, "describe": _NAMES[name]}
    if "tvm" in sys.modules:
        return {"active": None, "predicted": False, "describe": "none: " + _why_none(tvm)}
    active = None
    if not _off() and _planned():
        active = {"tilelang": "tilelang", "apache-tvm": "tvm"}.get(str(tvm.get("provider")))
    describe = (_NAMES[active] if active else "none: " + _why_none(tvm)) + " (at import, by installed metadata)"
    return {"active": active, "predicted": True, "describe": describe}


def _off() -> bool:
    from _tilelang_hostcg_hook import ENV_AUTO_INSTALL, OFF

    return (os.environ.get(ENV_AUTO_INSTALL) or "").strip().lower() in OFF


def _planned() -> bool:
    from ..discovery._planning import Controls, third_party_planned  # the rule both activations use

    return third_party_planned(Controls.from_environ())


def _why_none(tvm: dict[str, Any]) -> str:
    if _off():
        return "activation is off (TILELANG_HOSTCG_AUTO_INSTALL=0)"
    if tvm.get("provider") is None:
        return "no TVM installed"
    if not _planned():
        return ("no third-party plugin is installed (or the controls skip them all): TVM and TileLang "
                "run stock; tilelang_hostcg.build() uses the core's codegens")
    return (f"the TVM in use ({tvm.get('describe')}) is not one an integration supports, or another "
            "package replaced what the TVM integration replaces (see the warning at import)")


def client_text(doc: dict[str, Any]) -> str:
    """The ``client:`` line of the text output."""
    client = doc.get("client") or {}
    return f"Client: {client.get('describe', 'none')}"
