"""Feasible sets with linear minimization oracles (one module per family).

=================  =====================================  ==========================
set                LMO                                    projection
=================  =====================================  ==========================
Simplex(n)         argmin entry, O(n)                     sort, O(n log n)
L2Ball(n, rho)     -rho g/||g||, O(n)                     scaling, O(n)
L1Ball(n, rho)     argmax |g_i|, O(n)                     sort/threshold, O(n log n)
Hypercube(lo, hi)  sign pattern, O(n)                     clip, O(n)
NuclearNormBall    top singular pair (ARPACK), O(rc) per  full SVD + l1 projection,
  (r, c, rho)      Lanczos iteration                      O(rc min(r, c))
FlowPolytope       DAG shortest path, O(|E|)              Clarabel QP (extra ``qp``)
BirkhoffPolytope   assignment problem, O(n^3)             Clarabel QP (extra ``qp``)
=================  =====================================  ==========================
"""

from bco_gym.sets.balls import L1Ball, L2Ball
from bco_gym.sets.base import ConvexSet, ShrunkSet
from bco_gym.sets.birkhoff import BirkhoffPolytope
from bco_gym.sets.box import Hypercube
from bco_gym.sets.flow import FlowPolytope
from bco_gym.sets.nuclear import NuclearNormBall
from bco_gym.sets.simplex import Simplex

__all__ = [
    "BirkhoffPolytope",
    "ConvexSet",
    "FlowPolytope",
    "Hypercube",
    "L1Ball",
    "L2Ball",
    "NuclearNormBall",
    "ShrunkSet",
    "Simplex",
]
