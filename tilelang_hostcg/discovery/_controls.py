"""The ``TILELANG_HOSTCG_*`` environment controls; one that cannot take effect is a :class:`ControlProblem`."""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from _tilelang_hostcg_switch import ENV_AUTO_INSTALL, is_on, is_understood

from ..core import CODEGEN_GROUP, CORE_DISTRIBUTION, cut, is_core, normalize_name, shown, warn_once
from ._records import CORE_ENTRY_POINTS

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from ._records import AdvertisedEntryPoint

PREFIX = "TILELANG_HOSTCG_"
ENV_AUTOLOAD_OFF = "TILELANG_HOSTCG_DISABLE_PLUGIN_AUTOLOAD"
ENV_DISABLE = "TILELANG_HOSTCG_DISABLE"
ENV_ONLY = "TILELANG_HOSTCG_ONLY"
ENV_PREFER = "TILELANG_HOSTCG_PREFER"
ENV_PROBE_TIMEOUT = "TILELANG_HOSTCG_PROBE_TIMEOUT"
KNOWN_VARIABLES = (ENV_AUTOLOAD_OFF, ENV_AUTO_INSTALL, ENV_DISABLE, ENV_ONLY, ENV_PREFER, ENV_PROBE_TIMEOUT)
PROBE_TIMEOUT_DEFAULT = 120.0  # seconds; docs/cli.md says why
PROBE_TIMEOUT_LIMIT = 86400.0  # a day: a bound, not a way round one
RESERVED_PREFIX = "TILELANG_HOSTCG_TEST_"  # the project's own tests' variables: never judged

@dataclass(frozen=True, slots=True)
class ControlProblem:
    """A ``TILELANG_HOSTCG_*`` item that cannot do what it says; ``message`` says what to do."""

    variable: str
    item: str
    message: str


def _not_understood(variable: str, value: str | None, effect: str, fix: str) -> ControlProblem | None:
    """An on/off value that is neither on nor off (any case, spaces around): the default stays."""
    if value is None or is_understood(value):
        return None
    return ControlProblem(variable, value, f"{variable}={shown(value, 60)} is not understood; {effect}. Write {fix}")


def probe_timeout_error(value: str, given: str) -> str | None:
    """Why ``value`` (from ``given``: the variable or the ``check`` flag) is no time bound for ``check``'s probe
    build, else ``None``: a bound is a number of seconds above 0, at most a day."""
    try:
        seconds = float(value.strip())
    except ValueError:
        seconds = float("nan")
    if 0 < seconds <= PROBE_TIMEOUT_LIMIT:  # also false for nan
        return None
    return (f"{given}={shown(value, 60)} is not a time bound for check's probe build: give a number of seconds above 0 "
            f"and at most {PROBE_TIMEOUT_LIMIT:g} (default {PROBE_TIMEOUT_DEFAULT:g}), e.g. {given}=300")


def probe_timeout_problem(value: str | None) -> ControlProblem | None:
    """The problem with ``TILELANG_HOSTCG_PROBE_TIMEOUT=value``; ``check`` refuses to run with it."""
    error = None if value is None else probe_timeout_error(value, ENV_PROBE_TIMEOUT)
    if value is None or error is None:
        return None
    return ControlProblem(ENV_PROBE_TIMEOUT, value, f"{error}; `tilelang-hostcg check` stops with this error until "
                                                    "it is fixed or unset")


def auto_install_problem(value: str | None) -> ControlProblem | None:
    """The problem with ``TILELANG_HOSTCG_AUTO_INSTALL=value`` when it is not understood."""
    return _not_understood(ENV_AUTO_INSTALL, value, "activation at `import tilelang` and "
                           "`import tvm` stays on", f"{ENV_AUTO_INSTALL}=0 to turn it off")


_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")  # PEP 508
_KIND = re.compile(r"[A-Za-z0-9_.-]+")


def is_utf8_text(text: str) -> bool:
    """Whether ``text`` holds no bytes that were not UTF-8 (no surrogate escapes)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def nearest(word: str, candidates: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for the closest candidate, or ``""``."""
    import difflib  # measured: about 1 ms, and only a problem needs it
    close = difflib.get_close_matches(word, sorted(set(candidates)), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


def warn_control_problems(problems: Iterable[ControlProblem]) -> None:
    """Warn once per process about each problem, at the user's line."""
    for problem in problems:
        warn_once(problem.message, "control", facts=(problem.variable, problem.item))


@dataclass(frozen=True, slots=True)
class Controls:
    """The plugin controls: ``disable`` (``dist`` or ``dist:kind``), ``only`` (``None``: all), ``prefer``."""

    autoload: bool = True
    disable: frozenset[str] = frozenset()
    only: frozenset[str] | None = None
    prefer: Mapping[str, str] = field(default_factory=dict)
    problems: tuple[ControlProblem, ...] = field(default=(), compare=False)

    @classmethod
    def from_environ(cls, environ: Mapping[str, str] | None = None) -> Controls:
        """Read the ``TILELANG_HOSTCG_*`` variables; what cannot be used becomes a warned ``problem``."""
        env = os.environ if environ is None else environ
        value = env.get(ENV_AUTOLOAD_OFF)
        problems = [p for p in (_not_understood(ENV_AUTOLOAD_OFF, value, "plugin autoload stays on",
                                                f"{ENV_AUTOLOAD_OFF}=1 to turn it off"),
                                auto_install_problem(env.get(ENV_AUTO_INSTALL)),
                                probe_timeout_problem(env.get(ENV_PROBE_TIMEOUT))) if p is not None]
        disable = frozenset(normalize_name(dist) + sep + kind for dist, sep, kind in (
            item.partition(":") for item in _items(ENV_DISABLE, env, problems) or ()))
        only_items = _items(ENV_ONLY, env, problems)
        only = None if only_items is None else frozenset(map(normalize_name, only_items))
        prefer = {kind.strip(): name.strip() for kind, _, name in (
            item.partition("=") for item in _items(ENV_PREFER, env, problems) or ())}
        problems += [ControlProblem(variable, cut(env[variable], 40), f"{shown(variable, 60)} is not a tilelang-hostcg "
                                    f"control and has no effect{nearest(variable, KNOWN_VARIABLES)}; the controls "
                                    f"are {', '.join(KNOWN_VARIABLES)}. Rename or unset it")
                     for variable in sorted(env) if variable.startswith(PREFIX)
                     and variable not in KNOWN_VARIABLES and not variable.startswith(RESERVED_PREFIX)]
        warn_control_problems(problems)
        return cls(autoload=not is_on(value), disable=disable, only=only,
                   prefer=prefer, problems=tuple(problems))

    def skip_control(self, distribution: str, kind: str) -> tuple[str, str] | None:
        """The control that skips this entry point, as ``(variable, item)``, or ``None``."""
        dist = normalize_name(distribution)
        if not is_core(dist):
            if not self.autoload:
                return ENV_AUTOLOAD_OFF, "1"
            if self.only is not None and dist not in self.only:
                return ENV_ONLY, ",".join(sorted(self.only))
        if dist in self.disable:
            return ENV_DISABLE, dist
        if not self.disable:
            return None
        from ..environment import kind_spellings  # the kinds' names: only where something is disabled
        for spelling in kind_spellings(kind):  # dist:hip and dist:rocm name one kind
            if f"{dist}:{spelling}" in self.disable:
                return ENV_DISABLE, f"{dist}:{spelling}"
        return None

    def suggest(self, variable: str, item: str) -> str:
        """``VARIABLE=VALUE`` adding ``item`` to what these controls set (``PREFER``: replacing its kind's)."""
        if variable == ENV_PREFER:
            kind = item.partition("=")[0]
            items = [f"{k}={v}" for k, v in sorted(self.prefer.items()) if k != kind] + [item]
        else:
            have = self.disable if variable == ENV_DISABLE else self.only or frozenset()
            dist, sep, kind = item.partition(":")
            new = f"{normalize_name(dist)}:{kind}" if sep else normalize_name(dist)
            items = sorted(have) + ([] if new in have else [new])
        return f"{variable}={','.join(items)}"

    def skip_reason(self, distribution: str, kind: str) -> str | None:
        """Why the controls skip this entry point, or ``None`` when they let it load."""
        control = self.skip_control(distribution, kind)
        if control is None:
            return None
        variable, item = control
        if variable == ENV_AUTOLOAD_OFF:
            return f"plugin autoload is off ({ENV_AUTOLOAD_OFF}=1)"
        if variable == ENV_ONLY:
            return (f"not in {ENV_ONLY} (to use it: "
                    f"{self.suggest(ENV_ONLY, normalize_name(distribution))})")
        return f"disabled by {ENV_DISABLE}={item}"

    def unknown_names(self, entry_points: Iterable[AdvertisedEntryPoint]) -> list[ControlProblem]:
        """Items of ``DISABLE``, ``ONLY`` and ``PREFER`` naming what no installed entry point advertises."""
        if not (self.disable or self.only or self.prefer):
            return []
        from ..environment import kind_spellings  # the kinds' names: only where a control names one
        entries = list(entry_points)
        kinds_of: dict[str, set[str]] = {CORE_DISTRIBUTION: set()}
        for ep in entries:
            kinds_of.setdefault(normalize_name(ep.distribution), set()).update(kind_spellings(ep.name))
        kinds_of[CORE_DISTRIBUTION].update(name for _, name, _ in CORE_ENTRY_POINTS)
        problems: list[ControlProblem] = []
        for item in sorted(self.disable):
            dist, sep, kind = item.partition(":")
            if dist not in kinds_of:
                problems.append(_no_distribution(ENV_DISABLE, item, dist, kinds_of))
            elif sep and kind not in kinds_of[dist]:
                problems.append(ControlProblem(ENV_DISABLE, item, f"{ENV_DISABLE}={item}: distribution {dist!r} "
                                               f"advertises no kind {kind!r}{nearest(kind, kinds_of[dist])}; it "
                                               f"advertises {', '.join(sorted(kinds_of[dist])) or 'nothing'}"))
        problems += [_no_distribution(ENV_ONLY, d, d, kinds_of) for d in sorted(self.only or ()) if d not in kinds_of]
        codegen_kinds = {k for ep in entries if ep.group == CODEGEN_GROUP
                         for k in kind_spellings(ep.name)} | set(kinds_of[CORE_DISTRIBUTION])
        return problems + [ControlProblem(
            ENV_PREFER, f"{kind}={name}", f"{ENV_PREFER}={kind}={name}: no installed distribution advertises host "
            f"kind {kind!r}{nearest(kind, codegen_kinds)}; the preference applies only if code registers a codegen "
            "for that kind") for kind, name in sorted(self.prefer.items()) if kind not in codegen_kinds]

    def unknown_preference(self, kind: str, names: Iterable[str]) -> ControlProblem | None:
        """The problem with ``PREFER`` for ``kind`` when none of its codegens (``names``) is so called."""
        wanted, present = self.prefer.get(kind), set(names)
        if wanted is None or wanted in present:
            return None
        listed = ", ".join(repr(n) for n in sorted(present)) or "none"
        return ControlProblem(
            ENV_PREFER, f"{kind}={wanted}",
            f"{ENV_PREFER}={kind}={wanted}: kind {kind!r} has no codegen named "
            f"{wanted!r}{nearest(wanted, present)}; its codegens: {listed}. The preference "
            "has no effect; fix the name (see `tilelang-hostcg list --load`)")


def _no_distribution(variable: str, item: str, dist: str,
                     kinds_of: Mapping[str, Iterable[str]]) -> ControlProblem:
    return ControlProblem(
        variable, item, f"{variable}={item}: no installed distribution {dist!r} advertises "
        f"host-codegen entry points{nearest(dist, kinds_of)}; check the name with "
        "`tilelang-hostcg list`")


# What an item of each list variable must look like, and the advice when it does not.
_SHAPES = {
    ENV_DISABLE: (re.compile(rf"{_NAME.pattern}(?::{_KIND.pattern})?"),
                  ": write a distribution name or distribution:kind, separated by commas"),
    ENV_ONLY: (_NAME, ": not a distribution name; separate names with commas"),
    ENV_PREFER: (re.compile(r"[^=]+=.+", re.S), f"; write kind=codegen, e.g. {ENV_PREFER}=llvm=llvm"),
}


def _items(variable: str, env: Mapping[str, str], problems: list[ControlProblem]) -> list[str] | None:
    """The well-formed UTF-8 items of a list variable (``None`` when unset); the others become problems."""
    value = env.get(variable)
    if value is None:
        return None
    shape, fix = _SHAPES[variable]
    raw = value.split(",") if variable == ENV_PREFER else value.replace(",", " ").split()
    items = []
    for item in filter(None, (part.strip() for part in raw)):
        if not is_utf8_text(item):  # a UTF-8 name read under an ASCII locale (LC_ALL=C)?
            with contextlib.suppress(UnicodeError):
                item = os.fsencode(item).decode("utf-8")
        utf8 = is_utf8_text(item)
        if utf8 and shape.fullmatch(item):
            items.append(item)
            continue
        why = fix if utf8 else f": it is not valid UTF-8 text; set {variable} to names separated by commas"
        problems.append(ControlProblem(variable, item, f"{variable}: ignoring {shown(item, 60)}{why}"))
    return items
