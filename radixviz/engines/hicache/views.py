"""The views of the host tier's tree (engine hicache): where each node's KV lives (a tag, both
tiers' slots, a dashed box for a host-only node), the host pool in the header and a line of
tier tags. Builds on today's views (v2026/views.py): the host tier's nodes are today's nodes too."""
from __future__ import annotations

from rich.text import Text

from radixviz.cache.engines import engine_spec
from radixviz.engines.v2026.views import stats_lines
from radixviz.render.marks import DELETED_HOST_TIER, EVICTED
from radixviz.render.views import (DETAIL_STYLE, badge, box_lines, box_style, caption_parts, extra_lines,
                                   header_parts, mark_words, more_pools, node_counts, node_details, node_fields,
                                   page_pools, pool_rows, removed_word, tree_fields)

from . import views_pool
from . import views_sim_report  # noqa: F401 (registers the view of this engine's simulate report)
from .snapshot import HiNodeSnapshot, HiTreeSnapshot
from .views_head_bugs import damage_lines
from .views_tiers import TIERS, host_summary, tier_legend, tier_of, tier_slots, tier_tag


@header_parts.register
def _(tree: HiTreeSnapshot) -> list[tuple[str, str]]:
    # the engine's words are on the status line: room for the host pool
    return [(f" · {tree.protected_size} protected", DETAIL_STYLE), (f" · {host_summary(tree)}", DETAIL_STYLE)]


@caption_parts.register
def _(tree: HiTreeSnapshot) -> tuple[str, str, str]:
    engine = caption_parts.dispatch(object)(tree)[0]   # the policy as a word, not "lru eviction"
    return engine, f" · {tree.protected_size} protected · {host_summary(tree)}", ""


@mark_words.register
def _(tree: HiTreeSnapshot) -> dict[str, str]:
    # "evicted" means "no device copy" here: a node gone from both tiers is "deleted"
    return {**mark_words.dispatch(HiTreeSnapshot.__mro__[1])(tree), EVICTED.name: DELETED_HOST_TIER}


@removed_word.register
def _(tree: HiTreeSnapshot) -> str:
    return "deleted"


@extra_lines.register
def _(tree: HiTreeSnapshot) -> list:
    return [tier_legend(tree)] if tree.root.children else []


@badge.register
def _(tree: HiTreeSnapshot) -> tuple[str, str]:
    words = engine_spec(tree.engine).badge(tree.settings)
    if not tree.settings.get("head_bugs"):
        return words, "engine"
    # the 9fbe6800a bugs are on: red, and "hicache BUGS" stays when a narrow line shrinks the
    # badge to its first part (the step counter must fit at 80 columns)
    return words.replace(" · BUGS ", " BUGS · ", 1), "buggy"


@tree_fields.register
def _(tree: HiTreeSnapshot) -> dict:
    fields = {"protected_size": tree.protected_size,
              "host_pool": {"size": tree.host_size, "used": tree.host_used, "free": tree.host_size - tree.host_used},
              "in_flight": {"writes": tree.writes_in_flight, "loads": tree.loads_in_flight},
              "head_bugs": list(tree.head_bugs)}
    if tree.head_bugs:   # what SGLang's 9fbe6800a lines did to the tree and the host pool
        fields["head_bug_damage"] = {"unreachable": [n[0] for n in tree.unreachable],
                                     "double_freed": list(tree.double_freed),
                                     "reports": list(tree.reports), "host_accounting": tree.host_accounting}
    return fields


@node_details.register
def _(node: HiNodeSnapshot, sep: str) -> list[tuple[str, str]]:
    tag, tag_style = tier_tag(node)
    return [(f"{sep}{tag}", tag_style),
            (f"{sep}{tier_slots(node)}{sep}{node_counts(node, sep)}{sep}t {node.last_access}", DETAIL_STYLE)]


@box_lines.register
def _(node: HiNodeSnapshot) -> tuple[str, ...]:
    tag, _, _, _, words = TIERS[tier_of(node)]
    return (f"[{tag}] {words}", tier_slots(node), *stats_lines(node))


@box_style.register
def _(node: HiNodeSnapshot) -> dict:
    """Where its KV lives, in the border: a colour per tier, dashed when on the host only."""
    _, _, color, fill, _ = TIERS[tier_of(node)]
    return {"color": color, "fillcolor": fill, **({"style": "rounded,filled,dashed"} if node.evicted else {})}


@node_fields.register
def _(node: HiNodeSnapshot) -> dict:
    fields = node_fields.dispatch(HiNodeSnapshot.__mro__[1])(node)   # today's node's fields
    if node.key:
        fields.update(tier=node.tier, in_flight=node.in_flight or None, evicted=node.evicted,
                      backuped=node.backuped, host_value=None if node.host_value is None
                      else list(node.host_value), host_ref=node.host_ref)
    return fields


# ------------------------------------------------ the host pool beside the device's (views_pool.py)

@pool_rows.register
def _(tree: HiTreeSnapshot, pool, marks, width: int):
    return views_pool.pool_rows(pool, marks, width)


@more_pools.register
def _(tree: HiTreeSnapshot, pool, marks) -> list:
    if not pool.more:
        return []
    # with SGLang's 9fbe6800a bugs on, what they broke follows the grid
    return [Text("host pool (CPU)", style="bold"), views_pool.HostPoolGrid(pool, marks), *damage_lines(tree)]


@page_pools.register
def _(tree: HiTreeSnapshot, frame, max_drawn: int, row: int) -> dict | None:
    return views_pool.host_pool_page(frame, max_drawn, row)
