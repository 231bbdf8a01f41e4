"""The build driver: TVM's ``tirx.build`` with the host module built through a registry."""

from __future__ import annotations

from ._targets import default_host, is_host_target, parse_target

TYPE_CHECKING = False  # typing costs import time on the first-use path; checkers read True
if TYPE_CHECKING:
    from typing import Any

    from tvm.ir import IRModule
    from tvm.runtime import Module
    from tvm.target import Target
    from tvm.tirx import PrimFunc

    from ._registry import Registry

__all__ = ["build", "build_host", "split_host_device"]


def build_host(registry: Registry, host_mod: IRModule, target_host: Target,
               target: Target | None = None) -> Module:
    """Apply the hooks of ``target``'s kind to ``host_mod``, resolve the host codegen for
    ``target_host`` and build the host module with it."""
    return registry.build_host(host_mod, target_host, target)


def split_host_device(mod: IRModule) -> tuple[IRModule, dict[Target, IRModule]]:
    """Split ``mod`` into the host functions (whose target TVM reports as CPU) and one
    module per device target."""
    import tvm

    def is_host_func(func: Any) -> bool:
        target = func.attrs.get("target", None)
        return target is None or is_host_target(target)

    host_mod = tvm.tirx.transform.Filter(is_host_func)(mod)
    device_mod = tvm.tirx.transform.Filter(lambda func: not is_host_func(func))(mod)
    by_text: dict[str, tuple[Target, dict[Any, Any]]] = {}
    for gvar, func in device_mod.functions.items():
        target = func.attrs.get("target", None)
        entry = by_text.setdefault(str(target), (target, {}))
        entry[1][gvar] = func
    device_mods = {target: tvm.IRModule(funcs, attrs=device_mod.attrs)
                   for target, funcs in by_text.values()}
    return host_mod, device_mods


def _device_build(mod: IRModule, target: Target) -> Module:
    import tvm

    name = "target.build." + target.kind.name
    func = tvm.get_global_func(name, allow_missing=True)
    if func is None:
        raise ValueError(f"TVM global function {name!r} is not enabled in the installed TVM "
                         f"(apache-tvm {tvm.__version__}); install a TVM build with the "
                         f"{target.kind.name!r} backend")
    return func(mod, target)


def build(registry: Registry, func_or_mod: PrimFunc | IRModule, target: Any = None,
          pipeline: Any = "default") -> Module:
    """Compile a TIR ``PrimFunc``/``IRModule`` like ``tvm.tirx.build``, building the host
    module through ``registry``.

    ``target`` is a ``Target``, a kind name or TVM's JSON form (text or dict); a
    device target's host is its ``host`` or TVM's default host.
    """
    import tvm
    from tvm.target import Target
    from tvm.tirx import PrimFunc

    mod = tvm.IRModule.from_expr(func_or_mod) if isinstance(func_or_mod, PrimFunc) else func_or_mod
    if not isinstance(mod, tvm.IRModule):
        raise TypeError(f"build expects a PrimFunc or IRModule, got {type(func_or_mod).__name__}")
    if target is None:
        target = Target.current()
        if target is None:
            for func in mod.functions.values():
                target = func.attrs.get("target", None)
                if target is not None:
                    break
    target = parse_target(target if target is not None else "llvm")
    if target.host is not None:
        target_host = target.host
    elif is_host_target(target):
        target_host = target
    else:
        target_host = default_host()
    target = target.with_host(target_host)
    mod = tvm.tirx.transform.BindTarget(target)(mod)
    if pipeline is None:
        passes, finalize_host, finalize_device = tvm.tirx.get_default_tir_pipeline(target)
    else:
        passes, finalize_host, finalize_device = tvm.tirx.get_tir_pipeline(pipeline)
    mod = passes(mod)
    host_mod, device_mods = split_host_device(mod)
    host_mod = finalize_host()(host_mod)
    device_mods = {t: finalize_device()(m) for t, m in device_mods.items()}

    skip_assert = tvm.ir.transform.PassContext.current().config.get("tirx.disable_assert", False)
    device_built = []
    for dev_target, dev_mod in device_mods.items():
        if len(dev_mod.functions) != 0:
            if skip_assert:
                dev_mod = tvm.tirx.transform.SkipAssert()(dev_mod)
            device_built.append(_device_build(dev_mod, dev_target))
    host_all = tvm.IRModule({}, attrs=host_mod.attrs)
    host_all.update(host_mod)
    if skip_assert:
        host_all = tvm.tirx.transform.SkipAssert()(host_all)
    device_target = None if is_host_target(target) else target
    runtime_mod = build_host(registry, host_all, target_host, device_target)
    for dev_mod in device_built:
        runtime_mod.import_module(dev_mod)
    return runtime_mod
