"""Lazy sources (an entry point, or a lazy module registered in code) and what their imports
registered. While a source is imported a :class:`Load` is current in the thread (and in the
threads it starts); every registration made by a module's top-level code is written to that
module's journal (and its importers'), for a later load to replay."""

from __future__ import annotations

import sys
import threading
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ._targets import canonical_kind
from ._types import Origin, SourceState

if TYPE_CHECKING:
    from types import CodeType

    from ._table import Undo
    from .discovery import AdvertisedEntryPoint

__all__ = ["ACTIVE", "BOUNDARY", "Load", "Source", "SourceInfo", "begin", "current_load", "end", "import_chain",
           "journal", "module_of", "write_journal"]


def module_of(value: str) -> str:
    """The module an entry-point value (``module``, ``module:attr``, extras) names."""
    return value.partition(":")[0].partition("[")[0].strip()


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """A snapshot of one lazy source: ``state`` (see :data:`SourceState`), ``reason`` for
    ``broken``/``disabled``/``incompatible``, ``error`` the exception that broke it (for a
    ``lazy`` source, the transient failure of the last attempt)."""

    group: str
    kind: str
    value: str
    origin: Origin
    state: SourceState
    reason: str | None
    error: BaseException | None
    location: str = ""


class Source:
    """Mutable loading state of one lazy source (changed under the registry's lock): ``load``
    while ``loading``; ``transient`` marks an error retried at the next use; ``replaceable`` the
    kind's lazy module registered in code, which a later call replaces."""

    __slots__ = ("advertised", "entry", "error", "group", "in_code", "kind", "load", "module",
                 "origin", "reason", "replaceable", "state", "transient", "value", "warned")

    def __init__(self, group: str, advertised: str, value: str, origin: Origin,
                 state: SourceState = "lazy", reason: str | None = None,
                 entry: AdvertisedEntryPoint | None = None, in_code: bool = False) -> None:
        self.group, self.advertised, self.kind = group, advertised, canonical_kind(advertised)
        self.value, self.origin, self.state, self.reason = value, origin, state, reason
        self.module = module_of(value)
        self.error: BaseException | None = None
        self.load: object = None
        self.transient = self.warned = self.replaceable = False
        self.entry, self.in_code = entry, in_code

    def info(self) -> SourceInfo:
        """A snapshot of it."""
        return SourceInfo(self.group, self.advertised, self.value, self.origin, self.state,
                          self.reason, self.error, self.entry.location if self.entry else "")


# ---------------------------------------------------------------------- load contexts
@dataclass(eq=False, slots=True)
class Load:
    """One source being imported by one registry's loader: what it registered, how to take
    that back, and the threads alive when it began (one started later, which the plugin
    waits for, registers here too)."""

    loader: Any
    source: Source
    undo: list[Undo] = field(default_factory=list)
    lazy: list[Source] = field(default_factory=list)
    stray: dict[tuple[str, str], None] = field(default_factory=dict)
    registered: bool = False
    thread: threading.Thread = field(default_factory=threading.current_thread)
    threads: frozenset[threading.Thread] = field(
        default_factory=lambda: frozenset(threading.enumerate()))


_LOCAL = threading.local()
_LOCK = threading.Lock()
ACTIVE: list[Load] = []
"""Every load in progress, in any thread (changed in place, under a lock). Empty means no
load is current here: a thread's own loads are listed before they begin."""


def begin(load: Load) -> None:
    """Make ``load`` current in this thread (and in the threads it starts)."""
    _LOCAL.__dict__.setdefault("stack", []).append(load)
    with _LOCK:
        ACTIVE.append(load)


def end(load: Load) -> None:
    """End ``load``, begun in this thread."""
    _LOCAL.stack.pop()
    with _LOCK:
        ACTIVE.remove(load)


def current_load() -> Load | None:
    """The load a registration made now belongs to: this thread's innermost one, or (in a
    thread started during a load, which the plugin waits for) that load."""
    if not ACTIVE:
        return None
    stack: list[Load] | None = getattr(_LOCAL, "stack", None)
    if stack:
        return stack[-1]
    me = threading.current_thread()
    with _LOCK:
        return next((load for load in reversed(ACTIVE) if me not in load.threads), None)


# ---------------------------------------------------------------------- module journals
Entry = tuple[tuple[str, ...], str, str, object, bool]  # (chain, group, kind, obj, override)
_JOURNALS: dict[str, tuple[weakref.ref[Any], list[Entry]]] = {}
BOUNDARY: set[CodeType] = set()
"""The loader's frames that end every import chain: what runs inside a load is the load's."""


def import_chain() -> tuple[str, ...]:
    """The modules whose top-level code runs in this thread, innermost first, up to the loader (no ``__main__``)."""
    frame = sys._getframe(2)
    names: list[str] = []
    while frame is not None and frame.f_code not in BOUNDARY:
        if frame.f_code.co_name == "<module>":
            globs = frame.f_globals
            name = globs.get("__name__")
            if isinstance(name, str) and name != "__main__" and (not names or names[-1] != name):
                module = sys.modules.get(name)
                if module is not None and getattr(module, "__dict__", None) is globs:
                    names.append(name)
        frame = frame.f_back  # type: ignore[assignment]
    return tuple(names)


def journal(name: str) -> list[Entry]:
    """What the imported module ``name`` registered while its top-level code ran."""
    with _LOCK:
        found = _JOURNALS.get(name)
    module = sys.modules.get(name)
    if found is None or module is None or found[0]() is not module:
        return []
    return list(found[1])


def write_journal(chain: tuple[str, ...], entry: Entry) -> None:
    """Write one registration to the journal of every module on ``chain``."""
    with _LOCK:
        for name in chain:
            module = sys.modules.get(name)
            if module is None:
                continue
            found = _JOURNALS.get(name)
            if found is None or found[0]() is not module:  # a new import of it
                found = _JOURNALS[name] = (weakref.ref(module), [])
            found[1].append(entry)
