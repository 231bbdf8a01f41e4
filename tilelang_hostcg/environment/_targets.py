"""TVM targets: the host/device rule, parsing targets, and builds by TVM global function (kind
names and their aliases: :mod:`._kinds`)."""

from __future__ import annotations

import inspect
import json
from typing import TYPE_CHECKING, Any

from ..core import PROCESS, MissingGlobalFuncError, TargetParseError, cut
from ._compiler import describe_tvm, get_global_func
from ._finding import import_tvm
from ._kinds import KIND_ALIASES, canonical_kind

if TYPE_CHECKING:
    from collections.abc import Collection

    from tvm.ir import IRModule
    from tvm.target import Target

MAX_TARGET_DEPTH = 32  # deeper JSON is a TargetParseError, never a RecursionError


def is_host_target(target: Target) -> bool:
    """Whether TVM reports ``target``'s device type as CPU (per target, not per kind)."""
    return int(target.get_target_device_type()) == 1  # DLDeviceType.kDLCPU


UNKNOWN_KIND = "unknown-kind"
"""A registration's kind that the installed TVM does not know: nothing resolves to it."""
DEVICE_KIND = "device-kind"
"""A host codegen's kind that TVM reports as a device kind: host codegens are resolved from host targets."""


def kind_misfit(kind: str, known: Collection[str], *, host_codegen: bool) -> str | None:
    """Why a registration for ``kind`` is never used with the TVM in use (``known``: its target kinds),
    :data:`UNKNOWN_KIND` or :data:`DEVICE_KIND`; ``None`` where it can be. The one rule for ``check``
    and :func:`tilelang_hostcg.testing.check_plugin`."""
    if kind not in known:
        return UNKNOWN_KIND
    if host_codegen and not is_host_target(parse_target(kind)):
        return DEVICE_KIND
    return None


def default_host() -> Target:
    """TVM's own default host target: ``llvm`` where TVM has LLVM, else ``c``."""
    made = PROCESS.default_host
    if made is None:
        tvm = import_tvm()
        from tvm.target import Target

        made = PROCESS.default_host = Target("llvm" if tvm.runtime.enabled("llvm") else "c")
    return made


def host_of(target: Target) -> Target:
    """``target`` itself for a host target, else ``target.host`` or :func:`default_host`."""
    if is_host_target(target):
        return target
    return host if (host := target.host) is not None else default_host()


def _shown_spec(spec: Any) -> str:
    """``repr(spec)`` cut to one screen line."""
    if not isinstance(spec, str):
        import reprlib

        short = reprlib.Repr()
        short.maxlevel, short.maxdict, short.maxstring, short.maxother = 3, 6, 60, 60
        return short.repr(spec)
    text = repr(spec)
    return cut(text, 100)


def _too_deep(value: Any) -> bool:
    """Whether lists and dicts in ``value`` nest deeper than :data:`MAX_TARGET_DEPTH` (iteratively)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list, tuple)):
            if depth > MAX_TARGET_DEPTH:
                return True
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return False


def parse_target(spec: Any, host: Any = None) -> Target:
    """A ``Target`` from a ``Target``, kind name, JSON text or dict; else a one-line :class:`TargetParseError`."""
    import_tvm()  # the TVM in use, waiting for another thread's import of it to finish
    from tvm.target import Target
    if isinstance(spec, Target) and host is None:
        return spec
    value: Any = spec
    too_deep = False
    if isinstance(spec, str):
        value = spec.strip()
        if not value:
            raise TargetParseError("empty target: give a kind name such as 'llvm' or TVM's JSON form such as "
                                   "'{\"kind\": \"llvm\"}'")
        if value.startswith("{"):
            try:
                value = json.loads(value)
            except json.JSONDecodeError as exc:
                raise TargetParseError(f"target {_shown_spec(spec)} is not valid JSON ({exc.msg} at position "
                                       f"{exc.pos}); write TVM's JSON form, e.g. '{{\"kind\": \"llvm\"}}'") from None
            except RecursionError:  # deeper than the interpreter's stack
                too_deep = True
    elif not isinstance(spec, (dict, Target)):
        raise TargetParseError(f"target {_shown_spec(spec)} must be a kind name, a JSON string or a dict, "
                               f"not {type(spec).__name__}")
    if too_deep or (isinstance(value, dict) and _too_deep(value)):
        raise TargetParseError(f"target {_shown_spec(spec)} nests more than {MAX_TARGET_DEPTH} levels deep; a "
                               "target's JSON form nests a few (e.g. '{\"kind\": \"cuda\", \"host\": "
                               "{\"kind\": \"llvm\"}}')")
    if isinstance(value, str):
        value = canonical_kind(value)
    elif isinstance(value, dict) and isinstance(value.get("kind"), str) and value["kind"] in KIND_ALIASES:
        value = {**value, "kind": KIND_ALIASES[value["kind"]]}
    host_value = None if host is None else parse_target(host)
    try:
        return Target(value, host=host_value) if host_value is not None else Target(value)
    except Exception as exc:  # TVM reports parse problems with several exception types
        lines = str(exc).strip().splitlines()
        reason = lines[-1] if lines else type(exc).__name__
        reason = cut(reason, 180)
        raise TargetParseError(f"TVM cannot parse target {_shown_spec(spec)}: {reason}. Use a kind name TVM "
                               "knows (llvm, c, cuda, cuda_host, rocm, ...) or its JSON form") from None


class GlobalFuncBuild:
    """A ``HostCodegenFunc`` calling TVM's global function ``global_func_name``, looked up at every call."""

    __slots__ = ("global_func_name",)

    def __init__(self, global_func_name: str) -> None:
        if not isinstance(global_func_name, str) or not global_func_name:
            raise TypeError(f"global_func_name must be a non-empty string, got {global_func_name!r}")
        self.global_func_name = global_func_name

    def __call__(self, mod: IRModule, target_host: Target) -> Any:
        func = get_global_func(self.global_func_name)
        if func is None:
            raise MissingGlobalFuncError(
                f"TVM global function {self.global_func_name!r} is not registered in the TVM in "
                f"use ({describe_tvm()}); install a TVM build that provides it, or choose a host "
                "codegen whose build function exists (see `tilelang-hostcg check`)",
                global_func_name=self.global_func_name)
        return func(mod, target_host)

    def __repr__(self) -> str:
        return f"global_func_host_codegen({self.global_func_name!r})"


def global_func_host_codegen(global_func_name: str) -> GlobalFuncBuild:
    """A build callback calling the TVM global function ``global_func_name`` when invoked."""
    return GlobalFuncBuild(global_func_name)


def required_global_funcs(codegen: object) -> tuple[str, ...]:
    """The TVM global functions a codegen needs: declared, its ``build``'s, or held by it (one level)."""
    build = getattr(codegen, "build", None)
    names = list(getattr(codegen, "global_funcs", ()))
    if isinstance(build, GlobalFuncBuild):
        names.append(build.global_func_name)
    else:
        func = getattr(build, "__func__", build)  # a bound method's function
        code, globs = getattr(func, "__code__", None), getattr(func, "__globals__", None) or {}
        held = [globs.get(n) for n in code.co_names] if code is not None else []
        for cell in getattr(func, "__closure__", None) or ():
            try:
                held.append(cell.cell_contents)
            except ValueError:  # an empty cell
                continue
        names += [v.global_func_name for v in held if isinstance(v, GlobalFuncBuild)]
    return tuple(dict.fromkeys(names))


def closure_global_func(build: Any) -> str | None:
    """The TVM global function a ``global_func_host_codegen`` closure calls (TileLang's own form of it, which
    holds the name in a closure variable), else ``None``."""
    try:
        value = inspect.getclosurevars(build).nonlocals.get("global_func_name")
    except TypeError:  # not a Python function
        return None
    return value if isinstance(value, str) else None
