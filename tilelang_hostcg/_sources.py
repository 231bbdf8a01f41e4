"""Lazy sources: one lazy module or ``module:attr`` each (an entry point, or a lazy module
registered in code), their loading state and how a failed one is described."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from ._targets import canonical_kind
from ._types import Frozen, Origin, init_fields

if TYPE_CHECKING:
    from .discovery import AdvertisedEntryPoint

__all__ = ["Source", "SourceInfo", "parse_value", "text_of"]

# The form importlib.metadata.EntryPoint accepts: module, optional :attr, optional [extras].
_VALUE = r"(?P<module>[\w.]+)\s*(:\s*(?P<attr>[\w.]+)\s*)?((?P<extras>\[.*\])\s*)?$"


def _dotted(text: str) -> bool:
    return text.isascii() and all(part.isidentifier() for part in text.split("."))


def parse_value(value: str) -> tuple[str, str | None]:
    """``(module, attr)`` of an entry-point value, extras stripped as ``importlib.metadata``
    does; raises ``ValueError`` for a value it would not accept."""
    module, sep, attr = value.partition(":")
    if _dotted(module) and (not sep or _dotted(attr)):  # the usual form
        return module, attr if sep else None
    match = re.match(_VALUE, value.strip())
    if match is None:
        raise ValueError(f"entry point value {value!r} is not 'module' or 'module:attr' "
                         "(optionally followed by [extras])")
    return match.group("module"), match.group("attr")


def module_of(value: str) -> str:
    """The module an entry-point value names."""
    return value.partition(":")[0].partition("[")[0].strip()


def text_of(exc: BaseException) -> str:
    """``str(exc)``, or a placeholder for a plugin's exception that cannot be printed."""
    try:
        return str(exc)
    except Exception:
        return f"<{type(exc).__name__} whose str() raised>"


class SourceInfo(Frozen):
    """A snapshot of one lazy source (an entry point or a lazy module registered in code;
    immutable).

    ``state`` is ``lazy``, ``loading``, ``loaded``, ``broken``, ``disabled`` or
    ``incompatible``; ``reason`` explains the last three; ``error`` is the
    exception that broke it (or, for a ``lazy`` source, the transient failure of the
    last attempt).
    """

    __slots__ = (  # noqa: RUF023  # fields in order
        "group", "kind", "value", "origin", "state", "reason", "error", "location",
    )
    group: str
    kind: str
    value: str
    origin: Origin
    state: str
    reason: str | None
    error: BaseException | None
    location: str

    def __init__(self, group: str, kind: str, value: str, origin: Origin, state: str,
                 reason: str | None, error: BaseException | None, location: str = "") -> None:
        init_fields(self, group, kind, value, origin, state, reason, error, location)

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
            from ._debugging import site_text  # a failure's own code, loaded on failure

            err = self.error
            what = (f"failed to load: {type(err).__name__}: {text_of(err)}"
                    f"{site_text(err, module_of(self.value))}" if err else "failed to load")
            if self.state == "lazy" and err is not None:
                what += " (a transient failure: it is retried at the next use)"
        return f"plugin {self.origin.describe()} {what}"

    def advice(self) -> str:
        """What to do about it."""
        from ._debugging import reinstall_command

        dist = self.origin.distribution
        if dist is None:
            return f"fix the import path {self.value!r} passed to register_lazy_*()"
        if self.state == "incompatible":
            return (f"install a release of {dist!r} that supports the installed versions, or skip "
                    f"it with TILELANG_HOSTCG_DISABLE={dist}")
        return (f"fix or reinstall {dist!r} ({reinstall_command(dist, self.location)}), or skip it "
                f"with TILELANG_HOSTCG_DISABLE={dist}")


class Source:
    """Mutable loading state of one lazy source (internal; changed under the table's lock)."""

    __slots__ = ("advertised", "entry", "error", "group", "in_code", "kind", "module", "origin",
                 "reason", "replaceable", "state", "transient", "value", "warned")

    def __init__(self, group: str, advertised: str, value: str, origin: Origin, state: str = "lazy",
                 reason: str | None = None, entry: AdvertisedEntryPoint | None = None,
                 in_code: bool = False) -> None:
        self.group = group
        self.advertised = advertised
        self.kind = canonical_kind(advertised)
        self.value = value
        self.module = module_of(value)
        self.origin = origin
        self.state = state
        self.reason = reason
        self.error: BaseException | None = None
        self.transient = False
        self.entry = entry
        self.warned = False
        self.in_code = in_code  # registered by register_lazy_*(), not an entry point
        self.replaceable = False  # the kind's lazy module registered in code (TileLang's one)

    def info(self) -> SourceInfo:
        """A snapshot of it."""
        return SourceInfo(self.group, self.advertised, self.value, self.origin, self.state,
                          self.reason, self.error, self.entry.location if self.entry else "")
