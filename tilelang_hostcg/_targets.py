"""TVM target helpers: kind aliases, the host/device rule, parsing targets given as text, and
build callbacks backed by TVM global functions (TVM is imported inside the functions, never
at module import)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from ._errors import MissingGlobalFuncError, TargetParseError
from ._tvm import describe_tvm, get_global_func, import_tvm

if TYPE_CHECKING:
    from tvm.ir import IRModule
    from tvm.target import Target

__all__ = ["GlobalFuncBuild", "KIND_ALIASES", "canonical_kind", "default_host", "global_func_host_codegen",
           "host_of", "is_host_target", "kind_spellings", "parse_target", "required_global_func",
           "required_global_funcs"]

KIND_ALIASES: dict[str, str] = {"hip": "rocm"}
"""Kind names that mean the same device: TileLang says ``hip``, TVM 0.27 says ``rocm``."""

_CPU_DEVICE_TYPE = 1  # DLDeviceType.kDLCPU
_default_host: list[Target] = []


def canonical_kind(kind: str) -> str:
    """The registry key of a kind name (``hip`` and ``rocm`` share one key)."""
    return KIND_ALIASES.get(kind, kind)


def kind_spellings(kind: str) -> tuple[str, ...]:
    """Every spelling of ``kind``, canonical first (``rocm`` -> ``("rocm", "hip")``)."""
    canon = canonical_kind(kind)
    return (canon, *sorted(k for k, v in KIND_ALIASES.items() if v == canon))


def is_host_target(target: Target) -> bool:
    """Whether TVM reports ``target``'s device type as CPU (``llvm``, ``c``, ``cuda_host``...),
    per target: ``{"kind": "c", "target_device_type": 2}`` is a device target."""
    return int(target.get_target_device_type()) == _CPU_DEVICE_TYPE


def default_host() -> Target:
    """TVM's own default host target: ``llvm`` where TVM has LLVM, else ``c``."""
    if not _default_host:
        tvm = import_tvm()
        from tvm.target import Target

        _default_host.append(Target("llvm" if tvm.runtime.enabled("llvm") else "c"))
    return _default_host[0]


def host_of(target: Target) -> Target:
    """The host target for ``target``: itself for a host target, else ``target.host`` or
    :func:`default_host`."""
    if is_host_target(target):
        return target
    host = target.host
    return host if host is not None else default_host()

MAX_TARGET_DEPTH = 32
"""How deeply a target's JSON form may nest (TVM's targets nest a few levels: a host, a
list of keys); deeper is a :class:`TargetParseError`, never a ``RecursionError``."""


def _shown_spec(spec: Any) -> str:
    """``repr(spec)`` for a message, cut to one screen line (a dict at a few levels)."""
    if not isinstance(spec, str):
        import reprlib

        short = reprlib.Repr()
        short.maxlevel, short.maxdict, short.maxstring, short.maxother = 3, 6, 60, 60
        return short.repr(spec)
    text = repr(spec)
    return text if len(text) <= 120 else f"{text[:100]}... ({len(text)} characters)"


def _depth(value: Any, limit: int) -> int:
    """How deeply ``value`` (lists and dicts) nests, counted iteratively up to ``limit + 1``."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list, tuple)):
            deepest = max(deepest, depth)
            if deepest > limit:
                break
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def parse_target(spec: Any, host: Any = None) -> Target:
    """A ``Target`` from a ``Target``, kind name (``hip`` for TVM's ``rocm``), JSON text or dict;
    raises :class:`TargetParseError` (a ``ValueError``) saying in one line what is wrong."""
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
    if too_deep or (isinstance(value, dict) and _depth(value, MAX_TARGET_DEPTH) > MAX_TARGET_DEPTH):
        raise TargetParseError(f"target {_shown_spec(spec)} nests more than {MAX_TARGET_DEPTH} levels deep; a "
                               "target's JSON form nests a few (e.g. '{\"kind\": \"cuda\", \"host\": "
                               "{\"kind\": \"llvm\"}}')")
    if isinstance(value, str):  # TileLang's device kind 'hip' is TVM 0.27's 'rocm'
        value = KIND_ALIASES.get(value, value)
    elif isinstance(value, dict) and isinstance(value.get("kind"), str) and value["kind"] in KIND_ALIASES:
        value = {**value, "kind": KIND_ALIASES[value["kind"]]}
    host_value = None if host is None else parse_target(host)
    try:
        return Target(value, host=host_value) if host_value is not None else Target(value)
    except Exception as exc:  # TVM reports parse problems with several exception types
        first_line = str(exc).strip().splitlines()
        reason = first_line[-1] if first_line else type(exc).__name__
        if len(reason) > 200:
            reason = reason[:180] + "..."
        raise TargetParseError(f"TVM cannot parse target {_shown_spec(spec)}: {reason}. Use a kind name TVM "
                               "knows (llvm, c, cuda, cuda_host, rocm, ...) or its JSON form") from None


class GlobalFuncBuild:
    """A ``HostCodegenFunc`` calling TVM's global function ``global_func_name``, looked up at
    every call as in TileLang (a later ``register_global_func(..., override=True)`` counts).
    Creating one imports no TVM; :meth:`exists` checks the function without building."""

    __slots__ = ("global_func_name",)

    def __init__(self, global_func_name: str) -> None:
        if not isinstance(global_func_name, str) or not global_func_name:
            raise TypeError(f"global_func_name must be a non-empty string, got {global_func_name!r}")
        self.global_func_name = global_func_name

    def lookup(self) -> Any:
        """The TVM function; raises :class:`MissingGlobalFuncError` naming it and the TVM in use."""
        func = get_global_func(self.global_func_name)
        if func is None:
            raise MissingGlobalFuncError(
                f"TVM global function {self.global_func_name!r} is not registered in the TVM in "
                f"use ({describe_tvm()}); install a TVM build that provides it, or choose a host "
                "codegen whose build function exists (see `tilelang-hostcg check`)",
                global_func_name=self.global_func_name)
        return func

    def exists(self) -> bool:
        """Whether the TVM in use provides the function."""
        return get_global_func(self.global_func_name) is not None

    def __call__(self, mod: IRModule, target_host: Target) -> Any:
        return self.lookup()(mod, target_host)

    def __repr__(self) -> str:
        return f"global_func_host_codegen({self.global_func_name!r})"


def global_func_host_codegen(global_func_name: str) -> GlobalFuncBuild:
    """A build callback calling the TVM global function ``global_func_name`` when invoked."""
    return GlobalFuncBuild(global_func_name)


def required_global_func(build: object) -> str | None:
    """The TVM global function a codegen's ``build`` is, when it is a :func:`global_func_host_codegen`."""
    return build.global_func_name if isinstance(build, GlobalFuncBuild) else None


def _wrapped(build: object) -> list[str]:
    """The :func:`global_func_host_codegen` callbacks a plain function ``build`` calls through a
    module global or a closure variable of its own (one level: not through further functions)."""
    func = getattr(build, "__func__", build)  # a bound method's function
    code, found = getattr(func, "__code__", None), []
    if code is not None:
        globs = getattr(func, "__globals__", None) or {}
        found += [v.global_func_name for n in code.co_names
                  if isinstance(v := globs.get(n), GlobalFuncBuild)]
    for cell in getattr(func, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if isinstance(value, GlobalFuncBuild):
            found.append(value.global_func_name)
    return found


def required_global_funcs(codegen: object) -> tuple[str, ...]:
    """The TVM global functions a codegen needs to build, in order, without repeats: those it
    declares (``HostCodegen(..., global_funcs=...)``), its ``build`` when that is a
    :func:`global_func_host_codegen`, and the ones such a ``build`` wraps (a function calling a
    :func:`global_func_host_codegen` held in a module global or a closure variable). What a
    build looks up otherwise (``tvm.get_global_func``, a callback made inside the call, a
    helper function's callbacks) cannot be seen: declare it."""
    build = getattr(codegen, "build", None)
    own = required_global_func(build)
    names = [*getattr(codegen, "global_funcs", ()), *([own] if own else _wrapped(build))]
    return tuple(dict.fromkeys(names))
