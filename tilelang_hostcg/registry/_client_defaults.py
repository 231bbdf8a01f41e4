"""Client defaults that join a registry before it decides. A client whose integration routes a
compiler's builds into a registry (TVM's) has its own codegens join that registry before the
registry answers for a kind, not at the first build, so that an answer never depends on whether a
build ran first. Cheap to import: the TVM integration uses it at ``import tvm``, before any registry
is made."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._registry import Registry

Joiner = Callable[["Registry", str], None]
"""``(registry, kind)``: adds a client's own codegens of ``kind`` to ``registry`` (idempotent)."""


class ClientDefaults:
    """The joiners a registry calls before it decides a kind (:meth:`join`). A registry reads one
    :class:`ClientDefaults` (the default registry: ``REGISTRIES.client_defaults``, which a client
    can fill before that registry is made); adding or removing a joiner drops the answers that
    registry remembers, so that its next answer asks the joiners."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._joiners: tuple[Joiner, ...] = ()  # replaced, never changed: a reader needs no lock
        self._readers: tuple[Callable[[], None], ...] = ()  # each drops one registry's answers

    def read_by(self, forget_answers: Callable[[], None]) -> None:
        """A registry reads these joiners; ``forget_answers`` drops what it remembers."""
        with self._lock:
            self._readers = (*self._readers, forget_answers)

    def add(self, joiner: Joiner) -> None:
        """Call ``joiner`` before each decision from now on."""
        with self._lock:
            self._joiners = (*self._joiners, joiner)
            readers = self._readers
        for forget in readers:
            forget()

    def remove(self, joiner: Joiner) -> None:
        """Stop calling ``joiner`` (no-op where it is not called)."""
        with self._lock:
            self._joiners = tuple(j for j in self._joiners if j is not joiner)
            readers = self._readers
        for forget in readers:
            forget()

    def join(self, registry: Registry, kind: str) -> None:
        """Before ``registry`` decides ``kind``: each joiner adds its client's codegens."""
        for joiner in self._joiners:
            joiner(registry, kind)
