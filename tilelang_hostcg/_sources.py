"""Lazy sources: one lazy module or ``module:attr`` each (an entry point, or a lazy module
registered in code), their loading state and how a failed one is described."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ._targets import canonical_kind
from ._types import Origin, SourceState

if TYPE_CHECKING:
    from .discovery import AdvertisedEntryPoint

__all__ = ["Source", "SourceInfo", "text_of"]


def text_of(exc: BaseException) -> str:
    """``str(exc)``, or a placeholder for a plugin's exception that cannot be printed."""
    try:
        return str(exc)
    except Exception:
        return f"<{type(exc).__name__} whose str() raised>"


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """A snapshot of one lazy source (an entry point or a lazy module registered in code).

    ``state`` is ``lazy``, ``loading``, ``loaded``, ``broken``, ``disabled`` or
    ``incompatible``; ``reason`` explains the last three; ``error`` is the exception that
    broke it (or, for a ``lazy`` source, the transient failure of the last attempt).
    """

    group: str
    kind: str
    value: str
    origin: Origin
    state: SourceState
    reason: str | None
    error: BaseException | None
    location: str = ""

    @property
    def failed(self) -> bool:
        """Whether the source failed: broken, incompatible, or transiently."""
        return self.state in ("broken", "incompatible") or (
            self.state == "lazy" and self.error is not None)

    def failure_text(self) -> str:
        """One phrase on what is wrong with it: ``plugin <origin> <what>``."""
        if self.state == "incompatible":
            what = f"is incompatible: {self.reason}"
        elif self.state == "disabled":
            what = f"is skipped: {self.reason}"
        else:
            err = self.error
            what = ("failed to load" if err is None
                    else f"exited while being imported (sys.exit({err.code!r}))"
                    if isinstance(err, SystemExit)
                    else f"failed to load: {type(err).__name__}: {text_of(err)}")
            if self.state == "lazy" and err is not None:
                what += " (a transient failure: it is retried at the next use)"
        return f"plugin {self.origin.describe()} {what}"

    def advice(self) -> str:
        """What to do about it."""
        dist = self.origin.distribution
        if dist is None:
            return f"fix the import path {self.value!r} passed to register_lazy_*()"
        if self.state == "incompatible":
            return (f"install a release of {dist!r} that supports the installed versions, or skip "
                    f"it with TILELANG_HOSTCG_DISABLE={dist}")
        return (f"fix or reinstall {dist!r} (pip install --force-reinstall {dist}), or skip it "
                f"with TILELANG_HOSTCG_DISABLE={dist}")


class Source:
    """Mutable loading state of one lazy source (internal; changed under the registry's lock).

    ``load`` is the load in progress while ``state`` is ``loading``; ``transient`` marks an
    ``error`` of the moment (retried at the next use); ``replaceable`` the kind's lazy
    module registered in code (TileLang's one, which a later call replaces).
    """

    __slots__ = ("advertised", "entry", "error", "group", "in_code", "kind", "load", "module",
                 "origin", "reason", "replaceable", "state", "transient", "value", "warned")

    def __init__(self, group: str, advertised: str, value: str, origin: Origin,
                 state: SourceState = "lazy", reason: str | None = None,
                 entry: AdvertisedEntryPoint | None = None, in_code: bool = False) -> None:
        self.group, self.advertised, self.kind = group, advertised, canonical_kind(advertised)
        self.value, self.origin, self.state, self.reason = value, origin, state, reason
        self.module = value.partition(":")[0].partition("[")[0].strip()
        self.error: BaseException | None = None
        self.load: object = None
        self.transient = self.warned = self.replaceable = False
        self.entry, self.in_code = entry, in_code

    def info(self) -> SourceInfo:
        """A snapshot of it."""
        return SourceInfo(self.group, self.advertised, self.value, self.origin, self.state,
                          self.reason, self.error, self.entry.location if self.entry else "")
