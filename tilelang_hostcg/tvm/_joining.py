"""TVM's own codegens join the registry the route builds into before that registry's first answer
for a kind, not at the first build: ``resolve_host_codegen(Target("llvm"))`` is ``apache-tvm-llvm``
before the first ``tvm.compile`` as after it. Cheap to import (at ``import tvm``): the work is done
at the registry's first decision of a kind, by :func:`._registering.join_defaults`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..clients import tilelang_takes_builds
from ..registry import REGISTRIES, ClientDefaults

if TYPE_CHECKING:
    from ..registry import Registry
    from ._route import State


class DefaultsJoiner:
    """The joiner of one ``install()`` (``state``): called by the registry before it decides a kind,
    it adds TVM's codegen of that kind (and, the first time, all of TVM's defaults) where the route
    builds into that registry; never where TileLang takes the builds or once uninstalled."""

    def __init__(self, state: State) -> None:
        self.state = state
        self.joined: frozenset[str] = frozenset()  # kinds already asked: nothing more to do for them
        requested = state.requested
        self.place: ClientDefaults = REGISTRIES.client_defaults if requested is None else requested.client_defaults

    def __call__(self, registry: Registry, kind: str) -> None:
        if kind in self.joined or not self.state.active or tilelang_takes_builds():
            return
        from ._registering import join_defaults

        if join_defaults(self.state, registry, kind):
            self.joined = self.joined | {kind}

    def start(self) -> None:
        """Join from now on (the registry's remembered answers are dropped)."""
        self.place.add(self)

    def stop(self) -> None:
        """Join no more (TVM's defaults leave the registry with ``uninstall()``)."""
        self.place.remove(self)
