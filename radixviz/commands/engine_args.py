"""The engine's command-line flags, generated from the registry: ``--engine`` and one flag for
each option a registered engine declares (radixviz/cache/options.py), with its limits, its
default and its help line; and the refusal of a flag the chosen engine does not take.

``run``, ``export`` and ``sandbox`` call ``add_engine_args(p, "run")``; ``simulate`` writes its
own list-taking flags for the options it sweeps and has the rest generated here
(``skip=``). A new engine's option gets its flag with no change to this file.
"""
from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from radixviz.cache.engines import (declared_options, engine_names, engine_spec, engines_with,
                                    option_owners)
from radixviz.cache.options import Option
from radixviz.errors import UsageError
from radixviz.settings import arg_type

if TYPE_CHECKING:
    from radixviz.cache.engines import EngineSpec

DEFAULT_ENGINE = "2024"


def owners(option: str) -> str:
    """``2026|hicache``: the engines that take ``option``, for a help line or a refusal."""
    return "|".join(option_owners(option))


def add_flag(p: argparse.ArgumentParser, option: Option) -> None:
    """The flag of one option; its value is None when not given (a switch: False)."""
    flag = option.flag_name
    if flag is None:
        raise ValueError(f"option {option.name} has no command-line flag")
    where = f"--engine {owners(option.name)}"
    if option.is_switch:
        p.add_argument(flag, dest=option.name, action="store_true",
                       help=f"{option.help} ({where})")
        return
    kind = option.limit.arg if option.limit is not None else arg_type(option.parse)
    default = "" if option.default is None else f"; default {option.default_text()}"
    alone: dict[str, Any] = {"nargs": "?", "const": option.choices} if option.many else {}   # the flag alone: all
    p.add_argument(flag, dest=option.name, type=kind, default=None, **alone,
                   metavar=option.metavar(), help=f"{option.help} ({where}{default})")


def add_engine_args(p: argparse.ArgumentParser, command: str, skip: tuple = (),
                    only: tuple[str, ...] = ()) -> None:
    """--engine and a flag for each option ``command`` offers (read when the parser is built:
    a registered engine and its options are offered); ``skip`` names options the command
    declares (or sets) itself; ``only`` the engines the command can use (the first is its
    default), whose options alone get flags."""
    names = list(only or engine_names())
    default = names[0] if only else DEFAULT_ENGINE
    p.add_argument("--engine", choices=names, default=None, metavar="|".join(names),
                   help=f"which cache: {'; '.join(f'{n}: {engine_spec(n).title}' for n in names)} "
                        f"(default {default})")
    for option in declared_options(command):
        if option.flag_name and option.name not in skip and set(option_owners(option.name)) & set(names):
            add_flag(p, option)


def given(args: argparse.Namespace, option: Option) -> bool:
    value = getattr(args, option.name, None)
    return bool(value) if option.is_switch else value is not None


def refuse_foreign(args: argparse.Namespace, spec: EngineSpec, command: str, skip: tuple = ()) -> None:
    """UsageError for the first flag given that engine ``spec`` does not take."""
    for option in declared_options(command):
        if option.flag_name and option.name not in skip and given(args, option) \
                and not spec.takes(option.name):
            raise UsageError(f"{option.flag_name} needs an engine with {option.what or option.name}: "
                             f"--engine {owners(option.name)}")


def engine_options(args: argparse.Namespace, command: str = "run") -> dict[str, Any]:
    """Session keyword arguments: ``engine`` and the options given; UsageError for a flag the
    engine does not take or options that do not fit together (the engine's own check)."""
    events = bool(getattr(args, "kv_events", False))
    # --events alone picks the first engine with KV events (today's cache)
    default = engines_with("kv_events")[0].name if events and args.engine is None else DEFAULT_ENGINE
    spec = engine_spec(args.engine or default)
    refuse_foreign(args, spec, command)
    options = {option.name: getattr(args, option.name) for option in declared_options(command)
               if option.flag_name and given(args, option)}
    try:   # every command with engine flags has --pool-size
        if spec.check is not None:   # refuse_foreign above left only options the engine takes
            spec.check(spec.settings_type(**options), args.pool_size)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    options.pop("buggy", None)   # the session takes the #7 switch as its own argument
    return {"engine": spec.name, **options}


def session_settings(args: argparse.Namespace, command: str = "run") -> dict[str, Any]:
    """Session keyword arguments: ``engine`` and its ``settings``, one frozen object made
    from the engine's declared options and the flags given (checked as ``engine_options``
    checks them), handed whole to the engine (tests/test_settings_path.py holds the path)."""
    given = engine_options(args, command)
    spec = engine_spec(given.pop("engine"))
    return {"engine": spec.name, "settings": spec.settings_type(**given)}

