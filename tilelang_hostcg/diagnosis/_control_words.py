"""A ``TILELANG_HOSTCG_*`` control that cannot do what it says, in words: what is wrong with its item and
what to do, from the facts :mod:`..discovery` found (the variable, the item, what kind of problem, the
nearest name, what there is instead)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..core import shown
from ._plugin_words import did_you_mean

if TYPE_CHECKING:
    from ._findings import Finding


def no_time_bound(f: Finding) -> str:
    """Why an item (of the variable, or of ``check``'s flag) is no time bound for ``check``'s probe build:
    the one wording of the control's warning and of ``check``'s error."""
    given = f["variable"]
    return (f"{given}={shown(str(f['item']), 60)} is not a time bound for check's probe build: give a number of "
            f"seconds above 0 and at most {f['limit']} (default {f['default']}), e.g. {given}=300")


def _stays_on(f: Finding) -> str:
    """What stays on where an on/off switch is not understood."""
    if f["stays_on"] == "activation":
        return "activation at `import tilelang` and `import tvm` stays on"
    return "plugin autoload stays on"


def _shape(f: Finding) -> str:
    """What a malformed item of a list variable should look like."""
    if f["shape"] == "kind=codegen":
        return f"; write kind=codegen, e.g. {f['variable']}=llvm=llvm"
    if f["shape"] == "distribution":
        return ": not a distribution name; separate names with commas"
    return ": write a distribution name or distribution:kind, separated by commas"


def _not_understood(f: Finding) -> str:
    variable = f["variable"]
    return (f"{variable}={shown(str(f['item']), 60)} is not understood; {_stays_on(f)}. Write {variable}={f['off']} "
            "to turn it off")


def _not_a_bound(f: Finding) -> str:
    return f"{no_time_bound(f)}; `tilelang-hostcg check` stops with this error until it is fixed or unset"


def _no_control(f: Finding) -> str:
    return (f"{shown(str(f['variable']), 60)} is not a tilelang-hostcg control and has no effect"
            f"{did_you_mean(f['guess'])}; the controls are {f['controls']}. Rename or unset it")


def _malformed(f: Finding) -> str:
    return f"{f['variable']}: ignoring {shown(str(f['item']), 60)}{_shape(f)}"


def _not_utf8(f: Finding) -> str:
    variable = f["variable"]
    return (f"{variable}: ignoring {shown(str(f['item']), 60)}: it is not valid UTF-8 text; set {variable} to names "
            "separated by commas")


def _no_distribution(f: Finding) -> str:
    return (f"{f['variable']}={f['item']}: no installed distribution {f['distribution']!r} advertises host-codegen "
            f"entry points{did_you_mean(f['guess'])}; check the name with `tilelang-hostcg list`")


def _no_kind(f: Finding) -> str:
    return (f"{f['variable']}={f['item']}: distribution {f['distribution']!r} advertises no kind {f['kind']!r}"
            f"{did_you_mean(f['guess'])}; it advertises {f['advertised'] or 'nothing'}")


def _no_host_kind(f: Finding) -> str:
    return (f"{f['variable']}={f['item']}: no installed distribution advertises host kind {f['kind']!r}"
            f"{did_you_mean(f['guess'])}; the preference applies only if code registers a codegen for that kind")


def _no_codegen_name(f: Finding) -> str:
    return (f"{f['variable']}={f['item']}: kind {f['kind']!r} has no codegen named {f['name']!r}"
            f"{did_you_mean(f['guess'])}; its codegens: {f['codegens'] or 'none'}. The preference has no effect; "
            "fix the name (see `tilelang-hostcg list --load`)")


def control(f: Finding) -> str:
    """A control's item that cannot do what it says, by what is wrong with it (its ``problem``)."""
    problem = f["problem"]
    worded = {"not-understood": _not_understood, "not-a-bound": _not_a_bound, "no-control": _no_control,
              "malformed": _malformed, "not-utf8": _not_utf8, "no-distribution": _no_distribution,
              "no-kind": _no_kind, "no-host-kind": _no_host_kind, "no-codegen-name": _no_codegen_name}
    return worded[str(problem)](f)
