"""The ``client`` of ``list``, ``check`` and ``explain``: :func:`tilelang_hostcg._routing.routing`'s answer for
the compiler in use, in this process; plain ``list`` imports nothing and says what it can know (``routed: null``)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .._clients import Client


def _client_for(provider: object) -> Client | None:
    """The client of a TVM document's ``provider``."""
    if provider == "tilelang":
        from ..tilelang import CLIENT as TILELANG_CLIENT
        return TILELANG_CLIENT
    if provider == "apache-tvm":
        from ..tvm import CLIENT as TVM_CLIENT
        return TVM_CLIENT
    return None


def client_document(tvm: dict[str, Any]) -> dict[str, Any]:
    """``{"active", "client", "routed", "predicted", "problem", "describe"}`` for the TVM document ``tvm``."""
    from .._routing import routing
    client = _client_for(tvm.get("provider"))
    predicted = "tvm" not in sys.modules
    if client is None:
        return {"active": None, "client": None, "routed": False, "predicted": predicted, "problem": None,
                "describe": f"none: {tvm.get('describe')}"}
    answer = routing(client, import_it=not predicted)
    state = "not known" if answer.routed is None else "none"
    describe = client.title if answer.routed else f"{state}: {answer.reason}"
    if predicted and answer.routed is None:  # one line: what will happen, and how to see it for sure
        describe = f"{client.title}, expected: {answer.reason}"
    return {"active": client.name if answer.routed else None, "client": client.name, "routed": answer.routed,
            "predicted": predicted, "problem": answer.blocker or (answer.reason if answer.pending else None),
            "describe": describe + (" (from installed metadata: nothing imported)"
                                    if predicted and answer.routed is not None else "")}


def client_text(doc: dict[str, Any]) -> str:
    """The ``client:`` line of the text output."""
    return f"Client: {(doc.get('client') or {}).get('describe', 'none')}"
