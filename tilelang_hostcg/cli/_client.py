"""The ``client`` of ``list``, ``check`` and ``explain``: :func:`tilelang_hostcg.clients.routing`'s answer for
the compiler in use, in this process; plain ``list`` imports nothing and says what it can know (``routed: null``)."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..clients import Client, Probe


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
    """``{"active", "client", "routed", "predicted", "problem", "describe", "probe", "native"}`` for the TVM
    document ``tvm``; ``probe``: what ``check``'s probe build showed (it decides over what can be known
    before, and ``describe`` says it, as the text output's ``Client:`` line does)."""
    from ..clients import routing
    client = client_for(tvm.get("provider"))
    predicted = "tvm" not in sys.modules
    shown = probe and {"called": probe.called, "confirmed": probe.confirmed, "text": probe.text,
                       "hints": list(probe.hints)}
    if client is None:
        # Nothing imported: a TVM an import hook serves may still be routed (not known, never false).
        return {"active": None, "client": None, "routed": None if predicted else False, "predicted": predicted,
                "problem": None, "native": None, "describe": f"none: {tvm.get('describe')}", "probe": shown}
    answer = routing(client, import_it=not predicted)
    routed, problem = answer.routed, answer.blocker or (answer.reason if answer.pending else None)
    state = "not known" if routed is None else "none"
    describe = answer.reason if routed else f"{state}: {answer.reason}"
    if predicted and routed is None:  # one line: what will happen, and how to see it for sure
        describe = f"{client.title}, expected: {answer.reason}"
    if probe is not None and probe.called is False and probe.failure is None:
        routed, problem = False, probe_text(probe, answer.reason if answer.by_build else probe.shown)
        describe = f"none: {problem}"
    elif probe is not None:
        describe += f" ({probe.text})" if probe.confirmed else f" (not confirmed: {probe.text})"
    damaged = damaged_api() if client.native() is not None else None
    if damaged is not None:  # the compiler calls an API this install cannot give: its builds fail
        routed, problem, describe = False, damaged, f"none: {damaged}"
    native = client.native()
    return {"active": client.name if routed else None, "client": client.name, "routed": routed,
            "predicted": predicted, "problem": problem, "probe": shown,
            "native": native.module if native is not None else None,
            "describe": describe + (" (from installed metadata: nothing imported)"
                                    if predicted and routed is not None else "")}


def damaged_api() -> str | None:
    """Why ``tilelang_hostcg.native`` cannot serve a compiler that calls it (this install is damaged: the
    module fails to import or lacks its API), else ``None``."""
    from ..core import NATIVE_API_VERSION
    try:
        import tilelang_hostcg.native as api
    except Exception as exc:  # any failure of a damaged file: told, never raised
        broken = f"does not import ({type(exc).__name__}: {exc})".splitlines()[0]
    else:
        missing = [name for name in ("API_VERSION", "plan", "build_host", "apply_hooks", "fingerprint")
                   if not hasattr(api, name)]
        version = getattr(api, "API_VERSION", None)
        if not missing and version == NATIVE_API_VERSION:
            return None
        broken = f"lacks {', '.join(missing)}" if missing else f"says API {version!r}, not {NATIVE_API_VERSION}"
    from ..core import CORE_DISTRIBUTION
    from ..registry import reinstall_command
    return (f"this tilelang-hostcg is damaged: its module tilelang_hostcg.native {broken}, so the compiler's builds "
            f"that call it fail. Reinstall it: {reinstall_command(CORE_DISTRIBUTION)}")



def probe_text(probe: Probe, shown: str | None = None) -> str:
    """What a probe build that did not call the route says, with what that build ``shown`` (which route
    it missed, and who holds it) and what reading the code suggests."""
    said = f"{probe.text} ({shown})" if shown else probe.text
    return said + (f" (reading the compiler's code: {'; '.join(probe.hints)})" if probe.hints else "")


def client_text(doc: dict[str, Any]) -> str:
    """The ``client:`` line of the text output: the document's ``describe`` (``check``'s says what its probe
    build showed)."""
    client = doc.get("client") or {}
    return f"Client: {client.get('describe', 'none')}"
