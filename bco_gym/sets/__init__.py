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

Every set also answers a batch of rows at once, ``lmo_many(directions)`` and
``project_many(points)`` (shape (k, *shape)), row i equal to the single oracle's answer:
vectorised for the simplex, the balls, the box and the flow polytope's LMO (one dynamic
programme for all rows), a stacked SVD for the nuclear ball (its LMO agrees with the
ARPACK one to about 1e-12, see ``nuclear``), row by row for Birkhoff's LMO and the QP
projections, and by a row loop for a user-defined set.

Separation oracles, ``separation(x)`` (None for x in K, else a unit normal a and offset b
with <a, z> <= b on K and <a, x> > b: the most violated constraint, O(n)), for
``L2Ball``, ``L1Ball``, ``Hypercube`` and ``Simplex`` (``has_separation`` says which).
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
