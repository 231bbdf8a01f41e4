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
