"""Import locks: one per top-level plugin package, re-entrant, with deadlock avoidance.

Plugin imports of different packages run in parallel. A thread that would wait in a
cycle (thread 1 imports package A, which waits for B, while thread 2 imports B, which
waits for A) does not wait: :func:`acquire` returns ``False`` and the caller goes on
with what is registered so far, as a re-entrant resolve does.
"""

from __future__ import annotations

import _thread

__all__ = ["ImportLock", "acquire", "import_lock", "release"]

_GRAPH = _thread.allocate_lock()  # guards every field below and of every ImportLock
_IMPORT_LOCKS: dict[str, ImportLock] = {}
_WAITING_FOR: dict[int, ImportLock] = {}


class ImportLock:
    """The lock of one top-level package: its owner thread and re-entry depth."""

    __slots__ = ("depth", "lock", "owner")

    def __init__(self) -> None:
        self.lock = _thread.allocate_lock()
        self.owner: int | None = None
        self.depth = 0


def import_lock(module: str) -> ImportLock:
    """The lock of ``module``'s top-level package."""
    package = module.partition(".")[0]
    with _GRAPH:
        lock = _IMPORT_LOCKS.get(package)
        if lock is None:
            lock = _IMPORT_LOCKS[package] = ImportLock()
        return lock


def _take_now(lock: ImportLock, me: int) -> bool:
    """Take ``lock`` again (its owner) or take it free; ``False`` when another holds it.
    ``_GRAPH`` is held."""
    if lock.owner == me:
        lock.depth += 1
        return True
    if lock.lock.acquire(False):
        lock.owner, lock.depth = me, 1
        return True
    return False


def acquire(lock: ImportLock) -> bool:
    """Take ``lock``; ``False`` (not taken) where waiting would deadlock."""
    me = _thread.get_ident()
    while True:
        with _GRAPH:
            if _take_now(lock, me):
                return True
            owner, seen = lock.owner, set()
            while owner is not None and owner not in seen:
                if owner == me:
                    return False
                seen.add(owner)
                waited = _WAITING_FOR.get(owner)
                owner = waited.owner if waited is not None else None
            _WAITING_FOR[me] = lock
        acquired = lock.lock.acquire(timeout=0.05)
        with _GRAPH:
            del _WAITING_FOR[me]
            if acquired:
                lock.owner, lock.depth = me, 1
                return True


def release(lock: ImportLock) -> None:
    """Release ``lock`` once (by its owner)."""
    with _GRAPH:
        lock.depth -= 1
        if lock.depth == 0:
            lock.owner = None
            lock.lock.release()
