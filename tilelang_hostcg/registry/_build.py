"""The build driver: TVM's ``tirx.build`` with the host module built through a registry."""

from __future__ import annotations

import json
from importlib import import_module
from typing import TYPE_CHECKING, Any

from ..core import DeviceAsHostError, HostCodegenError
from ..environment import default_host, describe_tvm, get_global_func, import_tvm, is_host_target, parse_target

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from tvm.ir import IRModule
    from tvm.runtime import Module
    from tvm.target import Target
    from tvm.tirx import PrimFunc

    from ._registry import Registry

def split_host_device(mod: IRModule) -> tuple[IRModule, dict[Target, IRModule]]:
    """Split ``mod`` into the host functions and one module per device target."""
    import tvm
    def is_host_func(func: Any) -> bool:
        target = func.attrs.get("target", None)
        return target is None or is_host_target(target)

    host_mod = tvm.tirx.transform.Filter(is_host_func)(mod)
    device_mod = tvm.tirx.transform.Filter(lambda func: not is_host_func(func))(mod)
    by_text: dict[str, tuple[Target, dict[Any, Any]]] = {}
    for gvar, func in device_mod.functions.items():
        target = func.attrs.get("target", None)
        by_text.setdefault(str(target), (target, {}))[1][gvar] = func
    return host_mod, {target: tvm.IRModule(funcs, attrs=device_mod.attrs) for target, funcs in by_text.values()}


def _device_build(mod: IRModule, target: Target) -> Module:
    name = "target.build." + target.kind.name
    func = get_global_func(name)
    if func is None:
        raise HostCodegenError(f"TVM global function {name!r} is not enabled in the TVM in use "
                               f"({describe_tvm()}); install a TVM build with the "
                               f"{target.kind.name!r} backend")
    return func(mod, target)


def _tir_pipeline(tirx: Any, target: Target, pipeline: Any) -> Any:
    """What ``pipeline`` stands for: TVM's default for ``target`` (``None``), a pipeline by name, or itself."""
    if pipeline is None:
        return tirx.get_default_tir_pipeline(target)
    if isinstance(pipeline, str):
        return tirx.get_tir_pipeline(pipeline)
    return pipeline


def _pipeline(tvm: Any, target: Target, pipeline: Any) -> tuple[Any, Any, Any]:
    """The TIR pipeline and the host and device finalization pass factories, whatever TVM gives them."""
    tirx = tvm.tirx
    got = _tir_pipeline(tirx, target, pipeline)
    if isinstance(got, tuple) and len(got) == 3:
        return got[0], got[1], got[2]
    try:
        module: Any = import_module(tirx.__name__ + ".pipeline")
    except ImportError:
        module = None
    finalize_host, finalize_device = (getattr(module, f"finalize_{n}_passes", None) for n in ("host", "device"))
    if finalize_host is None or finalize_device is None:
        raise HostCodegenError(
            f"the TVM in use ({describe_tvm()}) gives no finalization passes for TIR pipeline "
            f"{pipeline!r} (neither from tvm.tirx.get_tir_pipeline nor in tvm.tirx.pipeline); "
            "build with apache-tvm 0.27 or TileLang 0.1.12-0.1.15")
    return got, finalize_host, finalize_device


def _device_key(target: Target) -> str:
    """A device target's text without its host (device functions lose the host in the split)."""
    return json.dumps({k: v for k, v in target.export().items() if k != "host"}, sort_keys=True, default=str)


def _host_target(target: Target) -> Target:
    if target.host is not None:
        host: Target = target.host
        if not is_host_target(host):
            raise DeviceAsHostError(
                f"host target {host.kind.name!r} of {target.kind.name!r} is a device kind: the "
                "host code runs on the CPU, so give a host kind such as 'llvm', 'c' or "
                "'cuda_host' as host (or none, for TVM's default host)", kind=host.kind.name)
        return host
    return target if is_host_target(target) else default_host()


def build(registry: Registry, func_or_mod: PrimFunc | IRModule, target: Any = None,
          pipeline: Any = "default") -> Module:
    """Compile a TIR ``PrimFunc``/``IRModule`` like ``tvm.tirx.build``, the host module through ``registry``."""
    tvm = import_tvm()
    from tvm.target import Target
    from tvm.tirx import PrimFunc
    mod = tvm.IRModule.from_expr(func_or_mod) if isinstance(func_or_mod, PrimFunc) else func_or_mod
    if not isinstance(mod, tvm.IRModule):
        raise TypeError(f"build expects a PrimFunc or IRModule, got {type(func_or_mod).__name__}")
    if target is None:
        target = next((t for t in (Target.current(), *(f.attrs.get("target", None) for f in mod.functions.values()))
                       if t is not None), None)
    target = parse_target(target if target is not None else "llvm")
    target_host = _host_target(target)
    target = target.with_host(target_host)
    mod = tvm.tirx.transform.BindTarget(target)(mod)
    passes, finalize_host, finalize_device = _pipeline(tvm, target, pipeline)
    mod = passes(mod)
    host_mod, device_mods = split_host_device(mod)
    host_mod = finalize_host()(host_mod)
    device_mods = {t: finalize_device()(m) for t, m in device_mods.items()}

    # Hooks run for every device target of the module, also one with no device function.
    hook_targets = [] if is_host_target(target) else [target]
    devices = sorted(device_mods.items(), key=lambda item: _device_key(item[0]))
    return build_split(registry, host_mod, devices, target_host, _device_build, hook_targets)


def build_split(registry: Registry, host_mod: IRModule, device_mods: Iterable[tuple[Target, IRModule]],
                target_host: Target, device_build: Callable[[IRModule, Target], Module],
                hook_targets: Iterable[Target] = ()) -> Module:
    """A split, finalized build into one runtime module, as TVM's ``tir_to_runtime`` does, host via ``registry``."""
    tvm = import_tvm()
    skip_assert = tvm.ir.transform.PassContext.current().config.get("tirx.disable_assert", False)
    device_built = []
    targets: dict[str, Target] = {}
    for target in hook_targets:
        targets.setdefault(_device_key(target), target)
    for dev_target, dev_mod in device_mods:
        if len(dev_mod.functions) != 0:
            if skip_assert:
                dev_mod = tvm.tirx.transform.SkipAssert()(dev_mod)
            device_built.append(device_build(dev_mod, dev_target))
            if dev_target.host is None:
                dev_target = dev_target.with_host(target_host)
            targets.setdefault(_device_key(dev_target), dev_target)
    host_all = tvm.IRModule({}, attrs=host_mod.attrs)
    host_all.update(host_mod)
    if skip_assert:
        host_all = tvm.tirx.transform.SkipAssert()(host_all)
    for _, dev_target in sorted(targets.items()):
        host_all = registry.apply_host_codegen_hooks(host_all, target_host, dev_target)
    # The hooks ran above; build_host resolves the codegen and checks what it returns.
    runtime_mod = registry.build_host(host_all, target_host, None)
    for dev_mod in device_built:
        runtime_mod.import_module(dev_mod)
    return runtime_mod
