"""The anchor certificate's distances, compiled (:mod:`bco_gym.envs.feasibility`).

A block of plays is certified when every row's anchor lies in K_delta and each play
lies within sqrt(``limit``) = delta + atol r/(4R) of its row's anchor. The NumPy check
takes the squared distances with ``einsum`` over cache-sized slices; :func:`near_anchors`
takes them in one pass, without the temporaries. Its sums of squares are in its own
order, not einsum's: a squared distance within a few ulps of ``limit`` may be judged
differently. That cannot change a verdict: the certificate only ever accepts, a block it
does not accept gets the exact check, and a play whose distance is that close to the
limit is inside K by the certificate's slack either way
(``tests/envs/test_feasibility_kernels.py`` compares both on blocks built near the limit).
"""

from __future__ import annotations

from bco_gym.agents.kernels.oracles import jit


@jit
def near_anchors(plays, anchors, limit):  # pragma: no cover - compiled
    """Whether ||plays[s, j] - anchors[s]||^2 <= limit for every row s and round j
    (``plays`` (S, k, n), ``anchors`` (S, n))."""
    rows, rounds, n = plays.shape
    for s in range(rows):
        for j in range(rounds):
            total = 0.0
            for i in range(n):
                difference = plays[s, j, i] - anchors[s, i]
                total += difference * difference
            if not total <= limit:
                return False
    return True
