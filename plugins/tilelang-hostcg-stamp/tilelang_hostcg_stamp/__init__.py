"""Example plugin for TileLang users: stamps the host code of TileLang and TVM builds.

- :mod:`tilelang_hostcg_stamp.codegen`: a ``c`` host codegen at priority 10. It adds
  the function :data:`CODEGEN_SYMBOL` to the host module, then builds it with the C
  host code generator of the TVM in use (TileLang's ``target.build.tilelang_c_host``
  where it exists, else TVM's ``target.build.c``).
- :mod:`tilelang_hostcg_stamp.llvm`: the same for ``llvm`` hosts (TVM's
  ``target.build.llvm``), where the TVM in use has LLVM: what an apache-tvm user's
  ``tvm.compile(..., target="llvm")`` builds.
- :mod:`tilelang_hostcg_stamp.hooks`: a ``cuda`` device hook that adds the function
  :data:`HOOK_SYMBOL` to the host module before host codegen.

Both symbols show in the generated C source (and LLVM IR), so the effect of each is visible. It
works with apache-tvm 0.27 and with the TVM bundled in TileLang 0.1.12-0.1.15.
Importing the package registers nothing and imports no TVM.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

__all__ = ["CODEGEN_SYMBOL", "COPIED_ATTRS", "HOOK_SYMBOL", "__version__", "add_stamp"]

CODEGEN_SYMBOL = "tilelang_hostcg_stamp_codegen"
"""The function the codegen adds to the host module."""

HOOK_SYMBOL = "tilelang_hostcg_stamp_hook"
"""The function the hook adds to the host module."""

COPIED_ATTRS = ("tirx.noalias",)
"""Function attributes the added function takes over from the module's host functions: a
code generator may keep them for the whole module (TVM's LLVM codegen does for
``tirx.noalias``), so an added function without them would change how the others are built."""


def add_stamp(mod: Any, target_host: Any, symbol: str) -> Any:
    """``mod`` with a host function called ``symbol`` added (unchanged if present).

    The function takes no argument and returns ``int32`` 0, as the host functions TVM
    builds do, so every host code generator emits it as valid code: the ``cuda_host``
    wrappers end each function with ``return 0;`` (a ``void`` function would not
    compile), and C and LLVM hosts get ``int32_t symbol(void)``. It carries the
    :data:`COPIED_ATTRS` that the module's host functions carry.
    """
    import tvm
    from tvm import tirx

    if any(gvar.name_hint == symbol for gvar in mod.functions):
        return mod
    zero = tirx.const(0, "int32")
    # apache-tvm 0.27 has a return statement; TileLang's TVM the ret intrinsic.
    body = tirx.Return(zero) if hasattr(tirx, "Return") else tirx.Evaluate(tirx.ret(zero))
    func = tirx.PrimFunc([], body, ret_type=tvm.ir.PrimType("int32"))
    func = func.with_attr("global_symbol", symbol).with_attr("target", target_host)
    for name in COPIED_ATTRS:
        value = next((f.attrs[name] for f in mod.functions.values()
                      if f.attrs is not None and name in f.attrs), None)
        if value is not None:
            func = func.with_attr(name, value)
    funcs = dict(mod.functions.items())
    funcs[tvm.ir.GlobalVar(symbol)] = func
    return tvm.IRModule(funcs, attrs=mod.attrs)
