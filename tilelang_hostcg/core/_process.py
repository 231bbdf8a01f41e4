"""What the package keeps for the whole process, on one object (:data:`PROCESS`), and what each
thread of it is in the middle of (:class:`ThreadState`, :func:`at_import`). Every slot is typed with a
type of this layer or of Python and TVM; a layer above keeps state whose type is its own on an object
of its own.

Client defaults (:class:`ClientDefaults`) are here too: a client whose integration routes a compiler's
builds into a registry (TVM's) has its own codegens join that registry before the registry answers
for a kind, not at the first build, so that an answer never depends on whether a build ran first. The
TVM integration fills the default registry's at ``import tvm``, before any registry is made."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tvm.target import Target

    from ._types import TVMInfo

Joiner = Callable[[Any, str], None]
"""``(registry, kind)``: adds a client's own codegens of ``kind`` to ``registry`` (idempotent). The registry
is typed ``Any``: this layer names no type of the layers above it, annotations included."""


class ThreadState(threading.local):
    """What one thread is in the middle of (each thread sees its own values, ``False`` at first)."""

    def __init__(self) -> None:
        self.importing = False
        """This thread runs an activation: a warning the filters make an error is shown, not raised."""
        self.routing = False
        """This thread is inside a routed TVM build: a nested build is TVM's own."""


class ClientDefaults:
    """The joiners a registry calls before it decides a kind (:meth:`join`). A registry reads one
    :class:`ClientDefaults` (the default registry: ``PROCESS.client_defaults``, which a client
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

    def join(self, registry: Any, kind: str) -> None:
        """Before ``registry`` decides ``kind``: each joiner adds its client's codegens."""
        for joiner in self._joiners:
            joiner(registry, kind)


class Process:
    """The package's state for the whole process: each slot holds what one process shares (its
    warnings filters, its imported TVM and TileLang), never an answer that a registry keeps."""

    __slots__ = ("client_defaults", "default_host", "thread", "tilelang_judged", "tvm_info", "warned")

    def __init__(self) -> None:
        self.warned: set[tuple[str, Hashable]] = set()
        """The ``(code, facts)`` of each warning :func:`~tilelang_hostcg.core.warn_once` gave: the
        warnings filters are the process's, so each finding is warned once in it."""
        self.default_host: Target | None = None
        """TVM's default host target, made once: a process imports one TVM."""
        self.tvm_info: TVMInfo | None = None
        """The TVM in use, described at its last look (a later look at the same ``tvm`` reuses it)."""
        self.tilelang_judged: tuple[object, bool] | None = None
        """The imported ``tilelang`` last judged, and whether it is TileLang (``sys.modules`` is the process's)."""
        self.thread = ThreadState()
        """What each thread is in the middle of."""
        self.client_defaults = ClientDefaults()
        """The joiners of the default registry, made or not yet (a client fills it at ``import tvm``)."""


PROCESS = Process()  # the one object of process state below the registry (see docs/architecture.md)


@contextmanager
def at_import() -> Iterator[None]:
    """Where no code can catch a warning (activation): one the filters make an error is shown, not raised."""
    thread = PROCESS.thread
    before, thread.importing = thread.importing, True
    try:
        yield
    finally:
        thread.importing = before
