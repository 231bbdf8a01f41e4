"""Lock files: the format, reading and validating, writing (as a shell redirect does), and the
drift between a lock and what is installed."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from .. import __version__
from ..core import LockFileError, cut, normalize_name
from ..diagnosis import lock_drift_problem, lock_record
from ..registry import reinstall_advice

LOCK_SCHEMA = 1
MAX_LOCK_BYTES = 16 * 1024 * 1024  # far above any lock; a file without end (/dev/zero) stops here
Drift = tuple[str, str, str | None, str | None, str | None]  # code, message, kind, distribution, version
LOCK_FIELDS: dict[str, dict[str, type]] = {
    "distributions": {"name": str, "version": str},
    "entry_points": {"group": str, "kind": str, "value": str, "distribution": str},
    "codegens": {"kind": str, "name": str, "priority": int, "distribution": str},
    "hooks": {"kind": str, "name": str, "priority": int, "distribution": str},
}
OPTIONAL_FIELDS: dict[str, dict[str, type]] = {
    "distributions": {"direct_url": dict},  # PEP 610: where it was installed from, if not an index
}


def format_lock(doc: Mapping[str, Any]) -> str:
    """Serialize a lock document for review: sorted, one record per line, ASCII only."""
    parts = [f'  "schema": {json.dumps(doc["schema"])}', f'  "command": {json.dumps(doc.get("command", "lock"))}']
    for key in LOCK_FIELDS:
        items = ",\n".join(f"    {json.dumps(item, sort_keys=True)}" for item in doc.get(key, []))
        parts.append(f'  "{key}": [\n{items}\n  ]' if items else f'  "{key}": []')
    return "{\n" + ",\n".join(parts) + "\n}\n"


def write_lock(path: str, text: str) -> bool:
    """Write ``text`` to ``path`` (a FIFO nobody reads fails, never hangs); whether it is a regular file."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NONBLOCK, 0o644)
        os.set_blocking(fd, True)  # opened without waiting for a FIFO's other end
        with open(fd, "w", encoding="utf-8") as stream:
            stream.write(text)
            regular = os.path.isfile(path)
    except OSError as exc:
        raise LockFileError(
            f"cannot write lock file {path!r}: {exc.strerror or exc}; the lock was not written. "
            "Choose a writable file with -o, or leave -o out to print the lock on stdout",
            path=path) from None
    return regular


def read_lock(path: str | Path) -> dict[str, Any]:
    """Read and validate a lock file; raises :class:`LockFileError`."""
    where = str(path)
    advice = f"regenerate it with `tilelang-hostcg lock -o {where}`"

    def bad(problem: str, fix: str = advice) -> LockFileError:
        return LockFileError(f"{problem}; {fix}", path=where)

    try:
        fd = os.open(where, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO nobody writes reads empty, never waits
        os.set_blocking(fd, True)
        with open(fd, "rb") as stream:
            data = stream.read(MAX_LOCK_BYTES + 1)
    except OSError as exc:
        raise bad(f"cannot read lock file {where!r}: {exc.strerror or exc}",
                  f"create it with `tilelang-hostcg lock -o {where}`") from None
    if len(data) > MAX_LOCK_BYTES:
        raise bad(f"lock file {where!r} is larger than {MAX_LOCK_BYTES >> 20} MiB (or has no end, as a device "
                  "or a pipe may), so it is not a lock file `tilelang-hostcg lock` wrote")
    try:
        doc = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise bad(f"lock file {where!r} is not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start})",
                  f"lock files are UTF-8 JSON, {advice}") from None
    except ValueError as exc:
        raise bad(f"lock file {where!r} is not valid JSON ({exc})") from None
    except RecursionError:
        raise bad(f"lock file {where!r} is nested too deeply to be a lock file") from None
    if not isinstance(doc, dict) or "schema" not in doc:
        raise bad(f"{where!r} is not a tilelang-hostcg lock file (no \"schema\")")
    if type(doc["schema"]) is not int or doc["schema"] != LOCK_SCHEMA:
        raise bad(f"lock file {where!r} has schema {_short(doc['schema'])}, this tilelang-hostcg {__version__} reads "
                  f"schema {LOCK_SCHEMA}")
    if doc.get("command", "lock") != "lock":
        raise bad(f"{where!r} is a {_short(doc['command'])} document, not a lock file (\"command\": \"lock\")")
    for key, fields in LOCK_FIELDS.items():
        items = doc.get(key, [])
        wanted = ", ".join(f"{f} ({'integer' if t is int else 'string'})" for f, t in fields.items())
        if not isinstance(items, list):
            raise bad(f"lock file {where!r} is corrupt: {key!r} must be a list of objects with {wanted}")
        for n, item in enumerate(items):
            if (problem := _bad_field(item, fields) or _bad_optional(item, OPTIONAL_FIELDS.get(key, {}))) is not None:
                raise bad(f"lock file {where!r} is corrupt: {key}[{n}] {problem}; each record needs {wanted}")
        doc[key] = items
    return doc


def _bad_field(item: Any, fields: Mapping[str, type]) -> str | None:
    if not isinstance(item, dict):
        return f"is {type(item).__name__}, not an object"
    for name, kind in fields.items():
        if name not in item:
            return f"has no {name!r}"
        value = item[name]
        if kind is int and type(value) is not int:  # a bool is not an integer here
            return f"has {name!r} = {_short(value)}, not an integer"
        if kind is str and not isinstance(value, str):
            return f"has {name!r} = {_short(value)}, not a string"
    return None


def _bad_optional(item: Mapping[str, Any], fields: Mapping[str, type]) -> str | None:
    """What is wrong with an optional field of a record (``direct_url``: an object), else ``None``."""
    for name, kind in fields.items():
        if name in item and not isinstance(item[name], kind):
            return f"has {name!r} = {_short(item[name])}, not an object"
    return None


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=True, default=str)
    return cut(text, 40)


def _record(key: str, record: Mapping[str, Any]) -> str:
    """A lock record in words (:mod:`..diagnosis`'s)."""
    name = record["value"] if key == "entry_points" else record["name"]
    return lock_record(key, str(record["kind"]), str(name), str(record["distribution"]))


def _identity(record: Mapping[str, Any], fields: Iterable[str]) -> tuple[str, ...]:
    """What names a lock record: its ``fields``, the distribution by its normalized name."""
    ident = []
    for field in fields:
        value = str(record[field])
        ident.append(normalize_name(value) if field == "distribution" else value)
    return tuple(ident)


def _keyed(key: str, items: Iterable[Mapping[str, Any]]) -> dict[tuple[str, ...], Mapping[str, Any]]:
    """The records of ``key`` by their identity (every field but the priority)."""
    fields = [f for f in LOCK_FIELDS[key] if f != "priority"]
    return {_identity(item, fields): item for item in items}


def lock_drift(locked: Mapping[str, Any], current: Mapping[str, Any], path: str) -> list[Drift]:
    """Differences between a lock document and the installed set."""
    old = {normalize_name(str(d["name"])): str(d["version"]) for d in locked["distributions"]}
    new = {d["name"]: d["version"] for d in current["distributions"]}
    sources = {normalize_name(str(d["name"])): d.get("direct_url") for d in locked["distributions"]}
    found = _distribution_drift(old, new, sources, path)
    for key in ("entry_points", "codegens", "hooks"):
        before, after = _keyed(key, locked[key]), _keyed(key, current[key])
        for ident in sorted(after.keys() - before.keys()):
            now = after[ident]
            if now["distribution"] in old:  # else already reported with its distribution
                found.append(("lock-added", lock_drift_problem("lock-added", path, record=_record(key, now)),
                              str(now["kind"]), str(now["distribution"]), None))
        for ident in sorted(before.keys() - after.keys()):
            was = before[ident]
            if normalize_name(str(was["distribution"])) in new:
                found.append(("lock-removed", lock_drift_problem("lock-removed", path, record=_record(key, was)),
                              str(was["kind"]), str(was["distribution"]), None))
        for ident in sorted(before.keys() & after.keys()):
            was, now = before[ident], after[ident]
            if "priority" in LOCK_FIELDS[key] and was["priority"] != now["priority"]:
                found.append(("lock-changed", lock_drift_problem(
                    "lock-changed", path, record=_record(key, now), now=str(now["priority"]),
                    was=str(was["priority"])), str(now["kind"]), str(now["distribution"]), None))
    return found


def _distribution_drift(old: Mapping[str, str], new: Mapping[str, str], sources: Mapping[str, Any],
                        path: str) -> list[Drift]:
    """Distributions added, removed or of another version than the lock's (``old``: the lock's, by name;
    ``sources``: where the lock says each was installed from)."""
    found: list[Drift] = []
    for name in sorted(new.keys() - old.keys()):
        found.append(("lock-added", lock_drift_problem("lock-added", path, distribution=name, version=new[name]),
                      None, name, new[name]))
    for name in sorted(old.keys() - new.keys()):
        repair = reinstall_advice(name, old[name], sources.get(name))
        found.append(("lock-removed", lock_drift_problem("lock-removed", path, distribution=name, version=old[name],
                                                         repair=repair), None, name, old[name]))
    for name in sorted(old.keys() & new.keys()):
        if old[name] != new[name]:
            repair = reinstall_advice(name, old[name], sources.get(name))
            found.append(("lock-changed", lock_drift_problem("lock-changed", path, distribution=name, now=new[name],
                                                             was=old[name], repair=repair), None, name, new[name]))
    return found
