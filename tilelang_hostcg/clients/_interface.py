"""The one interface of a client (a compiler whose host builds we route: TileLang, Apache TVM):
its state, ``install``/``uninstall``, its defaults, the activation warning and whether its routes
are live. Each client implements :class:`Client`. Whether this process's compiler builds host code
through the registry, and if not, why, is :func:`routing`: the one answer activation,
``is_installed()`` and the command line's ``client`` give, asked of a :class:`Client`, knowing no
client's internals. Cheap to import (it runs at ``import tvm``)."""

from __future__ import annotations

import os
import sys
import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, ClassVar, Literal, NamedTuple

from _tilelang_hostcg_switch import ENV_AUTO_INSTALL, activation_off

from ..core import (
    CODEGEN_GROUP,
    HOOK_GROUP,
    PROCESS,
)
from ..core import NATIVE_API_VERSION as API_VERSION
from ..core import NATIVE_DECLARATION as DECLARATION
from ._routes import ClientState, Route, owner_of, reaches

if TYPE_CHECKING:
    from ..core import HostCodegen, HostCodegenHook
    from ..diagnosis import Finding
    from ..registry import Registry

ClientName = Literal["tilelang", "tvm"]


class Native(NamedTuple):
    """The compiler in use calls :mod:`tilelang_hostcg.native` itself: ``module`` declares it, for API
    ``version``; or ``point`` (``version`` ``None``): ``module`` has the compiler's own extension point
    for host codegen, and tilelang-hostcg's adapter is what it calls there."""

    module: str
    version: object
    point: str | None = None

    def problem(self) -> str | None:
        """Why the declaration is not served (a value this API does not serve): its builds are then the
        compiler's own. Else ``None`` (an extension point's adapter is written for that point)."""
        return None if self.point is not None else declaration_problem(self.version, self.module)

    def stock_reason(self) -> str | None:
        """Why its builds are the compiler's own alone though the declaration is served (the off switch,
        or nothing third-party to run), else ``None``: the rule its plans follow."""
        from ._native_state import NATIVE  # a declaring compiler imports it at its first build anyway
        if NATIVE.off():
            return f"but {ENV_AUTO_INSTALL}=0: the compiler's own codegens and hooks decide alone"
        if not NATIVE.third_party():
            return ("but no third-party plugin is installed (or the controls skip them all): the compiler's own "
                    "codegens and hooks decide alone")
        return None

    def describe(self, compiler: str) -> str:
        """``native: TileLang calls tilelang-hostcg itself (...)``, and whether a build confirmed it."""
        from ..diagnosis import native_calls  # words, where a compiler is native
        return native_calls(compiler, self.point, self.module, repr(self.version), SERVED, bool(_native_calls()))


SERVED = " and ".join(map(str, range(1, API_VERSION + 1)))  # "1 and 2": the native API versions served


def _native_calls() -> int:
    """Builds made through the native API in this process (its work module is imported at the first)."""
    work = sys.modules.get("tilelang_hostcg.clients._native_state")
    use = getattr(work, "NATIVE", None)
    return use.total() if use is not None else 0


def declaration_finding(declared: object, module: str) -> Finding | None:
    """The one rule for a compiler's declaration: ``None`` where this API serves it (an int from 1 to
    :data:`API_VERSION`), else the finding: ``module``, the value, and how it is not served (newer, no
    version, or the type it has)."""
    version = declared if isinstance(declared, int) and not isinstance(declared, bool) else None
    if version is not None and 1 <= version <= API_VERSION:
        return None
    from ..core import NativeDeclarationPluginWarning  # a warning's class: only where one is given
    from ..diagnosis import Finding  # a finding's words: only where one is given
    return Finding.of(NativeDeclarationPluginWarning, module, module=module, declared=repr(declared),
                      unserved=_how_unserved(declared, version), served=SERVED)


def _how_unserved(declared: object, version: int | None) -> str:
    """How a declaration is not served: ``newer`` than this API, ``no-version`` (an int below 1), or the
    type the declared value has."""
    if version is None:
        return type(declared).__name__
    if version > API_VERSION:
        return "newer"
    return "no-version"


def declaration_problem(declared: object, module: str) -> str | None:
    """:func:`declaration_finding` in words (``None`` where the declaration is served)."""
    finding = declaration_finding(declared, module)
    if finding is None:
        return None
    from ..diagnosis import words  # a finding's words: only where one is given
    return words(finding)


class Liveness(NamedTuple):
    """Whether the compiler's builds go through a client's routes: ``routed``, ``installed``; ``by_build``:
    the answer rests on what the last build did (else on what can be known before: each route, or
    what holds its attribute, reaches ours); ``who`` holds a route that is not used; ``unused``: the
    route the last build did not call (``unserved``: called with what it cannot serve); ``native``: the
    compiler calls the registry itself (nothing of it is replaced)."""

    routed: bool
    installed: bool
    who: str | None = None
    by_build: bool = False
    unused: str | None = None
    native: Native | None = None
    unserved: str | None = None


def tilelang_takes_builds() -> bool:
    """The one rule between the clients: where TileLang is imported, its integration builds host code,
    and TVM's route hands every build to TVM's original. A ``None`` in ``sys.modules`` (a blocked
    package) is not an import; a ``tilelang`` without TileLang's layout is not TileLang."""
    module = sys.modules.get("tilelang")
    if module is None:
        return False
    judged = PROCESS.tilelang_judged
    if judged is not None and judged[0] is module:
        return judged[1]
    from ..environment import holds_tilelang_layout  # only where a ``tilelang`` is imported
    folders = getattr(module, "__path__", None)
    answer = holds_tilelang_layout([str(f) for f in folders]) if folders else False
    PROCESS.tilelang_judged = (module, answer)
    return answer


def remove_defaults(registry: Registry, codegens: dict[str, HostCodegen], hooks: dict[str, HostCodegenHook]) -> None:
    """Remove a client's defaults from ``registry`` (only those still registered as they were)."""
    for group, held, unregister in ((CODEGEN_GROUP, codegens, registry.unregister_host_codegen),
                                    (HOOK_GROUP, hooks, registry.unregister_host_codegen_hook)):
        for kind, obj in held.items():
            if any(r.obj is obj for r in registry.registrations(group, kind)):
                unregister(kind, obj.name)
        held.clear()


class Client(ABC):
    """A compiler whose host builds can go through the registry. Subclasses say how to enter and
    leave it (:meth:`_prepare`, :meth:`_enter`), what blocks it (:meth:`blocker`) and when it stands
    aside for another client (:meth:`stands_aside`); the rest is written here once."""

    name: ClassVar[ClientName]
    title: ClassVar[str]  # "TileLang integration (tilelang_hostcg.tilelang)"
    compiler: ClassVar[str]  # "TileLang"
    native_modules: ClassVar[tuple[str, ...]]  # where the compiler declares it calls tilelang_hostcg.native

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.state: ClientState | None = None
        self.activation_warning: str | None = None  # the warning this process's activation gave

    # -- what each client says ---------------------------------------------------------------
    @abstractmethod
    def _prepare(self, registry: Registry | None) -> Any:
        """What :meth:`install` needs, found before the lock (imports the compiler; raises what blocks it)."""

    @abstractmethod
    def _enter(self, prepared: Any) -> ClientState:
        """Replace the compiler's functions (under the lock); on failure, undo and raise."""

    @abstractmethod
    def blocker(self) -> str | None:
        """What keeps the compiler in use from being routed (a missing point, a rival), else ``None``."""

    def stands_aside(self) -> str | None:
        """Why another client takes this one's builds in this process, else ``None``."""
        return None

    def compiler_switch(self) -> str | None:
        """Why the compiler's own switch keeps activation from running at its import, else ``None``."""
        return None

    @abstractmethod
    def probe_build(self) -> None:
        """Build a tiny kernel with the compiler, as a program would, where no device is needed."""

    def hints(self) -> list[str]:
        """What reading the compiler's code suggests where a build did not call the route."""
        return []

    def route_calls(self) -> int | None:
        """How many builds called this client's route so far in this process, for a probe build to
        compare: the native API's builds where the compiler calls it itself (and they can use a plugin),
        else the calls of the routes :meth:`install` put in place. ``None``: nothing routes this
        client's builds here (not installed, another client takes them, or no plugin to route to)."""
        native = self.native()
        if native is not None:
            return _native_calls() if self.live().routed else None
        state = self.state
        if state is None or self.stands_aside() is not None:
            return None
        return state.calls

    def unused_route(self) -> str | None:
        """What a probe build that did not call the route means where the compiler declares that it calls
        the native API (``None``: the routes' own words apply)."""
        native = self.native()
        if native is None:
            return None
        where = native.point or f"{native.module} declares native API {native.version!r}"
        return (f"the probe build did not call tilelang-hostcg: {where}, but {self.compiler}'s build never called "
                "it, so plugins are not used")

    @contextmanager
    def running_probe(self) -> Iterator[None]:
        """:meth:`probe_build` runs in the block: what it shows is ``check``'s to report, not warned of."""
        state = self.state
        if state is None:
            yield
            return
        with state.running_probe():
            yield

    # -- written once ---------------------------------------------------------------------
    def install(self, *, registry: Registry | None = None) -> None:
        """Route the compiler's host builds through ``registry`` (default: the default registry).
        Idempotent; a failure changes nothing."""
        if self.state is not None:
            return
        native = self.native()
        if native is None and self.join_extension_point():
            native = self.native()
            if native is None:  # the point is another package's (its warning said so): nothing to patch
                return
        if native is not None:
            from ..core import PatchesNothingPluginWarning  # a warning's class: only where one is given
            from ..diagnosis import Finding, warn  # a finding's words: only where one is given
            warn(Finding.of(PatchesNothingPluginWarning, self.name, client=self.name, problem=native.problem(),
                            native=native.describe(self.compiler), wording=("native",)), once=True)
            return
        prepared = self._prepare(registry)
        with self.lock:
            if self.state is None:
                self.state = self._enter(prepared)

    def uninstall(self) -> list[str]:
        """Undo :meth:`install`: each replaced attribute that is still ours gets the compiler's
        original back; one another package has set since (wrapping ours, or in its place) is theirs
        and left as it is, with one warning each (our route inside a wrapper hands every call to the
        original from now on). The defaults leave the registry. Returns the warnings; no-op when not
        installed."""
        with self.lock:
            state, self.state = self.state, None
            if state is None:
                return []
            state.active = False
            left = []
            for route in reversed(state.routes):
                now = route.current()
                if now is route.ours:
                    setattr(route.owner, route.name, route.original)
                elif now is not route.original:
                    left.append(self._left(route, now))
            if state.registry is not None:
                remove_defaults(state.registry, state.codegens, state.hooks)
        if not left:
            return []
        from ..diagnosis import warn  # a finding's words: only where one is given
        return [warn(finding) for finding in left]

    def _left(self, route: Route, now: Any) -> Finding:
        """That :meth:`uninstall` leaves ``route``'s attribute (``now``, another package's) as it is, and
        whether ``now`` wraps our replacement (which from now on hands every call to the original)."""
        from ..core import LeftInPlacePluginWarning  # a warning's class: only where one is given
        from ..diagnosis import Finding  # a finding's words: only where one is given
        wraps = "wraps" if reaches(now, route.ours, route.original) else None
        return Finding.of(LeftInPlacePluginWarning, self.name, client=self.name, point=route.path(),
                          holder=owner_of(now), wraps=wraps, compiler=self.compiler, function=route.name)

    def live(self) -> Liveness:
        """Whether the compiler's builds go through our routes (see :class:`Liveness`), or it calls the
        registry itself: for each route, what the last build did while the same object held its
        attribute, else whether what holds it reaches ours."""
        native = self.native()
        if native is not None:
            routed = native.problem() is None and native.stock_reason() is None
            return Liveness(routed, installed=False, native=native)
        state = self.state
        if state is None:
            return Liveness(False, installed=False)
        judged_by_build = []
        last = state.last_build if state.last_build is not None else ()
        for route in state.carrying():
            now = route.current()
            seen = state.last_build is not None and now is route.held  # the object itself, never an id
            judged_by_build.append(seen)
            who = None if now is route.ours else owner_of(now)
            served = route in last and route.unserved is None
            if seen and not served:
                return Liveness(False, installed=True, who=who, by_build=True, unused=route.path(),
                                unserved=route.unserved if route in last else None)
            if not seen and now is not route.ours and not reaches(now, route.ours, route.original):
                return Liveness(False, installed=True, who=who)
        return Liveness(True, installed=True, by_build=bool(judged_by_build) and all(judged_by_build))

    def native(self) -> Native | None:
        """The compiler in use calls the registry itself: which of its imported modules declares it, or
        the compiler's own extension point that calls tilelang-hostcg's adapter."""
        for name in self.native_modules:
            module = sys.modules.get(name)
            declared = getattr(module, "__dict__", {}).get(DECLARATION) if module is not None else None
            if declared is not None:
                return Native(name, declared)
        return self.extension_point()

    def extension_point(self) -> Native | None:
        """The imported compiler's own host-codegen extension point, where it calls our adapter."""
        return None

    def join_extension_point(self) -> bool:
        """Put our adapter in the compiler's own extension point; whether the compiler has one."""
        return False

    def is_installed(self) -> bool:
        """Whether :meth:`install` is in effect (or the compiler calls the registry itself) and the
        compiler's host builds go through the registry."""
        return self.live().routed is True

    def activation_failed(self, exc: BaseException) -> None:
        """Activation at ``import <compiler>`` failed with ``exc``: one warning (never raising), kept
        for this process's client line."""
        from ..diagnosis import warn_activation_failed  # a finding's words: only where one is given
        self.activation_warning = warn_activation_failed(self.compiler, exc)


NO_PLUGIN = ("no third-party plugin is installed (or the controls skip them all): the compiler runs stock; "
             "tilelang_hostcg.build() uses the core's codegens")


class Routing(NamedTuple):
    """``routed`` (``None``: not known yet — nothing imported), ``reason``, ``blocker`` (what keeps an
    installed plugin from being used; not the user's switch), ``pending`` (activation installs);
    ``by_build``: ``routed`` is what the last build did (else what can be known before one)."""

    client: ClientName
    routed: bool | None
    reason: str
    blocker: str | None = None
    pending: bool = False
    by_build: bool = False


def routing(client: Client, *, import_it: bool = True, activating: bool = False) -> Routing:
    """Whether ``client``'s host builds go through the registry in this process, and if not, why.
    ``import_it=False`` imports no compiler (``routed=None`` where one is needed); ``activating``:
    activation asks (an earlier activation's failure is no answer)."""
    name = client.name
    live = client.live()
    if live.native is not None:
        return _native(client, live.native)
    aside = client.stands_aside()
    if live.installed and aside is None:
        if live.routed:
            return Routing(name, True, client.title, by_build=live.by_build)
        if live.unused is not None:
            unused = _unused(live, client.compiler)
            return Routing(name, False, unused, unused, by_build=True)
        replaced = f"another package replaced the route ({live.who}) and does not call it"
        return Routing(name, False, replaced, replaced)
    if not activating and activation_off(os.environ):
        return Routing(name, False, f"activation is off ({ENV_AUTO_INSTALL}=0)")
    from ..discovery import Controls, third_party_planned
    if not third_party_planned(Controls.from_environ()):
        return Routing(name, False, NO_PLUGIN)
    if aside is not None:
        return Routing(name, False, aside)
    switched = client.compiler_switch()
    if switched is not None:
        return Routing(name, False, switched)
    if name not in sys.modules and not import_it:
        return Routing(name, None, f"`import {name}` turns it on, as a third-party plugin is installed; "
                                   "`list --load` says for sure")
    why = client.blocker()
    if why is None and not activating:
        why = client.activation_warning
    if why is not None:
        return Routing(name, False, why, why)
    return Routing(name, False, f"not installed in this process (activation did not run at import of "
                                f"{client.compiler}, or uninstall() was called); call "
                                f"tilelang_hostcg.{name}.install()", pending=True)


def _unused(live: Liveness, compiler: str) -> str:
    """Why the last build did not use the route ``live.unused``: arguments it was not written for,
    another package holding it, or the compiler's code that no longer reaches it."""
    if live.unserved is not None:
        return (f"the last build called the route {live.unused} with {live.unserved}, which it was not written "
                f"for: {compiler}'s own function served it, so plugins are not used")
    if live.who is not None:
        return (f"the last build did not call the route {live.unused}: {live.who} holds it and does not call it, "
                "so plugins are not used")
    return (f"the last build did not call the route {live.unused}: {compiler}'s code no longer reaches it, so "
            "plugins are not used")


def _native(client: Client, native: Native) -> Routing:
    """The answer for a compiler that calls the registry itself: nothing to install; routed where its
    plans can run something third-party (the rule :mod:`._native` plans by)."""
    described = native.describe(client.compiler)
    problem = native.problem()
    if problem is not None:
        return Routing(client.name, False, problem, problem)
    stock = native.stock_reason()
    if stock is not None:
        return Routing(client.name, False, f"{described}; {stock}")
    return Routing(client.name, True, described)
