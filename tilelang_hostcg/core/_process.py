"""What the package keeps for the whole process, on one object (:data:`PROCESS`), and what each
thread of it is in the middle of (:class:`ThreadState`). Every slot is typed with a type of this
layer or of Python and TVM; a layer above keeps state whose type is its own on an object of its own."""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tvm.target import Target

    from ._types import TVMInfo


class ThreadState(threading.local):
    """What one thread is in the middle of (each thread sees its own values, ``False`` at first)."""

    def __init__(self) -> None:
        self.importing = False
        """This thread runs an activation: a warning the filters make an error is shown, not raised."""
        self.routing = False
        """This thread is inside a routed TVM build: a nested build is TVM's own."""


class Process:
    """The package's state for the whole process: each slot holds what one process shares (its
    warnings filters, its imported TVM and TileLang), never an answer that a registry keeps."""

    __slots__ = ("default_host", "thread", "tilelang_judged", "tvm_info", "warned")

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


PROCESS = Process()  # the one object of process state below the registry (see docs/architecture.md)
