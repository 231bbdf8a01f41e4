"""A probe build: whether the compiler in use builds host code through our route, shown by use. A tiny
build that needs no device (TVM: a TIR function for a ``c`` host; TileLang: a kernel lowered for an
explicit architecture); :func:`probe` builds it in this process and says whether it called the route.
``check`` runs it in a process of its own (:mod:`tilelang_hostcg.cli._probe_process`), which adds what
no process can say of itself: that it hung, or ended."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, NamedTuple

from ..core import HOOK_GROUP, Facts, text_of

if TYPE_CHECKING:
    from ..core import Origin
    from ._interface import Client

CONFIRMED = "confirmed by a probe build"
NOT_CALLED = "the probe build did not call the route: plugins are not used"

# How a probe build failed (:attr:`ProbeFailure.how`).
RAISED = "raised"  # an exception (SystemExit and KeyboardInterrupt too) came out of the build
ENDED = "ended"  # the process ended (os._exit, a crash, a signal) before it reported
TIMED_OUT = "timed-out"  # it did not finish within the time bound
PRINTED = "printed"  # a plugin's codegen or hook wrote to stdout or stderr
GARBLED = "garbled"  # the process reported what is no report


class Running(NamedTuple):
    """A codegen or hook the probe build called: its entry-point ``group``, ``kind``, ``name``, ``origin``;
    ``plugin``: a third-party plugin's (not the core's, not one of the compiler's own defaults)."""

    group: str
    kind: str
    name: str
    origin: Origin
    plugin: bool

    def describe(self) -> str:
        """``codegen 'x' for kind 'c' (distribution 'd' 1.0, entry point ...)``."""
        noun = "hook" if self.group == HOOK_GROUP else "codegen"
        return f"{noun} {self.name!r} for kind {self.kind!r} ({self.origin.describe()})"


class ProbeFailure(NamedTuple):
    """What went wrong in a probe build: ``how`` (:data:`RAISED`, ...), ``error`` (one line) and the
    codegen or hook ``running`` then (``None``: the compiler's own code, or ``stage`` says where)."""

    how: str
    error: str
    running: Running | None = None
    stage: str | None = None

    @property
    def blames_plugin(self) -> bool:
        """Whether a third-party plugin's code raised, hung or ended the build (not only printed)."""
        return self.running is not None and self.running.plugin and self.how != PRINTED


class Probe(NamedTuple):
    """``called``: whether the probe build went through the route (``None``: no answer, ``text`` says
    why); ``seconds`` the build took (never in a document); ``hints`` from reading the compiler's code
    (never a verdict); ``failure``: what went wrong, else ``None``; ``warnings``: the plugin warnings its
    process gave, each ``(text, code, facts)``; ``shown``: what the build showed of the routes
    (which it missed, and who holds it), where it was the build that decided."""

    called: bool | None
    text: str
    seconds: float = 0.0
    hints: tuple[str, ...] = ()
    failure: ProbeFailure | None = None
    warnings: tuple[tuple[str, str, Facts], ...] = ()
    shown: str | None = None

    @property
    def confirmed(self) -> bool:
        """Whether the build took the route and succeeded: the only build said to confirm it."""
        return self.called is True and self.failure is None


def takes_probe(client: Client) -> bool:
    """Whether ``client`` has a probe build in this process: something routes its builds here (its
    routes are installed and take its builds, or the compiler calls the native API itself)."""
    return client.route_calls() is not None


def error_line(exc: BaseException) -> str:
    """``Type: message``, its first line; for ``SystemExit``, the ``sys.exit`` call it stands for."""
    if isinstance(exc, SystemExit):
        return f"SystemExit: sys.exit({exc.code!r}) was called, which ends a user's program"
    return f"{type(exc).__name__}: {text_of(exc)}".splitlines()[0]


def probe(client: Client) -> Probe | None:
    """Build the client's probe where :func:`takes_probe` (else ``None``), and say whether the build
    called the route and succeeded. An exception the build raises (a plugin's ``SystemExit`` too) is
    its failure, never raised."""
    before = client.route_calls()
    if before is None:
        return None
    start = time.perf_counter()
    error = None
    try:
        client.probe_build()
    except (Exception, SystemExit) as exc:  # the compiler's failure, or a plugin's (sys.exit too): told
        error = error_line(exc)
    seconds = time.perf_counter() - start
    called = (client.route_calls() or 0) > before
    if error is not None:
        where = "" if called else " before it reached the route"
        return Probe(called or None, f"the probe build failed{where}: {error}", seconds,
                     failure=ProbeFailure(RAISED, error))
    if called and client.live().routed:
        return Probe(True, CONFIRMED, seconds)
    return Probe(False, client.unused_route() or NOT_CALLED, seconds, tuple(client.hints()))
