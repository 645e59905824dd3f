"""How to read the scheduler screen: the guide its help modal shows under the keys."""
from __future__ import annotations

# paragraphs without hard line breaks: the help pane wraps them to its width
GUIDE = "\n\n".join((
    "Each step is one forward pass of the first release's scheduler loop.",
    "A prefill pass matches every waiting request against the tree, lines them up in the "
    "policy's order and offers places. Left, top: that queue. hit is the matched prefix; need "
    "the tokens this request would add to the batch (new prompt + max new tokens + what the "
    "batch already holds); room the free slots plus what the tree could evict minus what the "
    "running requests will still write; Δlock how much locking its prefix took from the "
    "evictable room. ✓ admitted, ✗ no room, ↶ fitted until its prefix was locked, ≥ prefill "
    "token cap, ⏸ held back (#2442), · never reached (no free request row).",
    "Left, bottom: the running batch. + admitted in this pass, ▸ decoding, ✔ finished (its "
    "tokens went into the tree), ↩ retracted or deferred for lack of memory, ⊘ refused, ↪ the "
    "next turn of a chat arriving.",
    "Right: the radix tree after the pass (+ new nodes, † evicted leaves, ● locked by a running "
    "request) and the KV pool (■ tree, 2 shared, □ request only, · free); g shows every slot. "
    "The bottom line adds up the run so far: hit rate, prompt tokens reused, tokens computed, "
    "tokens evicted, and ✔ finished, ↩ retracted, ⊘ refused requests.",
))

