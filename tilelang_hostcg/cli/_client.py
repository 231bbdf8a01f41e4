"""The ``client`` of ``list``, ``check`` and ``explain``: :func:`tilelang_hostcg.clients._routing.routing`'s answer for
the compiler in use, in this process; plain ``list`` imports nothing and says what it can know (``routed: null``)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..clients._interface import Client
    from ..clients._probe import Probe


def client_for(provider: object) -> Client | None:
    """The client of a TVM document's ``provider``."""
    if provider == "tilelang":
        from ..tilelang import CLIENT as TILELANG_CLIENT
        return TILELANG_CLIENT
    if provider == "apache-tvm":
        from ..tvm import CLIENT as TVM_CLIENT
        return TVM_CLIENT
    return None


def client_document(tvm: dict[str, Any], probe: Probe | None = None) -> dict[str, Any]:
    """``{"active", "client", "routed", "predicted", "problem", "describe", "probe"}`` for the TVM document
    ``tvm``; ``probe``: what ``check``'s probe build showed (it decides over what can be known before, and
    ``describe`` says it, as the text output's ``Client:`` line does)."""
    from ..clients._routing import routing
    client = client_for(tvm.get("provider"))
    predicted = "tvm" not in sys.modules
    shown = probe and {"called": probe.called, "confirmed": probe.confirmed, "text": probe.text,
                       "hints": list(probe.hints)}
    if client is None:
        # Nothing imported: a TVM an import hook serves may still be routed (not known, never false).
        return {"active": None, "client": None, "routed": None if predicted else False, "predicted": predicted,
                "problem": None, "describe": f"none: {tvm.get('describe')}", "probe": shown}
    answer = routing(client, import_it=not predicted)
    routed, problem = answer.routed, answer.blocker or (answer.reason if answer.pending else None)
    state = "not known" if routed is None else "none"
    describe = answer.reason if routed else f"{state}: {answer.reason}"
    if predicted and routed is None:  # one line: what will happen, and how to see it for sure
        describe = f"{client.title}, expected: {answer.reason}"
    if probe is not None and probe.called is False and probe.failure is None:
        routed, problem = False, probe_text(probe)
        describe = f"none: {problem}"
    elif probe is not None:
        describe += f" ({probe.text})" if probe.confirmed else f" (not confirmed: {probe.text})"
    return {"active": client.name if routed else None, "client": client.name, "routed": routed,
            "predicted": predicted, "problem": problem, "probe": shown,
            "describe": describe + (" (from installed metadata: nothing imported)"
                                    if predicted and routed is not None else "")}


def probe_text(probe: Probe) -> str:
    """What a probe build that did not call the route says, with what reading the code suggests."""
    return probe.text + (f" (reading the compiler's code: {'; '.join(probe.hints)})" if probe.hints else "")


def client_text(doc: dict[str, Any]) -> str:
    """The ``client:`` line of the text output: the document's ``describe`` (``check``'s says what its probe
    build showed)."""
    client = doc.get("client") or {}
    return f"Client: {client.get('describe', 'none')}"
