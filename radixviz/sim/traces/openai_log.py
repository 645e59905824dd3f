"""OpenAI-style request logs: one request body a line, as a proxy or gateway logs them::

    {"messages": [{"role": "system", "content": "..."}, {"role": "user", "content": "..."}],
     "max_tokens": 64, "timestamp": 1712000000.25}
    {"prompt": "Once upon a time", "max_tokens": 16}

A chat becomes one text, each message as ``<|role|>`` and its content on a line (our own
plain template: the same messages always give the same tokens, so a shared system prompt
and an earlier turn are a shared prefix). Tokens come from a local ``tokenizer.json``
(``--tokenizer FILE``, through the ``tokenizers`` package) or else one per character.
The output length is ``max_tokens`` (or ``max_completion_tokens``, or the logged
``usage.completion_tokens``), else ``DEFAULT_OUTPUT``. ``timestamp`` or ``created`` is in
seconds.
"""
from __future__ import annotations

from radixviz.sim.request import RequestSpec
from radixviz.sim.trace import TraceError

from .lines import Clock, json_lines, shown, time_of, whole

DEFAULT_OUTPUT = 16
TIMES = ("timestamp", "created")


def chat_text(messages, where: str) -> str:
    if not isinstance(messages, list) or not messages:
        raise TraceError(f"{where}: messages must be a non-empty list of {{role, content}}")
    parts = []
    for message in messages:
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise TraceError(f"{where}: each message needs a role (text) and a content")
        content = message.get("content")
        if isinstance(content, list):   # content parts: keep the text ones
            content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
        if not isinstance(content, str):
            raise TraceError(f"{where}: a message's content must be text, not {shown(content)}")
        parts.append(f"<|{message['role']}|>\n{content}\n")
    return "".join(parts)


def output_len(obj: dict, where: str) -> int:
    for name in ("max_tokens", "max_completion_tokens"):
        if name in obj:
            return whole(obj, name, where, 1)
    usage = obj.get("usage")
    if isinstance(usage, dict) and "completion_tokens" in usage:
        return whole(usage, "completion_tokens", where, 1)
    return DEFAULT_OUTPUT


def parse(obj: dict, where: str, encode) -> RequestSpec:
    if "messages" in obj:
        text = chat_text(obj["messages"], where)
    elif isinstance(obj.get("prompt"), str):
        text = obj["prompt"]
    else:
        raise TraceError(f"{where}: an OpenAI-style line needs messages or a text prompt")
    tokens = tuple(encode(text))
    if not tokens:
        raise TraceError(f"{where}: the prompt is empty")
    return RequestSpec(tokens, output_len(obj, where))


def read(path, encode, ms_per_pass: float | None = None):
    clock = Clock(ms_per_pass, unit_ms=1000.0)
    for _, where, obj in json_lines(path):
        spec = parse(obj, where, encode)
        yield clock.pass_of(time_of(obj, TIMES, where), where), spec
