"""Whether this process's compiler builds host code through the registry, and if not, why:
:func:`routing`, the one answer activation, both ``is_installed()`` and the command line's
``client`` give; :class:`Point`, an integration point checked by its shape. Cheap to import."""

from __future__ import annotations

import os
import sys
from contextlib import suppress
from dataclasses import dataclass
from importlib import import_module
from typing import Any, Literal

Client = Literal["tilelang", "tvm"]
NAMES = {"tilelang": "TileLang integration (tilelang_hostcg.tilelang)", "tvm": "TVM integration (tilelang_hostcg.tvm)"}
FAILED: dict[str, str] = {}  # the warning each client's activation gave in this process


@dataclass(frozen=True)
class Point:
    """``module``'s ``path`` (through a class for a method), of ``shape``: a function's leading
    parameters, ``dict`` or ``field`` (of a class)."""

    module: str
    path: str
    shape: tuple[str, ...] | Literal["dict", "field"]

    def __str__(self) -> str:
        return f"{self.module}.{self.path}"

    def problem(self) -> str | None:
        """What is wrong with this point in the imported compiler (missing, or of another shape)."""
        try:
            owner: object = import_module(self.module)
        except Exception as exc:  # no such module, or the compiler's own module fails: not usable
            return f"{self} ({type(exc).__name__}: {exc})"
        *owners, name = self.path.split(".")
        for part in owners:
            owner = getattr(owner, part, None)
        if self.shape == "field":
            found = name in (getattr(owner, "__dataclass_fields__", None) or {}) or hasattr(owner, name)
            return None if found else f"{self} (no such field)"
        value = vars(owner).get(name) if isinstance(owner, type) else getattr(owner, name, None)
        if value is None or self.shape == "dict":
            return None if isinstance(value, dict) else f"{self} ({'missing' if value is None else 'not a dict'})"
        import inspect
        try:
            params = inspect.signature(value).parameters
        except (TypeError, ValueError):
            return f"{self} (not a function: {type(value).__name__})"
        named = [p.name for p in params.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if named[:len(self.shape)] == list(self.shape):
            return None
        return f"{self} (parameters ({', '.join(params)}) where ({', '.join(self.shape)}) are called)"


def reaches(func: Any, target: Any) -> bool:
    """Whether ``func`` is ``target`` or wraps it (``__wrapped__``, its closure; a few levels)."""
    todo, seen = [func], 0
    while todo and seen < 32:
        func, seen = todo.pop(), seen + 1
        if func is target:
            return True
        if callable(func):
            todo.append(getattr(func, "__wrapped__", None))
            for cell in getattr(func, "__closure__", None) or ():
                with suppress(ValueError):  # an empty cell
                    todo.append(cell.cell_contents)
    return False


def owner_of(func: Any) -> str:
    """Who defined ``func``: its code file's module (``functools.wraps`` copies ``__module__``)."""
    where = getattr(getattr(func, "__code__", None), "co_filename", None)
    module = next((name for name, m in list(sys.modules.items()) if where and getattr(m, "__file__", None) == where),
                  getattr(func, "__module__", None) or type(func).__name__)
    return f"{module!r} ({where})" if where else repr(module)


@dataclass(frozen=True)
class Routing:
    """``routed`` (``None``: not known without importing), ``reason``, ``blocker`` (what keeps an
    installed plugin from being used; not the user's switch), ``pending`` (activation installs)."""

    client: Client
    routed: bool | None
    reason: str
    blocker: str | None = None
    pending: bool = False


def routing(client: Client, *, explain: bool = True, import_it: bool = True, activating: bool = False) -> Routing:
    """Whether ``client``'s host builds go through the registry in this process, and if not, why
    (``explain=False``: ``routed`` alone). ``import_it=False`` imports no compiler (``routed=None``
    where one is needed); ``activating``: activation asks (an earlier activation's failure is no answer)."""
    from _tilelang_hostcg_hook import ENV_AUTO_INSTALL, OFF
    state = (getattr(sys.modules.get(f"tilelang_hostcg.{client}"), "_STATE", None) or [None])[0]
    live: str | bool | None = None  # True: installed and called; else who replaced it; None: not installed
    if state is not None and not (client == "tvm" and "tilelang" in sys.modules):  # there TVM's route hands builds on
        routes = state.patches[:2] if client == "tilelang" else [(state.module, "tir_to_runtime", 0, state.replacement)]
        rivals = [now for owner, name, _, ours in routes if not reaches(now := getattr(owner, name, None), ours)]
        live = owner_of(rivals[0]) if rivals else True
    if live is True or not explain:
        return Routing(client, live is True, NAMES[client] if live is True else "")
    if live is not None:
        replaced = f"another package replaced the route ({live}) and does not call it"
        return Routing(client, False, replaced, replaced)
    if not activating and (os.environ.get(ENV_AUTO_INSTALL) or "").strip().lower() in OFF:
        return Routing(client, False, f"activation is off ({ENV_AUTO_INSTALL}=0)")
    from .discovery._planning import Controls, third_party_planned
    if not third_party_planned(Controls.from_environ()):
        return Routing(client, False, "no third-party plugin is installed (or the controls skip them all): the "
                                      "compiler runs stock; tilelang_hostcg.build() uses the core's codegens")
    if client == "tvm" and "tilelang" in sys.modules:
        return Routing(client, False, "TileLang is imported: the TileLang integration applies")
    if client == "tvm" and os.environ.get("TVM_DEVICE_BACKEND_AUTOLOAD", "1") == "0":
        return Routing(client, False, "TVM's autoload is off (TVM_DEVICE_BACKEND_AUTOLOAD=0), so `import tvm` does not "
                                      "activate the integration; call tilelang_hostcg.tvm.install()")
    name = {"tilelang": "TileLang", "tvm": "TVM"}[client]
    if client not in sys.modules and not import_it:
        return Routing(client, None, f"a third-party plugin is installed; whether {name} has the integration points "
                                     "shows once it is imported (`check` and `list --load` import it)")
    why = _blocker(client) or (FAILED.get(client) if not activating else None)
    if why is not None:
        return Routing(client, False, why, why)
    return Routing(client, False, f"not installed in this process (activation did not run at import of {name}, or "
                                  f"uninstall() was called); call tilelang_hostcg.{client}.install()", pending=True)


def _blocker(client: Client) -> str | None:
    """What keeps the installed compiler from being routed (a missing point, a rival), else ``None``."""
    from ._tvm import import_tvm
    try:
        if client == "tilelang":
            from .tilelang._points import check

            import_tvm()  # imports the installed TileLang, where it is not imported yet
            check()
        else:
            from .tvm._points import check as check_tvm

            check_tvm(sys.modules.get("tvm") or import_tvm(), activation=True)  # at ``import tvm``: in the making
    except Exception as exc:  # UnsupportedTileLangError, UnsupportedTVMError, TVMNotFoundError
        return str(exc)
    return None
