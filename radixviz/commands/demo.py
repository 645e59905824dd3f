"""``radixviz demo``: print the chapter's example with both matchers."""
from radixviz.cache.engines import op_owners


def register(subparsers) -> None:
    p = subparsers.add_parser("demo", help="print the chapter's #7 example with both matchers")
    p.set_defaults(func=run)


def run(args) -> int:
    from radixviz.cache import TokenToKVPool, open_engine  # torch: not when --help loads this module

    release = op_owners("matcher")[0]   # the engine with the #7 matcher switch: the first release's

    for buggy in (False, True):
        pool = TokenToKVPool(32, device="cpu")
        cache = open_engine(release, pool, buggy=buggy).cache   # the first release's RadixCache
        for text in ("Hello_L.A.!", "Hello_L.A.!world"):
            slots = pool.alloc(len(text))
            pool.free(slots[:cache.insert(text, slots)])
        value, _ = cache.match_prefix("Hello_world")
        print(f"{'buggy (before #7)' if buggy else 'fixed'}: match_prefix('Hello_world') hits "
              f"{len(value)} tokens, slots {value.tolist()}")
        cache.pretty_print()
    return 0
