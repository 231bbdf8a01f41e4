"""The ``client`` of ``list``, ``check`` and ``explain``: whether the compiler in use builds
host code through the registry, as :func:`tilelang_hostcg._routing.routing` answers. Commands
that import the compiler answer for their own process, whose ``import tvm`` or ``import
tilelang`` ran the activation a user's program runs; plain ``list`` imports none and says what
installed metadata tells, and where that is not enough (``routed: null``)."""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["client_document", "client_text", "client_of"]


def client_of(tvm: dict[str, Any]) -> str | None:
    """The client of the TVM document ``tvm``: ``tilelang``, ``tvm`` (apache-tvm) or ``None``."""
    return {"tilelang": "tilelang", "apache-tvm": "tvm"}.get(str(tvm.get("provider")))


def client_document(tvm: dict[str, Any]) -> dict[str, Any]:
    """``{"active", "client", "routed", "predicted", "problem", "describe"}`` for the TVM document
    ``tvm`` of the command (``docs/cli.md``)."""
    from .._routing import NAMES, routing

    client, predicted = client_of(tvm), "tvm" not in sys.modules
    if client is None:
        return {"active": None, "client": None, "routed": False, "predicted": predicted, "problem": None,
                "describe": f"none: {tvm.get('describe')}"}
    answer = routing(client, import_it=not predicted)  # type: ignore[arg-type]  # client_of: a Client
    problem = answer.blocker or (answer.reason if answer.pending else None)
    describe = (NAMES[client] if answer.routed else
                f"{'none' if answer.routed is False else 'not known'}: {answer.reason}")
    return {"active": client if answer.routed else None, "client": client, "routed": answer.routed,
            "predicted": predicted, "problem": problem,
            "describe": describe + (" (from installed metadata: nothing imported)" if predicted else "")}


def client_text(doc: dict[str, Any]) -> str:
    """The ``client:`` line of the text output."""
    client = doc.get("client") or {}
    return f"Client: {client.get('describe', 'none')}"
