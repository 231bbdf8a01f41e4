"""Attribution: which load, and which plugin module, a registration belongs to.

Load contexts. While the loader imports a source, a :class:`Load` is current in that
thread (and in the threads started during the load, which the plugin waits for); a
registration made then belongs to that load's registry.

Module journals. Every registration made while a module's top-level code runs is
written to that module's journal (and to the journals of the modules importing it,
up to the loader), whoever triggered the import: the loader, another plugin, or the
user. A registration belongs to the nearest module on that chain that some entry
point names; a source gets the registrations its own module made, replayed from the
journal when the module was already imported. So the answers never depend on who
imported a module first, or on which kind was used first.
"""

from __future__ import annotations

import _thread
import importlib
import sys
import threading
import weakref
from typing import TYPE_CHECKING, Any, TypeVar

from ._targets import canonical_kind

if TYPE_CHECKING:
    from collections.abc import Callable
    from types import CodeType

    from ._sources import Source
    from ._table import Undo

__all__ = ["ACTIVE", "Journal", "JournalEntry", "Load", "begin_load", "boundary", "current_load",
           "end_load", "import_chain", "import_module", "journal_of", "loads_here",
           "write_journal"]


# ---------------------------------------------------------------------- load contexts
class Load:
    """One source being imported into one registry.

    ``registry`` is the registry the load fills (module-level functions called by the
    plugin act on it); ``undo`` and ``lazy`` hold what to take back on failure;
    ``threads`` the threads alive when the load began (a thread started later, which
    the plugin waits for, registers here too), or ``None`` when the main thread was the
    only one.
    """

    __slots__ = ("lazy", "registered", "registry", "source", "stray", "threads", "undo")

    def __init__(self, registry: Any, source: Source) -> None:
        self.registry = registry
        self.source = source
        self.undo: list[Undo] = []
        self.lazy: list[Source] = []
        self.registered = False
        self.stray: dict[tuple[str, str], None] = {}
        # threading counts the main thread among its live threads for the life of the
        # process, so a count of 1 is the main thread alone.
        self.threads = (None if threading.active_count() == 1
                        else frozenset(threading.enumerate()))


class _Local(threading.local):
    def __init__(self) -> None:
        self.stack: list[Load] = []


_LOCAL = _Local()
ACTIVE: list[Load] = []
"""Every load in progress, in any thread (changed under a lock, by :func:`begin_load` and
:func:`end_load` only). Empty means no load is current in the reading thread: a thread's
own loads are added before they begin, so a lock-free ``if ACTIVE`` that is true may be
stale, never one that is false; the module-level functions use it to skip the
thread-local lookup."""
_ACTIVE_LOCK = _thread.allocate_lock()


def loads_here() -> list[Load]:
    """This thread's loads in progress, innermost last (a thread-local list)."""
    return _LOCAL.stack


def begin_load(load: Load) -> None:
    """Make ``load`` current in this thread (and in threads it starts)."""
    _LOCAL.stack.append(load)
    with _ACTIVE_LOCK:
        ACTIVE.append(load)


def end_load(load: Load) -> None:
    """End ``load``, begun by :func:`begin_load` in this thread."""
    _LOCAL.stack.pop()
    with _ACTIVE_LOCK:
        ACTIVE.remove(load)


def current_load(registry: object = None) -> Load | None:
    """The load a registration made now belongs to: this thread's innermost one, or
    (in a thread started during a load, which the plugin waits for) that load.

    With ``registry``, only a load into that registry counts.
    """
    stack = _LOCAL.stack
    if stack:
        top = stack[-1]
        return top if registry is None or top.registry is registry else None
    me = threading.current_thread()
    main = threading.main_thread()
    with _ACTIVE_LOCK:
        for load in reversed(ACTIVE):
            threads = load.threads
            alive = me is main if threads is None else me in threads  # when it began
            if not alive and (registry is None or load.registry is registry):
                return load
    return None


# ---------------------------------------------------------------------- module journals
JournalEntry = tuple[tuple[str, ...], str, str, object, bool]
"""``(chain, group, kind, obj or lazy path, override)``; ``chain`` runs from the module
that registered outwards to the one the loader imported."""


class Journal:
    """What one imported module registered while its top-level code ran."""

    __slots__ = ("by_key", "entries", "module")

    def __init__(self, module: object) -> None:
        self.module = weakref.ref(module)
        self.entries: list[JournalEntry] = []
        self.by_key: dict[tuple[str, str], list[JournalEntry]] = {}


_JOURNALS: dict[str, Journal] = {}
_JOURNAL_LOCK = _thread.allocate_lock()
_BOUNDARY: set[CodeType] = set()  # frames that end every import chain

_F = TypeVar("_F", bound="Callable[..., Any]")


def boundary(func: _F) -> _F:
    """Mark ``func`` as a loader frame: what runs inside it belongs to the load, not to
    the modules whose code called the loader."""
    _BOUNDARY.add(func.__code__)
    return func


@boundary
def import_module(name: str) -> Any:
    """Import ``name`` for a load; its frame ends every import chain."""
    return importlib.import_module(name)


def import_chain() -> tuple[str, ...]:
    """The modules whose top-level code is running in this thread, innermost first,
    up to the loader's own frames (``__main__`` excluded)."""
    frame = sys._getframe(1)
    names: list[str] = []
    while frame is not None:
        code = frame.f_code
        if code in _BOUNDARY:  # what runs inside a load belongs to it, not to outer modules
            break
        if code.co_name == "<module>":
            globs = frame.f_globals
            name = globs.get("__name__")
            if isinstance(name, str) and name != "__main__" and (not names or names[-1] != name):
                module = sys.modules.get(name)
                if module is not None and getattr(module, "__dict__", None) is globs:
                    names.append(name)
        frame = frame.f_back  # type: ignore[assignment]
    return tuple(names)


def write_journal(chain: tuple[str, ...], group: str, kind: str, obj: object,
                  override: bool) -> None:
    """Write one registration to the journal of every module on ``chain``."""
    entry: JournalEntry = (chain, group, kind, obj, override)
    key = (group, canonical_kind(kind))
    with _JOURNAL_LOCK:
        for name in chain:
            module = sys.modules.get(name)
            journal = _JOURNALS.get(name)
            if journal is None or journal.module() is not module:  # a new import of it
                journal = _JOURNALS[name] = Journal(module)
            journal.entries.append(entry)
            journal.by_key.setdefault(key, []).append(entry)


def journal_of(name: str) -> Journal | None:
    """The journal of the imported module ``name`` (``None``: it registered nothing)."""
    with _JOURNAL_LOCK:
        journal = _JOURNALS.get(name)
    module = sys.modules.get(name)
    if journal is None or module is None or journal.module() is not module:
        return None
    return journal
