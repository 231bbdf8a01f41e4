"""The commands: each prints the document its module builds and returns the exit status."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from ..core import CODEGEN_GROUP, HOOK_GROUP, UsageError
from ._client import client_text
from ._output import (
    PROG,
    describe_distribution,
    describe_flags,
    document_is,
    document_stream,
    err,
    out,
    quietly,
    shown,
    warn_all,
    write_json,
    write_traceback,
)

if TYPE_CHECKING:
    import argparse

    from ._output import Doc

def cmd_list(args: argparse.Namespace) -> int:
    """``list``: every advertised kind with its entry points."""
    from ..diagnosis import duplicate_distribution_problem
    from ._report import describe_state, list_document
    if args.traceback and not args.load:
        raise UsageError("--traceback shows the traceback of a plugin that failed to load; plain list loads none: "
                         "add --load", prog=f"{PROG} list")
    doc = quietly(list_document, load=args.load)
    if args.json:
        write_json(doc)
        return 0
    out(f"TVM in use: {doc['tvm']['describe']}")
    out(client_text(doc))
    for title, key, noun, group in (("Host codegens", "codegens", "codegen", CODEGEN_GROUP),
                                    ("Host codegen hooks", "hooks", "hook", HOOK_GROUP)):
        out(f"{title} (entry-point group {group}):")
        if not doc[key]:
            out("  (none)")
        for kind in doc[key]:
            out(f"  {kind['kind']}" + ("  [core kind, with additions]" if kind["extends_core"] else ""))
            for entry in kind["entry_points"]:
                out(f"    {describe_distribution(entry)}  {entry['entry_point']}  {describe_state(entry)}"
                    f"{describe_flags(entry)}")
                write_traceback(entry, args.traceback, "        ")
            for reg in kind["registrations"] or ():
                build = reg.get("cannot_build") or reg.get("can_build")
                out(f"      {noun} {reg['name']!r} priority {reg['priority']}  from {describe_distribution(reg)}"
                    f"{describe_flags(reg)}" + (f"  {build}" if build else ""))
    for dup in doc["duplicates"]:
        err(f"warning: {duplicate_distribution_problem(dup['distribution'], dup['locations'])}")
    warn_all(doc["warnings"])
    if doc["note"]:
        err(f"note: {doc['note']}")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    """``check``: load every plugin and report every problem; 1 when there is any."""
    from ._checks import check_document, printed_text, split_kinds
    from ._probe_process import probe_bound
    for values, option in ((args.require, "--require"), (args.require_hook, "--require-hook")):
        for value in values:  # ``--require ,`` would otherwise pass while requiring nothing
            if not split_kinds([value]):
                raise UsageError(f"{option} {value!r} names no kind; give a kind name such as "
                                 f"{'llvm' if option == '--require' else 'cuda'} (see '{PROG} check --help')",
                                 prog=f"{PROG} check")
    bound = probe_bound(args.probe_timeout)
    doc = quietly(check_document, require=args.require, require_hooks=args.require_hook, lock=args.lock,
                  strict=args.strict, probe_bound=bound)
    if args.json:
        write_json(doc)
        return 0 if doc["ok"] else 1
    kinds = doc["kinds"]
    out(f"TVM in use: {doc['tvm']['describe']}")
    out(client_text(doc))
    out(f"Checked {len(doc['distributions'])} distribution(s); host kinds: {', '.join(kinds['codegens']) or '(none)'}; "
        f"hook kinds: {', '.join(kinds['hooks']) or '(none)'}" + (f"; lock file: {doc['lock']}" if doc["lock"] else ""))
    for problem in doc["problems"]:
        out(f"{problem['severity']} [{problem['code']}] {problem['message']}")
        write_traceback(problem, args.traceback, "    ")
    for item in doc["printed"]:
        out(f"note: {printed_text(item)}")
    errors, warnings = doc["summary"]["errors"], doc["summary"]["warnings"]
    if not doc["ok"]:
        out(f"check failed: {errors} error(s), {warnings} warning(s)")
    elif warnings:
        out(f"check passed with {warnings} warning(s)")
    else:
        out("check passed")
    return 0 if doc["ok"] else 1


def cmd_lock(args: argparse.Namespace) -> int:
    """``lock``: write the installed plugin set as a lock file (default: stdout)."""
    from ._lockfile import format_lock, write_lock
    from ._report import lock_document
    doc, notes = quietly(lock_document)
    text = format_lock(doc)
    warn_all(notes)
    if args.output in (None, "-") or document_is(args.output):
        document_stream().write(text)
        return 0
    regular = write_lock(args.output, text)  # as a shell redirect writes it
    summary = (f"{len(doc['distributions'])} distribution(s), {len(doc['codegens'])} codegen(s), "
               f"{len(doc['hooks'])} hook(s)")
    if regular:
        out(f"Wrote {args.output}: {summary}")
    else:  # a device or FIFO is written through: stdout may be what it is, so the note goes to stderr
        err(f"Wrote {args.output} (written through, not replaced): {summary}")
    return 0


def _codegen_text(doc: Doc) -> str:
    """The ``codegen:`` line of an ``explain`` document: the chosen codegen and where it comes from, or the error."""
    chosen, error = doc["codegen"], doc["error"]
    if chosen is None:
        return f"none resolves: {error['type']}: {error['message']}"
    text = f"{chosen['name']!r} from {describe_distribution(chosen)}"
    if chosen.get("entry_point"):
        text += f" ({chosen['entry_point']})"
    return text


def cmd_explain(args: argparse.Namespace) -> int:
    """``explain``: the codegen and hooks a target resolves to, and why; 1 when none."""
    from ..discovery import is_utf8_text
    from ..environment import is_host_target, parse_target
    from ._explain import explain_document
    for value, what in ((args.target, "TARGET"), (args.host, "--host")):
        if value is not None and not is_utf8_text(value):
            raise UsageError(f"{what} {shown(repr(value))} is not valid UTF-8 text; give a kind name such as 'llvm' or "
                             "TVM's JSON form", prog=f"{PROG} explain")
    if args.host is not None and is_host_target(parsed := quietly(parse_target, args.target)):
        raise UsageError(
            f"--host {args.host!r} given for {parsed.kind.name!r}, a host target: a host target builds its own host "
            f"code, so --host applies only to a device TARGET (e.g. `explain cuda --host {args.host}`); to see how "
            f"{args.host!r} resolves, run `explain {args.host}`", prog=f"{PROG} explain")
    doc = quietly(explain_document, args.target, host=args.host)
    if args.json:
        write_json(doc)
        return 0 if doc["codegen"] is not None else 1
    where = {"target": "the target is a host target", "target.host": "the target's host",
             "tvm-default": "TVM's default host; give another with --host"}[doc["host_from"]]
    for label, value in (
            ("tvm", doc["tvm"]["describe"]), ("client", client_text(doc).removeprefix("Client: ")),
            ("target", json.dumps(doc["target"], separators=(",", ":"))),
            ("host", f"{json.dumps(doc['host'], separators=(',', ':'))}  ({where})"),
            ("codegen", _codegen_text(doc))):
        out(f"{label + ':':10}{value}")
    out()
    out(f"Host codegens for kind {doc['host_kind']!r}:")
    if not doc["candidates"]:
        out("  (none registered)")
    for cand in doc["candidates"]:
        label = (f"({cand['state']}) {describe_distribution(cand)} ({cand['entry_point']})" if cand["name"] is None
                 else f"{cand['name']!r} priority {cand['priority']}  {describe_distribution(cand)}")
        out(f"  {'*' if cand['selected'] else '-'} {label}  {cand['reason']}")
        write_traceback(cand, args.traceback, "      ")
    if doc["hook_kind"] is not None:
        out()
        out(f"Hooks for device kind {doc['hook_kind']!r}, in the order they run:")
        if not doc["hooks"]:
            out("  (none registered)")
        for hook in doc["hooks"]:
            mark = f"{hook['order']}." if hook["applies"] else "-"
            label = (f"{hook['name']!r} priority {hook['priority']}" if hook["name"] is not None else
                     f"({hook['state']}) ({hook['entry_point']})")
            out(f"  {mark} {label}  {describe_distribution(hook)}  {hook['reason']}")
            write_traceback(hook, args.traceback, "      ")
    if doc["controls"]:
        out()
        out("Controls that touched the answer:")
        for control in doc["controls"]:
            out(f"  {control['variable']}={control['item']}: {control['effect']}")
    warn_all(doc["warnings"])
    return 0 if doc["codegen"] is not None else 1

