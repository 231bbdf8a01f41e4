"""A probe build: whether the compiler in use builds host code through our route, shown by use. A tiny
build that needs no device (TVM: a TIR function for a ``c`` host; TileLang: a kernel lowered for an
explicit architecture), run by ``check``; :func:`probe` says whether it called the route."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from ._interface import Client

CONFIRMED = "confirmed by a probe build"
NOT_CALLED = "the probe build did not call the route: plugins are not used"


class Probe(NamedTuple):
    """``called``: whether the probe build went through the route (``None``: no answer, ``text`` says
    why); ``seconds`` it took; ``hints`` from reading the compiler's code (never a verdict)."""

    called: bool | None
    text: str
    seconds: float = 0.0
    hints: tuple[str, ...] = ()


def probe(client: Client) -> Probe | None:
    """Build the client's probe where the client is installed and takes this process's builds (else
    ``None``), and say whether the build called the route."""
    before = client.route_calls()
    if before is None:
        return None
    start = time.perf_counter()
    error = None
    try:
        client.probe_build()
    except Exception as exc:  # the compiler's own failure (or a plugin's): told, never raised
        error = f"{type(exc).__name__}: {exc}".splitlines()[0]
    seconds = time.perf_counter() - start
    after = client.route_calls() or 0
    if after > before and client.live().routed:
        return Probe(True, CONFIRMED, seconds)
    if after == before and error is not None:
        return Probe(None, f"the probe build failed before it reached the route ({error}); whether plugins are "
                           "used shows at the program's first build", seconds)
    return Probe(False, client.unused_route() or NOT_CALLED, seconds, tuple(client.hints()))
