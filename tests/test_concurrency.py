"""First use from many threads: one import, one answer, no deadlock."""

from __future__ import annotations

import threading

from tvm.target import Target

from tilelang_hostcg import Registry


def test_32_threads_first_resolve_import_once(modules, tmp_path):
    counter = tmp_path / "imports.txt"
    name = modules.write(f"""
        import time
        import tilelang_hostcg as h
        with open({str(counter)!r}, "a") as f:
            f.write("x")
        time.sleep(0.3)
        h.register_host_codegen("llvm", h.HostCodegen(
            "slow", h.global_func_host_codegen("target.build.llvm")))
    """)
    registry = Registry()
    registry.register_lazy_host_codegen("llvm", name)
    barrier = threading.Barrier(32)
    results: list[object] = []
    errors: list[BaseException] = []

    def worker() -> None:
        barrier.wait()
        try:
            results.append(registry.resolve_host_codegen(Target("llvm")))
        except BaseException as exc:  # collected and asserted below
            errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(32)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(t.is_alive() for t in threads), "threads deadlocked"
    assert errors == []
    assert len(results) == 32 and len({id(r) for r in results}) == 1
    assert counter.read_text() == "x"


def test_plugin_resolving_another_lazy_kind_during_import(modules):
    inner = modules.write("""
        import tilelang_hostcg as h
        h.register_host_codegen("c", h.HostCodegen("inner-c", h.global_func_host_codegen("target.build.c")))
    """)
    outer = modules.write("""
        import tilelang_hostcg as h
        from tvm.target import Target
        FOUND = h.resolve_host_codegen(Target("c")).name
        h.register_host_codegen("llvm", h.HostCodegen("outer", h.global_func_host_codegen("target.build.llvm")))
    """)
    registry = Registry()
    registry.register_lazy_host_codegen("c", inner)
    registry.register_lazy_host_codegen("llvm", outer)
    results = []

    def worker(kind: str) -> None:
        results.append(registry.resolve_host_codegen(Target(kind)).name)

    threads = [threading.Thread(target=worker, args=(k,)) for k in ("llvm", "c") * 8]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(t.is_alive() for t in threads), "threads deadlocked"
    assert sorted(results) == ["inner-c"] * 8 + ["outer"] * 8


def _resolve_in_threads(registry: Registry, kinds: list[str], timeout: float = 30) -> dict[str, str]:
    results: dict[str, str] = {}
    errors: list[BaseException] = []

    def worker(kind: str) -> None:
        try:
            results[kind] = registry.resolve_host_codegen(Target(kind)).name
        except BaseException as exc:  # collected and asserted by the caller
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(kind,), daemon=True) for kind in kinds]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=timeout)
    assert not any(t.is_alive() for t in threads), "threads deadlocked"
    assert errors == []
    return results


def test_plugin_joining_a_thread_that_resolves_another_kind(modules):
    import sys

    holder = modules.write("REGISTRY = None")
    c_module = modules.write("""
        import tilelang_hostcg as h
        h.register_host_codegen("c", h.HostCodegen("plain-c", h.global_func_host_codegen("target.build.c")))
    """)
    spawner = modules.write(f"""
        import threading
        import tilelang_hostcg as h
        from tvm.target import Target
        import {holder} as holder
        FOUND = []
        worker = threading.Thread(
            target=lambda: FOUND.append(holder.REGISTRY.resolve_host_codegen(Target("c")).name))
        worker.start()
        worker.join(10)
        ALIVE = worker.is_alive()
        h.register_host_codegen("llvm", h.HostCodegen("spawner", h.global_func_host_codegen("target.build.llvm")))
    """)
    registry = Registry()
    registry.register_lazy_host_codegen("c", c_module)
    registry.register_lazy_host_codegen("llvm", spawner)
    __import__(holder)
    sys.modules[holder].REGISTRY = registry
    # the worker thread resolves another kind of the same registry while the plugin's
    # import waits for it: it must not wait for that import
    assert _resolve_in_threads(registry, ["llvm"]) == {"llvm": "spawner"}
    assert sys.modules[spawner].ALIVE is False
    assert sys.modules[spawner].FOUND == ["plain-c"]


def test_cross_thread_import_cycle_does_not_deadlock(modules):
    first = modules.write("""
        import time
        import tilelang_hostcg as h
        from tvm.target import Target
        time.sleep(0.3)
        h.register_host_codegen("llvm", h.HostCodegen("cycle-llvm", h.global_func_host_codegen("target.build.llvm")))
        try:
            h.resolve_host_codegen(Target("c"))
        except h.HostCodegenError:
            pass
    """)
    second = modules.write("""
        import time
        import tilelang_hostcg as h
        from tvm.target import Target
        time.sleep(0.3)
        h.register_host_codegen("c", h.HostCodegen("cycle-c", h.global_func_host_codegen("target.build.c")))
        h.resolve_host_codegen(Target("llvm"))
    """)
    registry = Registry()
    registry.register_lazy_host_codegen("llvm", first)
    registry.register_lazy_host_codegen("c", second)
    assert _resolve_in_threads(registry, ["llvm", "c"]) == {"llvm": "cycle-llvm", "c": "cycle-c"}


def test_a_slow_plugin_does_not_hold_up_other_kinds(modules):
    import time

    slow = modules.write("""
        import time
        import tilelang_hostcg as h
        time.sleep(1.5)
        h.register_host_codegen("llvm", h.HostCodegen("slow", h.global_func_host_codegen("target.build.llvm")))
    """)
    fast = modules.write("""
        import tilelang_hostcg as h
        h.register_host_codegen("c", h.HostCodegen("fast", h.global_func_host_codegen("target.build.c")))
    """)
    registry = Registry()
    registry.register_lazy_host_codegen("llvm", slow)
    registry.register_lazy_host_codegen("c", fast)
    slow_thread = threading.Thread(target=registry.resolve_host_codegen, args=(Target("llvm"),))
    slow_thread.start()
    time.sleep(0.2)  # the slow import is under way
    started = time.perf_counter()
    assert registry.resolve_host_codegen(Target("c")).name == "fast"
    assert time.perf_counter() - started < 1.0
    slow_thread.join(10)
    assert registry.resolve_host_codegen(Target("llvm")).name == "slow"
