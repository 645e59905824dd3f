"""Where two requests' prompts part, in text, and the usual reasons they do.

A chat's next turn misses the cache when the server's tokens for the conversation so far are
not the tokens it cached. Two reasons account for most of it, and both are in the prompt, not
the cache: the chat template renders an earlier turn differently once a later turn exists (a
reasoning model's template drops the ``<think>`` block of every assistant turn but the last,
so the reply the cache holds, reasoning included, is not what the next request sends), or the
system prompt carries something that changes (today's date, a time, a request id).

``chat_tokens`` renders messages with a chat template (a ``.jinja`` file, or the
``chat_template`` of a ``tokenizer_config.json``) and a local ``tokenizer.json`` (the
``tokenizers`` package; nothing is ever downloaded). ``part`` finds where two token lists part
and says, when it can tell, why. No torch here.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Callable

from radixviz.cache.keys import match

CONTEXT = 40       # characters shown on each side of where the texts part
_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}/\d{2,4}|\d{1,2}:\d{2}(:\d{2})?|"
                   r"(Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)[a-z]*\.? \d{1,2}|"
                   r"(Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day)\b")
_REASONING = re.compile(r"<think>|</think>|<reasoning>|</reasoning>")


@dataclass(frozen=True)
class Parting:
    """Where the prompts part: token index, the text just before and each side's text after,
    the message of B it falls in (None: no messages given), and a likely reason (or '')."""
    token: int
    before: str
    a_after: str
    b_after: str
    message: str | None
    reason: str


def load_messages(path: str) -> list[dict]:
    """A JSON list of ``{"role", "content"}`` objects; ValueError in one line otherwise."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path}: not a JSON list of messages ({type(exc).__name__})") from None
    if not (isinstance(data, list) and data and all(
            isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
            for m in data)):
        raise ValueError(f"{path}: expected a JSON list of {{\"role\": ..., \"content\": ...}} messages")
    return data


def load_template(path: str) -> str:
    """A chat template's text: a ``.jinja`` file, or the ``chat_template`` of a JSON config."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"--chat-template {path}: {type(exc).__name__}") from None
    if path.endswith(".json"):
        try:
            template = json.loads(text).get("chat_template")
        except (json.JSONDecodeError, AttributeError):
            template = None
        if not isinstance(template, str):
            raise ValueError(f"--chat-template {path}: no \"chat_template\" text in it")
        return template
    return text


def render(template: str, messages: list[dict], add_generation_prompt: bool) -> str:
    """The conversation as the server's chat template writes it (a sandboxed Jinja)."""
    from jinja2 import TemplateError  # jinja2: only when a chat template is given
    from jinja2.sandbox import ImmutableSandboxedEnvironment  # jinja2, as above

    def raise_exception(message: str) -> None:
        raise TemplateError(message)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
    env.globals["raise_exception"] = raise_exception
    try:
        return env.from_string(template).render(messages=messages, add_generation_prompt=add_generation_prompt,
                                                bos_token="", eos_token="")
    except TemplateError as exc:
        raise ValueError(f"the chat template failed: {' '.join(str(exc).split())[:200]}") from None


def chat_text(template: str, messages: list[dict]) -> str:
    """What the cache holds after a request: its prompt, rendered with the generation prompt,
    then its reply as generated when the messages end with the assistant's (reasoning and
    all); else the prompt alone (the next request's)."""
    if messages[-1]["role"] == "assistant":
        return render(template, messages[:-1], True) + messages[-1]["content"]
    return render(template, messages, True)


def part(a_ids, b_ids, decode: Any = None, locate: Callable[[int], str | None] | None = None) -> Parting | None:
    """Where ``a_ids`` and ``b_ids`` part (None when one is a prefix of the other). ``decode``
    turns ids into text (a tokenizer's); ``locate(offset)`` names B's message holding that
    character (``message_at``)."""
    common = match(tuple(a_ids), tuple(b_ids))
    if common >= min(len(a_ids), len(b_ids)):
        return None
    show = decode or (lambda ids: "".join(chr(t) if 32 <= t < 127 else f"⟨{t}⟩" for t in ids))
    before = show(list(b_ids[:common]))
    a_after, b_after = show(list(a_ids[common:])), show(list(b_ids[common:]))
    where = locate(len(before)) if locate is not None else None
    return Parting(common, before[-CONTEXT:], a_after[:CONTEXT], b_after[:CONTEXT], where,
                   likely_reason(before, a_after, b_after))


def likely_reason(before: str, a_after: str, b_after: str) -> str:
    """A reason the texts part, when the text around it shows one; '' otherwise."""
    near_a, near_b = before[-CONTEXT:] + a_after[:CONTEXT], before[-CONTEXT:] + b_after[:CONTEXT]
    if _REASONING.search(a_after[:2 * CONTEXT]) and not _REASONING.search(b_after[:2 * CONTEXT]):
        return ("A's text holds a reasoning block where B's has none: the chat template drops an "
                "earlier turn's reasoning, so the reply the cache holds is not what the next turn sends")
    if _DATE.search(near_a) and _DATE.search(near_b):
        return ("a date or time changed here: a prompt that prints the time (a system prompt with "
                "today's date) is new every time it changes, and so is everything after it")
    return ""


def message_at(template: str, messages: list[dict], offset: int) -> str | None:
    """'message 3 (assistant)': the first message whose rendering, with the ones before it,
    reaches past character ``offset`` of the whole conversation's rendering. (Rendered as the
    conversation so far: a template that writes a turn differently once a later one exists
    parts from the whole rendering inside that turn, which is where it is named.)"""
    for index in range(1, len(messages) + 1):
        if len(render(template, messages[:index], False)) > offset:
            return f"message {index} ({messages[index - 1]['role']})"
    return None
