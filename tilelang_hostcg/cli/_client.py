"""The ``client`` of ``list``, ``check`` and ``explain``: :func:`tilelang_hostcg._routing.routing`'s answer for
the compiler in use, in this process; plain ``list`` imports nothing and says what metadata tells (``routed: null``)."""

from __future__ import annotations

import sys
from typing import Any


def client_document(tvm: dict[str, Any]) -> dict[str, Any]:
    """``{"active", "client", "routed", "predicted", "problem", "describe"}`` for the TVM document ``tvm``."""
    from .._routing import NAMES, routing
    client = {"tilelang": "tilelang", "apache-tvm": "tvm"}.get(str(tvm.get("provider")))
    predicted = "tvm" not in sys.modules
    if client is None:
        return {"active": None, "client": None, "routed": False, "predicted": predicted, "problem": None,
                "describe": f"none: {tvm.get('describe')}"}
    answer = routing(client, import_it=not predicted)  # type: ignore[arg-type]  # a Client
    state = "not known" if answer.routed is None else "none"
    describe = NAMES[client] if answer.routed else f"{state}: {answer.reason}"
    return {"active": client if answer.routed else None, "client": client, "routed": answer.routed,
            "predicted": predicted, "problem": answer.blocker or (answer.reason if answer.pending else None),
            "describe": describe + (" (from installed metadata: nothing imported)" if predicted else "")}


def client_text(doc: dict[str, Any]) -> str:
    """The ``client:`` line of the text output."""
    return f"Client: {(doc.get('client') or {}).get('describe', 'none')}"
