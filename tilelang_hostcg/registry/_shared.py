"""What every registry of the process shares, on one object (:data:`REGISTRIES`): the default registry,
the loads in progress and the import journals (the default registry's client defaults are the
process's: ``PROCESS.client_defaults``, filled at ``import tvm`` before any registry is made)."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from types import CodeType

    from ._registry import Registry
    from ._sources import Journal, Load


class ThreadLoads(threading.local):
    """The loads of one thread, outermost first (each thread sees its own)."""

    def __init__(self) -> None:
        self.stack: list[Load] = []


class Registries:
    """The registry layer's state for the whole process: what no single registry owns, because a
    module's top-level code runs once per process whichever registry imports it."""

    __slots__ = ("active", "boundary", "default", "default_lock", "journals", "lock", "threads")

    def __init__(self) -> None:
        self.default: Registry | None = None
        """The default registry, once made (the module-level functions' one)."""
        self.default_lock = threading.Lock()
        """Held while the default registry is made, so that a process makes one."""
        self.lock = threading.Lock()
        """Held while :attr:`active` or :attr:`journals` change."""
        self.active: list[Load] = []
        """Every load in progress, any thread: empty is the module-level functions' fast path."""
        self.journals: dict[str, Journal] = {}
        """What each module's top-level code registered, by module name (replayed by a later load)."""
        self.boundary: set[CodeType] = set()
        """The loader's frames that end every import chain."""
        self.threads = ThreadLoads()
        """The loads of each thread (the innermost is what the module-level functions act on)."""


REGISTRIES = Registries()  # the one object of the registry layer's process state (see docs/architecture.md)
