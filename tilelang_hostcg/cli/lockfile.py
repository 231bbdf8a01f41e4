"""Lock files: the document's file format, reading and validating it, writing it, and the
drift between a lock and what is installed. Only :func:`read_lock` and :func:`write_lock`
touch the file system: a lock is written as a shell redirect writes it (never renamed over
anything), and a FIFO with nobody at the other end fails or reads empty, never hangs.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .. import __version__
from .._errors import LockFileError
from .._repair import reinstall
from ..discovery import normalize_name

__all__ = ["LOCK_SCHEMA", "format_lock", "lock_drift", "read_lock", "write_lock"]

LOCK_SCHEMA = 1
"""Version of the lock-file format written by ``lock``."""

MAX_LOCK_BYTES = 16 * 1024 * 1024
"""The largest lock file :func:`read_lock` reads (a lock of thousands of plugins is well
under a megabyte): a file without end (``/dev/zero``) or a huge one is an error, never
memory exhausted."""

Doc = dict[str, Any]
Drift = tuple[str, str, str | None, str | None, str | None]  # code, message, kind, distribution, version

# Each list of a lock document, and the type of each field of its records.
LOCK_FIELDS: dict[str, dict[str, type]] = {
    "distributions": {"name": str, "version": str},
    "entry_points": {"group": str, "kind": str, "value": str, "distribution": str},
    "codegens": {"kind": str, "name": str, "priority": int, "distribution": str},
    "hooks": {"kind": str, "name": str, "priority": int, "distribution": str},
}


def format_lock(doc: Mapping[str, Any]) -> str:
    """Serialize a lock document for review: sorted, one record per line, ASCII only."""
    parts = [f'  "schema": {json.dumps(doc["schema"])}', f'  "command": {json.dumps(doc.get("command", "lock"))}']
    for key in LOCK_FIELDS:
        items = ",\n".join(f"    {json.dumps(item, sort_keys=True)}" for item in doc.get(key, []))
        parts.append(f'  "{key}": [\n{items}\n  ]' if items else f'  "{key}": []')
    return "{\n" + ",\n".join(parts) + "\n}\n"


def _open(path: str, flags: int) -> int:
    """A descriptor of ``path``, blocking, opened without waiting for a FIFO's other end."""
    fd = os.open(path, flags | os.O_NONBLOCK, 0o644)
    os.set_blocking(fd, True)
    return fd


def write_lock(path: str, text: str) -> bool:
    """Write ``text`` to ``path`` as a shell redirect does; returns whether ``path`` is a
    regular file. Raises :class:`LockFileError` when the write fails (a folder, a FIFO
    nobody reads, no space left, ...)."""
    try:
        with open(_open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "w",
                  encoding="utf-8") as stream:
            stream.write(text)
            regular = os.path.isfile(path)
    except OSError as exc:
        raise LockFileError(
            f"cannot write lock file {path!r}: {exc.strerror or exc}; the lock was not written. "
            "Choose a writable file with -o, or leave -o out to print the lock on stdout",
            path=path) from None
    return regular


def read_lock(path: str | Path) -> Doc:
    """Read and validate a lock file written by ``lock``; raises :class:`LockFileError`.

    UTF-8 JSON: an object with ``"schema": 1``, an optional ``"command": "lock"`` and the
    optional lists of :data:`LOCK_FIELDS`, their fields of those types; other keys ignored.
    """
    where = str(path)
    advice = f"regenerate it with `tilelang-hostcg lock -o {where}`"
    try:
        with open(_open(where, os.O_RDONLY), "rb") as stream:
            data = stream.read(MAX_LOCK_BYTES + 1)
    except OSError as exc:
        raise LockFileError(f"cannot read lock file {where!r}: {exc.strerror or exc}; create it "
                            f"with `tilelang-hostcg lock -o {where}`", path=where) from None
    if len(data) > MAX_LOCK_BYTES:
        raise LockFileError(
            f"lock file {where!r} is larger than {MAX_LOCK_BYTES // (1024 * 1024)} MiB (or has "
            f"no end, as a device may), so it is not a lock file written by `tilelang-hostcg "
            f"lock`; {advice}", path=where)
    try:
        doc = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise LockFileError(
            f"lock file {where!r} is not UTF-8 text (byte {data[exc.start]:#04x} at offset "
            f"{exc.start}); lock files are UTF-8 JSON, {advice}", path=where) from None
    except ValueError as exc:
        raise LockFileError(f"lock file {where!r} is not valid JSON ({exc}); {advice}",
                            path=where) from None
    except RecursionError:
        raise LockFileError(f"lock file {where!r} is nested too deeply to be a lock file; "
                            f"{advice}", path=where) from None
    _validate(doc, where, advice)
    return doc  # type: ignore[no-any-return]


def _validate(doc: Any, where: str, advice: str) -> None:
    if not isinstance(doc, dict) or "schema" not in doc:
        raise LockFileError(f"{where!r} is not a tilelang-hostcg lock file (no \"schema\"); "
                            f"{advice}", path=where)
    if type(doc["schema"]) is not int or doc["schema"] != LOCK_SCHEMA:
        raise LockFileError(f"lock file {where!r} has schema {_short(doc['schema'])}, this "
                            f"tilelang-hostcg {__version__} reads schema {LOCK_SCHEMA}; {advice}",
                            path=where)
    if doc.get("command", "lock") != "lock":
        raise LockFileError(f"{where!r} is a {_short(doc['command'])} document, not a lock file "
                            f"(\"command\": \"lock\"); {advice}", path=where)
    for key, fields in LOCK_FIELDS.items():
        items = doc.get(key, [])
        wanted = ", ".join(f"{f} ({'integer' if t is int else 'string'})"
                           for f, t in fields.items())
        if not isinstance(items, list):
            raise LockFileError(f"lock file {where!r} is corrupt: {key!r} must be a list of "
                                f"objects with {wanted}; {advice}", path=where)
        for n, item in enumerate(items):
            bad = _bad_field(item, fields)
            if bad is not None:
                raise LockFileError(f"lock file {where!r} is corrupt: {key}[{n}] {bad}; each "
                                    f"record needs {wanted}; {advice}", path=where)
        doc[key] = items


def _bad_field(item: Any, fields: Mapping[str, type]) -> str | None:
    if not isinstance(item, dict):
        return f"is {type(item).__name__}, not an object"
    for name, kind in fields.items():
        if name not in item:
            return f"has no {name!r}"
        value = item[name]
        if type(value) is not int if kind is int else not isinstance(value, str):
            return f"has {name!r} = {_short(value)}, not {'an integer' if kind is int else 'a string'}"
    return None


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=True, default=str)
    return text if len(text) <= 40 else text[:40] + "..."


def _lock_item(key: str, item: Mapping[str, Any]) -> str:
    if key == "entry_points":
        return f"'{item['kind']} = {item['value']}' of {item['distribution']!r}"
    return f"{item['name']!r} for kind {item['kind']!r} from {item['distribution']!r}"


def lock_drift(locked: Mapping[str, Any], current: Mapping[str, Any], path: str,
               ) -> list[Drift]:
    """Differences between a lock document and the installed set (``lock-added``,
    ``lock-removed``, ``lock-changed``)."""
    found: list[Drift] = []
    fix = f"if the change is intended, update the lock with `tilelang-hostcg lock -o {path}`"
    old = {normalize_name(str(d["name"])): str(d["version"]) for d in locked["distributions"]}
    new = {d["name"]: d["version"] for d in current["distributions"]}
    for name in sorted(new.keys() - old.keys()):
        found.append(("lock-added", f"distribution {name!r} {new[name]} is installed but not in "
                      f"the lock file {path!r}; uninstall it, or {fix}", None, name, new[name]))
    for name in sorted(old.keys() - new.keys()):
        found.append(("lock-removed", f"distribution {name!r} {old[name]} is in the lock file "
                      f"{path!r} but not installed; `{reinstall(name, old[name])}`, or {fix}",
                      None, name, old[name]))
    for name in sorted(old.keys() & new.keys()):
        if old[name] != new[name]:
            found.append(("lock-changed", f"distribution {name!r} is {new[name]} but the lock "
                          f"file {path!r} has {old[name]}; `{reinstall(name, old[name])}`, "
                          f"or {fix}", None, name, new[name]))
    for key, noun in (("entry_points", "entry point"), ("codegens", "host codegen"),
                      ("hooks", "host codegen hook")):
        found.extend(_record_drift(key, noun, locked[key], current[key], old, new, path, fix))
    return found


def _keyed(key: str, items: Iterable[Mapping[str, Any]]) -> dict[tuple[str, ...], Mapping[str, Any]]:
    ident = [f for f in LOCK_FIELDS[key] if f != "priority"]
    return {tuple(str(i[f]) if f != "distribution" else normalize_name(str(i[f]))
                  for f in ident): i for i in items}


def _record_drift(key: str, noun: str, locked: Iterable[Mapping[str, Any]],
                  current: Iterable[Mapping[str, Any]], old: Mapping[str, str],
                  new: Mapping[str, str], path: str, fix: str,
                  ) -> list[Drift]:
    found: list[Drift] = []
    before, after = _keyed(key, locked), _keyed(key, current)
    for ident_key in sorted(after.keys() - before.keys()):
        item = after[ident_key]
        if item["distribution"] in old:  # else already reported with its distribution
            found.append(("lock-added", f"{noun} {_lock_item(key, item)} is not in the lock "
                          f"file {path!r}; {fix}", str(item["kind"]), str(item["distribution"]),
                          None))
    for ident_key in sorted(before.keys() - after.keys()):
        item = before[ident_key]
        if normalize_name(str(item["distribution"])) in new:
            found.append(("lock-removed", f"{noun} {_lock_item(key, item)} in the lock file "
                          f"{path!r} is gone; {fix}", str(item["kind"]),
                          str(item["distribution"]), None))
    if "priority" in LOCK_FIELDS[key]:
        for ident_key in sorted(before.keys() & after.keys()):
            was, now = before[ident_key], after[ident_key]
            if was["priority"] != now["priority"]:
                found.append(("lock-changed", f"{noun} {_lock_item(key, now)} has priority "
                              f"{now['priority']}, the lock file {path!r} has {was['priority']}; "
                              f"{fix}", str(now["kind"]), str(now["distribution"]), None))
    return found
