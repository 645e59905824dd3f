"""How each request of a ``why-miss`` question was sent: the flags, and the ``Sent`` they make."""
from __future__ import annotations

from typing import TYPE_CHECKING

from radixviz.cache.options import MAMBA_CHUNK, MAMBA_POOL, SWA_POOL, WINDOW
from radixviz.errors import UsageError

if TYPE_CHECKING:
    import argparse

    from radixviz.sim.why_miss import Sent


def add_request_args(p: argparse.ArgumentParser) -> None:
    for side, which in (("a", "A's"), ("b", "B's")):
        p.add_argument(f"--namespace-{side}", f"--extra-key-{side}", dest=f"extra_key_{side}", metavar="KEY",
                       help=f"{which} own extra_key (the API's extra_key field)")
        p.add_argument(f"--adapter-{side}", metavar="NAME", help=f"{which} LoRA adapter")
        p.add_argument(f"--salt-{side}", metavar="SALT", help=f"{which} cache salt")
        p.add_argument(f"--rank-{side}", type=int, default=0, metavar="R",
                       help=f"the worker or DP rank {which[0]} went to (default 0)")
    p.add_argument("--logprob-start", type=int, default=-1, metavar="K",
                   help="B asked for its prompt's logprobs from token K (SGLang's logprob_start_len)")


def request_of(args: argparse.Namespace, side: str, tokens: tuple) -> Sent:
    """The ``Sent`` of request ``side`` ("a" or "b"); UsageError for a bad rank or start."""
    from radixviz.sim.why_miss import Sent  # the engine's package: torch

    rank = getattr(args, f"rank_{side}")
    if rank < 0:
        raise UsageError(f"--rank-{side} must be 0 or more, not {rank}")
    start = args.logprob_start if side == "b" else -1
    if start < -1:
        raise UsageError(f"--logprob-start must be a token position (0 or more), not {start}")
    return Sent(tokens, getattr(args, f"extra_key_{side}"), getattr(args, f"adapter_{side}"),
                getattr(args, f"salt_{side}"), rank, start)


# a hybrid model's layout: the unified engine's options (cache/options.py), each a flag here
HYBRID = ((WINDOW, "a sliding-window model: its window, in tokens (the swa component)"),
          (MAMBA_CHUNK, "a linear-attention (Mamba) model: states kept every N tokens (the mamba component)"),
          (SWA_POOL, "with --window: slots in the sliding-window KV pool (default: the pool's)"),
          (MAMBA_POOL, "with --mamba-chunk: Mamba state slots"))


def add_hybrid_args(p: argparse.ArgumentParser) -> None:
    for option, words in HYBRID:
        assert option.limit is not None and option.flag_name is not None
        p.add_argument(option.flag_name, dest=option.name, type=option.limit.arg, default=None, metavar="N",
                       help=f"{words}; the replay runs on the unified engine (SGLang v0.5.23)")


def hybrid_of(args: argparse.Namespace) -> dict | None:
    """The unified engine's options the flags give (None: no hybrid model asked for)."""
    window, chunk = args.window, args.mamba_chunk
    if window is None and chunk is None:
        if args.swa_pool is not None or args.mamba_pool is not None:
            raise UsageError("--swa-pool and --mamba-pool go with --window and --mamba-chunk")
        return None
    components = ("full",) + (("swa",) if window is not None else ()) + (("mamba",) if chunk is not None else ())
    options = {"components": components, "window": window, "mamba_chunk": chunk,
               "swa_pool": args.swa_pool, "mamba_pool": args.mamba_pool}
    return {k: v for k, v in options.items() if v is not None}
