"""A flow polytope's graph as given: edges as (tail, head) pairs of plain hashable nodes,
checked before :class:`~bco_gym.sets.flow.FlowPolytope` builds anything from them."""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence

import numpy as np


def plain_node(node: Hashable) -> Hashable:
    """numpy scalars as Python scalars, so nodes compare and print plainly."""
    return node.item() if isinstance(node, np.generic) else node


def check_node(node: Hashable, where: str) -> Hashable:
    """A node as a plain hashable value equal to itself (so it can index the graph)."""
    node = plain_node(node)
    allowed = "nodes must be hashable values equal to themselves (str, int, tuple, ...)"
    try:
        hash(node)
    except TypeError:
        raise ValueError(
            f"FlowPolytope: {where} has an unhashable node {node!r}; {allowed}"
        ) from None
    if node != node:
        raise ValueError(f"FlowPolytope: {where} has the node {node!r}; {allowed}")
    return node


def normalise_edges(edges: Iterable[Sequence[Hashable]]) -> tuple[tuple[Hashable, Hashable], ...]:
    if isinstance(edges, str | bytes | Mapping) or not isinstance(edges, Iterable):
        raise ValueError(f"FlowPolytope: edges={edges!r} must be a sequence of (tail, head) pairs")
    result = []
    for e, edge in enumerate(edges):
        if isinstance(edge, str | bytes) or not isinstance(edge, Iterable):
            raise ValueError(f"FlowPolytope: edge {e} is {edge!r}; expected a (tail, head) pair")
        pair = tuple(edge)
        if len(pair) != 2:
            raise ValueError(f"FlowPolytope: edge {e} is {edge!r}; expected a (tail, head) pair")
        tail, head = (check_node(node, f"edge {e}") for node in pair)
        if tail == head:
            raise ValueError(
                f"FlowPolytope: the graph is not a DAG; edge {e} is a self-loop at {tail!r}"
            )
        result.append((tail, head))
    if not result:
        raise ValueError("FlowPolytope: edges is empty; expected at least two s-t paths")
    return tuple(result)


__all__ = ["check_node", "normalise_edges", "plain_node"]
