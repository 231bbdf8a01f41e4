"""The shape of the package: one exception root, a small public surface, imports that go down the
layers (no circle, the start-up hook included), modules of a readable size, and one list of the
public names."""

from __future__ import annotations

import ast
import builtins
import collections
import enum
import importlib
import inspect
import pkgutil
import re
import threading
from pathlib import Path

import tilelang_hostcg
from tilelang_hostcg import HostCodegenError
from tilelang_hostcg.core import FrontDoor

ROOT = Path(tilelang_hostcg.__file__).parent
HOOK = ROOT.parent / "_tilelang_hostcg_hook.py"
SWITCH = ROOT.parent / "_tilelang_hostcg_switch.py"  # the switches the hook reads
FILES = sorted(ROOT.rglob("*.py"))


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _all_of(path: Path) -> list[str]:
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__"
                                                for t in node.targets):
            return list(importlib.import_module(_module_name(path)).__all__)
    return []


def test_every_exception_class_has_one_root_and_keeps_its_standard_type() -> None:
    found = []
    for info in pkgutil.walk_packages(tilelang_hostcg.__path__, "tilelang_hostcg."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if (cls.__module__ == module.__name__ and issubclass(cls, BaseException)
                    and not issubclass(cls, Warning)):
                found.append(cls)
    assert len(found) > 10
    outside = [cls.__qualname__ for cls in found if not issubclass(cls, HostCodegenError)]
    assert outside == []
    # Each is still the standard type it is.
    assert issubclass(tilelang_hostcg.TVMNotFoundError, ImportError)
    assert issubclass(tilelang_hostcg.PluginCallbackError, TypeError)
    assert all(issubclass(cls, ValueError) for cls in found)


def test_the_public_surface_is_small() -> None:
    public = {}
    for path in FILES:
        parts = path.relative_to(ROOT.parent).parts
        if any(p.startswith("_") and p not in ("__init__.py", "__main__.py") for p in parts):
            continue
        if path.parent != ROOT and path.name == "__init__.py" and _door(_module_name(path)) is not None:
            continue  # a layer's front door: what the package's own layers use, not the user's API
        public[_module_name(path)] = _all_of(path)
    assert sum(map(len, public.values())) <= 80, public
    for module in ("tilelang_hostcg", "tilelang_hostcg.tilelang", "tilelang_hostcg.tvm",
                   "tilelang_hostcg.testing", "tilelang_hostcg.cli.main"):
        assert public[module], module


def test_one_list_of_public_names() -> None:
    """The type checkers' block of ``__init__`` names exactly the runtime table's names."""
    tree = ast.parse((ROOT / "__init__.py").read_text())
    checked = {alias.asname or alias.name for node in ast.walk(tree) if isinstance(node, ast.If)
               for stmt in node.body if isinstance(stmt, ast.ImportFrom) for alias in stmt.names}
    assert checked == set(tilelang_hostcg.__all__) - {"__version__"}
    for name in tilelang_hostcg.__all__:
        assert getattr(tilelang_hostcg, name) is not None


def _runtime_nodes(tree: ast.AST) -> list[ast.AST]:
    """Every node of ``tree`` but those under ``if TYPE_CHECKING:`` (annotations only)."""
    found: list[ast.AST] = []
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        found.append(node)
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))
    return found


def _imports(path: Path, name: str) -> set[str]:
    """The package's modules ``path`` (module ``name``) imports when it runs: at module level and
    inside functions (a deferred import is still a dependency), not under ``TYPE_CHECKING``."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in _runtime_nodes(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            if base.startswith("tilelang_hostcg"):
                found.add(base)
                found.update(_through_door(base, a.name) for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("tilelang_hostcg"))
    return found


def _door(package: str) -> FrontDoor | None:
    """The front door of ``package`` (a layer's ``__init__``), where it has one."""
    if package not in {_module_name(p) for p in FILES if p.name == "__init__.py"}:
        return None
    door = getattr(importlib.import_module(package), "_DOOR", None)
    return door if isinstance(door, FrontDoor) else None


def _through_door(base: str, name: str) -> str:
    """What ``from base import name`` depends on: the module that defines ``name`` where ``base``
    is a front door, else ``base.name`` (a module, or nothing of the package)."""
    door = _door(base)
    defined_in = door.module_of(name) if door is not None else None
    return defined_in or f"{base}.{name}"


def _graph() -> dict[str, set[str]]:
    """Every module of the package and the start-up hook, with the package's modules each imports."""
    modules = {_module_name(p): p for p in FILES}
    modules[HOOK.stem] = HOOK
    modules[SWITCH.stem] = SWITCH
    return {name: {m for m in _imports(path, name) if m in modules and m != name}
            for name, path in modules.items()}


# The layers, bottom first (docs/architecture.md): a module imports only from its own layer and
# those below it. The package's own ``__init__`` sits at the bottom: its public names load on first
# access, by name, and it imports nothing when it runs; so does the switches' module beside it.
# The public face (``_api``, ``builtin``) sits on the registry; the clients on the face (and the
# API a compiler calls natively beside the compilers' integrations); the command line, the pytest
# plugin and the start-up hook on top.
LAYERS = (
    ("tilelang_hostcg", SWITCH.stem, "tilelang_hostcg.core"),
    ("tilelang_hostcg.diagnosis",),
    ("tilelang_hostcg.environment",),
    ("tilelang_hostcg.discovery",),
    ("tilelang_hostcg.registry",),
    ("tilelang_hostcg._api", "tilelang_hostcg.builtin"),
    ("tilelang_hostcg.clients",),
    ("tilelang_hostcg.tilelang", "tilelang_hostcg.tvm", "tilelang_hostcg.native"),
    ("tilelang_hostcg.cli", "tilelang_hostcg.testing", "tilelang_hostcg.__main__", HOOK.stem),
)


def _layer(module: str) -> int:
    """The index in :data:`LAYERS` of the longest prefix that names ``module``'s place."""
    best, found = -1, -1
    for index, places in enumerate(LAYERS):
        for place in places:
            if (module == place or module.startswith(place + ".")) and len(place) > best:
                best, found = len(place), index
    assert found >= 0, f"{module} is in no layer: add its folder to LAYERS and docs/architecture.md"
    return found


def test_every_import_goes_down_the_layers() -> None:
    upward = sorted(f"{name} (layer {_layer(name)}) imports {other} (layer {_layer(other)})"
                    for name, imported in _graph().items() for other in imported
                    if _layer(other) > _layer(name))
    assert upward == []


def test_no_import_circle() -> None:
    """No circle, counting imports inside functions and the start-up hook's."""
    graph = _graph()
    state: dict[str, int] = {}

    def visit(name: str, trail: list[str]) -> None:
        state[name] = 1
        for other in sorted(graph[name]):
            assert state.get(other) != 1, " -> ".join([*trail, name, other])
            if other not in state:
                visit(other, [*trail, name])
        state[name] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [])


def test_modules_are_of_a_readable_size() -> None:
    lengths = {p.relative_to(ROOT.parent).as_posix(): len(p.read_text().splitlines())
               for p in [*FILES, HOOK, SWITCH]}
    assert max(lengths.values()) <= 450, max(lengths.items(), key=lambda item: item[1])


def _defined_names() -> set[str]:
    """Every function, class and module-level name defined in the package and its companions."""
    names: set[str] = set()
    for path in [*FILES, HOOK, SWITCH]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


# Names from outside that the pages use: TVM's types and installed metadata's fields.
OUTSIDE_NAMES = {"Target", "IRModule", "Module", "METADATA", "Name", "Version"}


def test_the_architecture_pages_name_what_exists() -> None:
    """Every file, function and class the architecture pages name exists: a move or a rename
    that leaves them behind fails here."""
    defined = _defined_names() | set(dir(builtins)) | OUTSIDE_NAMES
    checked, missing = 0, []
    for page in ("architecture.md", "decisions.md"):
        text = (ROOT.parent / "docs" / page).read_text(encoding="utf-8")
        for name in re.findall(r"`([^`\s]+)`", text):
            if name.endswith(".py"):  # a path, or a file name found in a folder of the package
                found = (ROOT / name).exists() or (ROOT.parent / name).exists() or (
                    "/" not in name and any(path.name == name for path in FILES))
            elif re.fullmatch(r"[A-Za-z_]\w*\(\)", name):  # a function: name()
                found = name[:-2] in defined
            elif re.fullmatch(r"[A-Z][A-Za-z]+(\.\w+)?", name):  # a class, or Class.member
                found = all(part in defined for part in name.split("."))
            elif name.endswith("/") and "." not in name:  # a folder of the package, or the package
                found = (ROOT / name).is_dir() or (ROOT.parent / name).is_dir()
            else:
                continue
            checked += 1
            if not found:
                missing.append(f"{page}: `{name}`")
    assert checked >= 40  # the pages name modules, functions and classes: the test sees them
    assert missing == []


def _folder(module: str) -> str:
    """The folder of the package ``module`` lives in: a layer's (``tilelang_hostcg.registry``), or the
    package's own for the modules at its root."""
    parts = module.split(".")
    if len(parts) > 1 and (ROOT / parts[1]).is_dir():
        return ".".join(parts[:2])
    return parts[0]


def _private(module: str, folder: str) -> bool:
    """Whether ``module`` is a private module of ``folder`` (a part of its name below it starts with ``_``)."""
    below = module[len(folder):].strip(".").split(".") if module != folder else []
    return any(part.startswith("_") and not part.startswith("__") for part in below)


def test_no_module_reaches_into_another_layers_private_modules() -> None:
    """Every import from another folder goes through its front door (its ``__init__``), also under
    ``TYPE_CHECKING`` and inside functions."""
    modules = {_module_name(p): p for p in FILES}
    reaches = []
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom):
                continue
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            if not base.startswith("tilelang_hostcg"):
                continue
            targets = [base, *(f"{base}.{a.name}" for a in node.names if f"{base}.{a.name}" in modules)]
            reaches += [f"{name} imports {target} (line {node.lineno})" for target in targets
                        if _folder(target) != _folder(name) and _private(target, _folder(target))]
    assert reaches == []


def test_each_front_door_tells_type_checkers_and_the_runtime_the_same_names() -> None:
    """A layer's ``__init__`` lists each name twice, for type checkers and for its door: the two
    agree, module by module, and each name opens."""
    doors = 0
    for path in FILES:
        package = _module_name(path)
        door = _door(package) if path.name == "__init__.py" else None
        if door is None:
            continue
        doors += 1
        checked = {alias.asname or alias.name: f"{package}.{node.module}"
                   for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.If)
                   for stmt in node.body if isinstance(stmt, ast.ImportFrom)
                   for alias in stmt.names for node in [stmt]}
        annotations_only = {name for name, where in checked.items()
                            if not hasattr(importlib.import_module(where), name)}  # type aliases
        assert {name: where for name, where in checked.items() if name not in annotations_only} == {
            name: door.module_of(name) for name in door.names}, package
        module = importlib.import_module(package)
        assert all(getattr(module, name) is not None for name in door.names), package
    assert doors == 7  # the package's own (its public names) and the six layers'


# The objects that hold the process's state, each with its reason: every other module-level value is a
# constant (a table never changed after import) or a value type. Thread-locals count as state; a
# ``ContextVar`` (one value per context, the standard home of such a flag) and a lock (no data) do not.
STATE_HOLDERS = {
    "tilelang_hostcg.core._process.PROCESS": "the process's state below the registry, typed in core",
    "tilelang_hostcg.registry._shared.REGISTRIES": "what every registry shares: the default one, loads, journals",
    "tilelang_hostcg.cli._output.OUTPUT": "the command line's hold on the process's standard streams",
}
# The clients' singletons: one integration of each compiler, and the native API's use, per process.
CLIENT_SINGLETONS = {
    "tilelang_hostcg.tilelang.CLIENT", "tilelang_hostcg.tvm.CLIENT", "tilelang_hostcg.tvm._provider.ADAPTER",
    "tilelang_hostcg.clients._native_state.NATIVE",
}
MUTATORS = {"append", "extend", "insert", "add", "update", "setdefault", "pop", "popitem", "remove", "discard",
            "clear", "sort", "reverse", "appendleft", "extendleft", "__setitem__", "__delitem__"}


def _module_level_names(path: Path) -> list[str]:
    found: list[str] = []
    for node in ast.parse(path.read_text()).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) and node.value is not None else []
        found += [t.id for t in targets if isinstance(t, ast.Name)]
    return found


def _mutated_names(sources: list[str]) -> set[str]:
    """Every name of the package's code that a statement changes in place: ``X.append(...)``,
    ``X[k] = v``, ``del X[k]``, ``X += ...``, ``global X`` (also as ``module.X``)."""
    def name_of(node: ast.AST) -> str | None:
        if isinstance(node, ast.Name):
            return node.id
        return node.attr if isinstance(node, ast.Attribute) else None

    found: set[str] = set()
    for source in sources:
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
                found.add(name_of(node.func.value) or "")
            elif isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
                targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
                found.update(name_of(t.value) or "" for t in targets if isinstance(t, ast.Subscript))
                if isinstance(node, ast.AugAssign):
                    found.add(name_of(node.target) or "")
            elif isinstance(node, ast.Global):
                found.update(node.names)
    return found


def _is_value(obj: object) -> bool:
    """Whether ``obj`` (of a class of the package) is a value: a frozen dataclass, a tuple, an enum member,
    a front door (its table is fixed when its layer is imported)."""
    params = getattr(type(obj), "__dataclass_params__", None)
    return (params is not None and params.frozen) or isinstance(obj, (tuple, enum.Enum, FrontDoor))


def test_process_state_lives_on_few_objects() -> None:
    """No module keeps process state in a global of its own: every module-level container that the code
    changes, every thread-local and every object of the package that is not a value is named in
    :data:`STATE_HOLDERS` (at most three, each with its reason) or is one of the clients' singletons."""
    mutated = _mutated_names([path.read_text() for path in [*FILES, HOOK, SWITCH]])
    holders = []
    for path in FILES:
        module_name = _module_name(path)
        if module_name.endswith("__main__"):
            continue
        module = importlib.import_module(module_name)
        for name in _module_level_names(path):
            obj = getattr(module, name)
            container = isinstance(obj, (list, dict, set, bytearray, collections.deque))
            ours = type(obj).__module__.startswith("tilelang_hostcg.") and not _is_value(obj)
            if (container and name in mutated) or isinstance(obj, threading.local) or ours:
                holders.append(f"{module_name}.{name}")
    assert sorted(set(holders) - CLIENT_SINGLETONS) == sorted(STATE_HOLDERS)
    assert len(STATE_HOLDERS) <= 3 and all(STATE_HOLDERS.values())


def test_the_state_rule_sees_each_way_of_changing_a_global() -> None:
    """The rule of :func:`test_process_state_lives_on_few_objects` sees a global changed in place, by
    any of the ways, and leaves a table that is only read alone."""
    source = ("_SEEN: list[int] = []\n_BY = {}\n_N = []\n_ALL = set()\n_TABLE = {'a': 1}\n_G = None\n"
              "def f(x, mod):\n    global _G\n    _SEEN.append(x)\n    _BY[x] = 1\n    del mod._N[0]\n"
              "    _ALL |= {x}\n    return _TABLE['a']\n")
    assert _mutated_names([source]) == {"_SEEN", "_BY", "_N", "_ALL", "_G"}
