"""tilelang-hostcg through Apache TVM's own host-codegen extension point: the global functions that
``tvm.tirx.build.tir_to_runtime`` looks up by the names ``tvm.tirx.build`` defines
(``HOST_CODEGEN_FUNC``: the host module's build; ``HOST_CODEGEN_HOOK_FUNC``: the host module prepared
for each device target). At ``import tvm`` (TVM's ``tvm.backends`` entry point), where the TVM in use
has that point, :data:`ADAPTER` registers its functions there through TVM's global function
registry, and nothing of TVM is replaced. Each call plans with :func:`tilelang_hostcg.native.plan`,
TVM's own ``codegen_build`` (``target.build.<kind>``) as the compiler's own codegen: with nothing
third-party the host module is TVM's own. Cheap to import: it runs at ``import tvm``."""

from __future__ import annotations

import sys
import threading
from typing import Any

from ._points import BUILD_MODULE, extension_point_names

CLIENT_NAME = "tvm"


class Adapter:
    """The adapter's process state: the functions it registered with TVM (``held``), under ``lock``."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.held: tuple[Any, Any] | None = None

    @staticmethod
    def names() -> tuple[str, str] | None:
        """The global function names the imported TVM's build looks up, where it has the point."""
        return extension_point_names()

    def register(self) -> bool:
        """Register the adapter's functions under TVM's names (once); whether the TVM in use has the
        point. A name another package registered already is left to it, with one warning."""
        names = self.names()
        if names is None:
            return False
        import tvm

        with self.lock:
            if self.held is not None:
                return True
            taken = [name for name in names if tvm.get_global_func(name, allow_missing=True) is not None]
            if taken:
                from ..core import ExtensionPointTakenPluginWarning
                from ..diagnosis import Finding, warn
                warn(Finding.of(ExtensionPointTakenPluginWarning, "tvm", taken=" and ".join(taken)))
                return True
            self.held = (tvm.register_global_func(names[0], host_codegen),
                         tvm.register_global_func(names[1], host_codegen_hook))
        return True

    def point(self) -> str | None:
        """Where the imported TVM calls the adapter (its functions hold TVM's names), else ``None``."""
        names, held = self.names(), self.held
        tvm = sys.modules.get("tvm")
        if names is None or held is None or tvm is None:
            return None
        now = [tvm.get_global_func(name, allow_missing=True) for name in names]
        if not all(func is not None and func.same_as(ours) for func, ours in zip(now, held, strict=True)):
            return None
        return f"{BUILD_MODULE} calls its global functions {names[0]!r} and {names[1]!r}, tilelang-hostcg's adapter"


ADAPTER = Adapter()


def host_codegen(mod: Any, target_host: Any) -> Any:
    """TVM's host build: the runtime module of host ``mod`` by the codegen planned for ``target_host``."""
    from ..native import plan
    build = sys.modules[BUILD_MODULE].codegen_build
    return plan(target_host, codegens={target_host.kind.name: build}, client=CLIENT_NAME).build(mod)


def host_codegen_hook(mod: Any, target_host: Any, target: Any) -> Any:
    """TVM's host preparation for device ``target``: host ``mod`` after the hooks planned for its kind."""
    from ..native import plan
    return plan(target_host, target, client=CLIENT_NAME).apply_hooks(mod)
