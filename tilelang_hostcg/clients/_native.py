"""What :mod:`tilelang_hostcg.native` does at a call (imported at the first one): the arguments checked,
the caller's declaration judged, the registry asked where a third-party plugin can be in play (else
the compiler's own decide alone), the plan made (:mod:`._plan`), and the calls counted for reports."""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

from ..core import (
    CODEGEN_GROUP,
    NATIVE_DECLARATION,
    NativeDefaultError,
    NativeUndeclaredPluginWarning,
)
from ..diagnosis import Finding, warn
from ._interface import declaration_finding
from ._native_state import NATIVE, third_party_kinds
from ._plan import HostPlan, fingerprint_of, make_plan


def plan(target_host: Any, target: Any, codegens: Any, hooks: Any, client: str, caller: Mapping[str, Any],
         function: str) -> HostPlan:
    """See :func:`tilelang_hostcg.native.plan`: ``caller`` is the calling module's globals, ``function``
    the public function called (``plan``, ``build_host`` or ``apply_hooks``), for its messages."""
    if not isinstance(client, str) or not client:
        raise NativeDefaultError(f"tilelang_hostcg.native.{function}(client={client!r}): client must be the "
                                 "compiler's name as a non-empty string, e.g. 'tilelang' or 'tvm'")
    own_codegens = _checked_codegens(codegens, function)
    own_hooks = _checked_hooks(hooks, function)
    if target_host is None and own_codegens is not None:
        raise NativeDefaultError(f"tilelang_hostcg.native.{function}: target_host is None; pass the host target "
                                 "the compiler builds for (a Target or a kind name such as 'llvm')")
    host = _target(target_host) if target_host is not None else None  # API 1's apply_hooks passes None on
    device = _target(target) if target is not None else None
    registry = NATIVE.registry() if _served(caller, function) else None
    return make_plan(registry, host, device, own_codegens, own_hooks, client)


def _served(caller: Mapping[str, Any], function: str) -> bool:
    """Whether the caller's declaration lets its builds use the registry: none (an API 2 caller need not
    declare; an API 1 caller is warned once to), or a version this API serves. Any other value is warned
    once, and its builds are the compiler's own, as every report says."""
    module = str(caller.get("__name__"))
    declared = caller.get(NATIVE_DECLARATION)
    if declared is None:
        if function != "plan":
            warn(Finding.of(NativeUndeclaredPluginWarning, module, module=module, function=function), once=True)
        return True
    finding = declaration_finding(declared, module)
    if finding is None:
        return True
    warn(finding, once=True)
    return False


def _target(value: Any) -> Any:
    """A ``Target`` for ``value`` (a ``Target`` as it is; a kind name, JSON text or dict parsed once)."""
    target_type = getattr(sys.modules.get("tvm.target"), "Target", None)  # imported: the compiler uses TVM
    if target_type is not None and isinstance(value, target_type):
        return value
    from ..environment import parse_target
    return parse_target(value)


def _where(function: str, argument: int) -> str:
    """``tilelang_hostcg.native.plan(codegens=...)``: the argument a message names (0: codegens, 1: hooks)."""
    names = ("codegens", "hooks") if function == "plan" else ("defaults", "defaults")
    return f"tilelang_hostcg.native.{function}({names[argument]}=...)"


def _checked_codegens(codegens: Any, function: str) -> Mapping[str, Any] | None:
    """``codegens`` as given, once checked: a mapping from host kind to an object with ``build`` or a
    callable (``None`` stays ``None`` for ``apply_hooks``: no codegen is resolved)."""
    if codegens is None:
        return {} if function == "plan" else None
    if type(codegens) is not dict and not isinstance(codegens, Mapping):  # a dict: the common case, at once
        raise NativeDefaultError(f"{_where(function, 0)} got {_shown(codegens)}, not a mapping: pass a dict from host "
                                 "target kind to the compiler's codegen for it (an object with a name and build(mod, "
                                 "target_host), or a callable (mod, target_host))")
    for kind, codegen in codegens.items():
        if not isinstance(kind, str):
            raise NativeDefaultError(f"{_where(function, 0)} has the key {_shown(kind)}: the keys are host target "
                                     "kinds, as strings (e.g. 'c', 'llvm')")
        if not callable(getattr(codegen, "build", None)) and not callable(codegen):
            raise NativeDefaultError(f"{_where(function, 0)}[{kind!r}] is {_shown(codegen)}, which has no "
                                     "build(mod, target_host) and is not callable; pass an object with a name and "
                                     "build, or a callable (mod, target_host)")
    return codegens


def _checked_hooks(hooks: Any, function: str) -> Sequence[Any]:
    """``hooks`` as given, once checked: a sequence (a list or tuple, not a generator or a mapping) of
    objects with ``apply`` or callables."""
    if hooks is None:
        return ()
    if type(hooks) not in (tuple, list) and (isinstance(hooks, (str, bytes)) or not isinstance(hooks, Sequence)):
        raise NativeDefaultError(f"{_where(function, 1)} got {_shown(hooks)}, not a sequence: pass a list or tuple of "
                                 "the compiler's hooks for the device kind, in order (objects with a name and "
                                 "apply(mod, target_host, target), or callables of those arguments)")
    for i, hook in enumerate(hooks):
        if not callable(getattr(hook, "apply", None)) and not callable(hook):
            raise NativeDefaultError(f"{_where(function, 1)}[{i}] is {_shown(hook)}, which has no apply(mod, "
                                     "target_host, target) and is not callable; pass an object with a name and "
                                     "apply, or a callable")
    checked: Sequence[Any] = hooks
    return checked


def _shown(value: Any) -> str:
    """``value`` in a message: its type and a short repr."""
    try:
        text = repr(value)
    except Exception:
        text = "?"
    return f"{type(value).__name__} {text[:60]}{'...' if len(text) > 60 else ''}"


def fingerprint() -> str | None:
    """See :func:`tilelang_hostcg.native.fingerprint` (API 1): the plans, without the compiler's own, of
    every kind the third-party plugins and the program's registrations serve; ``None`` where none of
    them runs anything third-party."""
    registry = NATIVE.registry()
    if registry is None:
        return None
    from ..core import HostCodegenError
    from ..environment import default_host, parse_target
    parts = {}
    for group, kind in sorted(third_party_kinds(registry)):
        try:
            target = parse_target(kind)
        except HostCodegenError:  # a kind this TVM does not know: nothing of it ever runs here
            continue
        if group == CODEGEN_GROUP:
            found = make_plan(registry, target, None, {}, (), "")
        else:
            found = make_plan(registry, default_host(), target, None, (), "")
        if found.third_party:
            parts[f"{group}:{kind}"] = found.document()
    return fingerprint_of(parts) if parts else None
