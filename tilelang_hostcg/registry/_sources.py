"""Lazy plugin sources, the load current in the importing thread, and import journals (what each module's
top-level code registered, for a later load to replay)."""

from __future__ import annotations

import sys
import threading
import weakref
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..core import Origin, SourceState
from ..environment import canonical_kind, is_initializing
from ._shared import REGISTRIES

if TYPE_CHECKING:
    from collections.abc import Iterator
    from types import CodeType

    from ..discovery import AdvertisedEntryPoint
    from ._loading import Loader
    from ._registry import Registry
    from ._table import Undo

def module_of(value: str) -> str:
    """The module an entry-point value (``module``, ``module:attr``, extras) names."""
    return value.partition(":")[0].partition("[")[0].strip()


@dataclass(frozen=True, slots=True)
class SourceInfo:
    """A snapshot of one lazy source (``error``: what broke it, or a ``lazy`` one's last transient failure)."""

    group: str
    kind: str
    value: str
    origin: Origin
    state: SourceState
    reason: str | None
    error: BaseException | None
    location: str = ""


class Source:
    """The loading state of one lazy source (changed under the registry's lock)."""

    __slots__ = ("advertised", "entry", "error", "group", "in_code", "kind", "load", "module",
                 "origin", "reason", "replaceable", "state", "transient", "value", "warned")

    def __init__(self, group: str, advertised: str, value: str, origin: Origin,
                 state: SourceState = SourceState.LAZY, reason: str | None = None,
                 entry: AdvertisedEntryPoint | None = None, in_code: bool = False) -> None:
        self.group, self.advertised, self.kind = group, advertised, canonical_kind(advertised)
        self.value, self.origin, self.state, self.reason = value, origin, state, reason
        self.module = module_of(value)
        self.error: BaseException | None = None
        self.load: object = None
        self.transient = self.warned = self.replaceable = False
        self.entry, self.in_code = entry, in_code

    def info(self) -> SourceInfo:
        return SourceInfo(self.group, self.advertised, self.value, self.origin, self.state,
                          self.reason, self.error, self.entry.location if self.entry else "")


@dataclass(eq=False, slots=True)
class Load:
    """One source being imported by one loader, in one thread and generation, and how to take it back."""

    loader: Loader
    source: Source
    generation: int
    undo: list[Undo] = field(default_factory=list)
    lazy: list[Source] = field(default_factory=list)
    stray: dict[tuple[str, str], None] = field(default_factory=dict)
    registered: bool = False
    thread: threading.Thread = field(default_factory=threading.current_thread)

    @property
    def registry(self) -> Registry:
        """The registry this load loads into (what the module-level functions act on while it runs)."""
        return self.loader.registry


@contextmanager
def current(load: Load) -> Iterator[None]:
    """Make ``load`` current in this thread while the block runs."""
    stack = REGISTRIES.threads.stack
    stack.append(load)
    with REGISTRIES.lock:
        REGISTRIES.active.append(load)
    try:
        yield
    finally:
        stack.pop()
        with REGISTRIES.lock:
            REGISTRIES.active.remove(load)


def current_load() -> Load | None:
    """This thread's innermost load (what another thread registers is that thread's)."""
    stack = REGISTRIES.threads.stack
    return stack[-1] if stack else None


Entry = tuple[tuple[str, ...], str, str, object, bool]  # (chain, group, kind, obj, override)


@dataclass(eq=False, slots=True)
class Journal:
    """What one run of a module's top-level code registered (the run told by ``__spec__``, else the module)."""

    spec: object
    module: weakref.ref[Any] | None
    entries: list[Entry] = field(default_factory=list)


def ends_import_chains(code: CodeType) -> None:
    """Mark ``code`` as the loader's frame that ends every import chain (what runs inside it belongs to the load)."""
    REGISTRIES.boundary.add(code)


def _import_frames() -> list[tuple[str, object, object]]:
    """``(name, spec, module)`` of the modules whose top-level code runs in this thread, innermost first."""
    frame = sys._getframe(1)  # our own frames run functions, not a module's code: the walk passes them
    found: list[tuple[str, object, object]] = []
    while frame is not None and frame.f_code not in REGISTRIES.boundary:
        if frame.f_code.co_name == "<module>":
            globs = frame.f_globals
            name = globs.get("__name__")
            if isinstance(name, str) and name != "__main__" and (not found or found[-1][0] != name):
                module, spec = sys.modules.get(name), globs.get("__spec__")
                if module is not None and getattr(module, "__dict__", None) is globs:
                    found.append((name, spec, module))
                elif getattr(spec, "name", None) == name and is_initializing(spec):
                    found.append((name, spec, None))  # being imported, replaced itself in sys.modules
        frame = frame.f_back  # type: ignore[assignment]
    return found


def _same_run(journal: Journal, spec: object, module: object) -> bool:
    """Whether ``journal`` is of the run of a module's code now on the stack (told by ``spec``, else the module)."""
    if spec is not None:
        return spec is journal.spec
    return journal.module is not None and journal.module() is module


def write_journal(group: str, kind: str, obj: object, override: bool) -> tuple[str, ...]:
    """Journal one registration for every module importing on this stack; returns the import chain."""
    frames = _import_frames()
    chain = tuple(name for name, _, _ in frames)
    if not chain:
        return chain
    entry = (chain, group, kind, obj, override)
    journals = REGISTRIES.journals
    with REGISTRIES.lock:
        for name, spec, module in frames:
            found = journals.get(name)
            if found is None or not _same_run(found, spec, module):
                try:  # a new import of it
                    ref = None if module is None else weakref.ref(module)
                except TypeError:  # no weak reference: its spec says which run
                    ref = None
                found = journals[name] = Journal(spec, ref)
            found.entries.append(entry)
    return chain


def journal(name: str) -> list[Entry]:
    """What module ``name`` registered in the run that gave what ``sys.modules`` holds now."""
    with REGISTRIES.lock:
        found = REGISTRIES.journals.get(name)
    current = sys.modules.get(name)
    if found is None or current is None:
        return []
    if found.module is not None and found.module() is current:
        return list(found.entries)
    try:
        spec = getattr(current, "__spec__", None)
    except Exception:  # a stand-in's __getattr__
        spec = None
    # By identity: the specs of two imports of a module compare equal.
    if found.spec is not None and (spec is found.spec or spec is None):
        return list(found.entries)
    return []
