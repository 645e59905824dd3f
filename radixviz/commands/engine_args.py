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

from radixviz.cache.engines import declared_options, default_engine, engine_names, engine_spec, option_owners
from radixviz.cache.options import EngineSettings, Option
from radixviz.errors import UsageError
from radixviz.settings import arg_type

if TYPE_CHECKING:
    from radixviz.cache.engines import EngineSpec



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
    default = names[0] if only else default_engine()
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


def engine_settings(args: argparse.Namespace, command: str = "run") -> EngineSettings:
    """The chosen engine's settings from the flags given: one object, made and checked once,
    here (its ``__post_init__``: each value against its option, then the engine's check of
    them together with ``--pool-size``), then handed whole to the session and to the engine
    (docs/architecture.md: the path of an option). UsageError (one line) for a flag the engine
    does not take or values that do not fit together."""
    events = bool(getattr(args, "kv_events", False))
    # --events alone picks the first engine that takes it (today's cache)
    default = option_owners("kv_events")[0] if events and args.engine is None else default_engine()
    spec = engine_spec(args.engine or default)
    refuse_foreign(args, spec, command)
    given = {option.name: getattr(args, option.name) for option in spec.options
             if option.flag_name and command in option.commands and getattr(args, option.name, None) is not None
             and (not option.is_switch or getattr(args, option.name))}
    try:
        return spec.settings_type(args.pool_size, **given)
    except ValueError as exc:
        raise UsageError(str(exc)) from None


def engine_options(args: argparse.Namespace, command: str = "run") -> dict[str, Any]:
    """``engine`` and the options given, as a dict (checked as ``engine_settings`` checks them)."""
    settings = engine_settings(args, command)
    given = {name: settings[name] for name in settings if getattr(args, name, None) not in (None, False)}
    given.pop("buggy", None)   # the session takes the #7 switch as its own argument
    return {"engine": settings.engine, **given}


def session_settings(args: argparse.Namespace, command: str = "run") -> dict[str, EngineSettings]:
    """Session keyword arguments: the engine's ``settings`` (``engine_settings``)."""
    return {"settings": engine_settings(args, command)}
