"""Drive PyNOL's PBGD (the ``pynol-xzp`` package, the ``peer`` extra) and bco_gym's pbgd /
pbgd2 with the same exploration draws, round by round.

PyNOL draws its directions from NumPy's global generator, reseeded from the operating
system on every call (``Domain.unit_vec(seed=None)``); here the domain's ``unit_vec`` is
replaced by one that hands out the directions bco_gym's agent drew, so both explore alike.
PyNOL ships no simplex its PBGD can run on (its ``Simplex`` has no radii, no sphere
directions, no shrinking, and ``project`` normalises x / ||x||_1), so
:class:`SimplexDomain` adapts bco_gym's simplex to PyNOL's ``Domain`` interface: radii,
directions in the tangent space, Euclidean projection, shrinking about the centre.
"""

from __future__ import annotations

import copy

import numpy as np
from pynol.environment.domain import Ball, Domain
from pynol.environment.environment import Environment
from pynol.learner.models.dynamic.pbgd import PBGDOnePoint, PBGDTwoPoint

from bco_gym.agents import make_agent
from bco_gym.problem import Problem
from bco_gym.sets import L2Ball, Simplex


class SimplexDomain(Domain):
    """bco_gym's ``Simplex(n)`` in PyNOL's ``Domain`` terms (dimension = its affine
    dimension n - 1, the d of the estimator), shrunk about its centre by ``scale``."""

    def __init__(self, simplex: Simplex, scale: float = 1.0):
        super().__init__(dimension=simplex.aff_dim)
        self.simplex, self.scale = simplex, scale
        self.center = simplex.center
        self.R, self.r = scale * simplex.outer_radius, scale * simplex.inner_radius

    def init_x(self, prior, seed):
        return np.array(prior, dtype=float)

    def project(self, x):
        target = self.center + (x - self.center) / self.scale
        return self.center + self.scale * (self.simplex.project(target) - self.center)

    def __mul__(self, scale):
        return SimplexDomain(self.simplex, self.scale * scale)

    __rmul__ = __mul__


def _peer_domain(convex_set):
    if isinstance(convex_set, L2Ball):
        n = convex_set.shape[0]
        return Ball(dimension=n, radius=convex_set.radius, center=np.zeros(n))
    return SimplexDomain(convex_set)


def compare(convex_set, horizon, thetas, *, two_point=False, same_rate=True, seed=0):
    """Play f_t(x) = <theta_t, x> with bco_gym's agent and PyNOL's model on the same
    directions; return (our plays, peer plays), each (T, k, n) with k = 1 or 2 points.

    ``same_rate``: give PyNOL's Hedge bco_gym's fixed rate epsilon (else its own
    decreasing 2/(L D sqrt(t)), the one difference between the two)."""
    G = float(np.max(np.linalg.norm(thetas, axis=1)))
    C = G * (np.linalg.norm(convex_set.center) + convex_set.outer_radius)  # |<theta, x>|
    feedback = "two-point" if two_point else "bandit"
    problem = Problem(convex_set, horizon, G, C, feedback)
    agent = make_agent("pbgd2" if two_point else "pbgd", problem)
    agent.reset(seed=seed)
    domain = _peer_domain(convex_set)
    center = np.asarray(convex_set.center, dtype=float)
    if two_point:
        model = PBGDTwoPoint(domain, horizon, G, prior=center)
    else:
        model = PBGDOnePoint(domain, horizon, C, prior=center)
    if same_rate:
        model.meta.lr = agent.params["meta_rate"]
    drawn: list[np.ndarray] = []
    model.perturbation.domain = copy.copy(model.perturbation.domain)
    model.perturbation.domain.unit_vec = lambda seed=None: drawn[-1]
    ours, theirs = [], []
    for theta in thetas:
        plays = agent.act(None)
        drawn.append(np.array(agent._current[0]))  # u_t, flat
        env = Environment(func=lambda x, theta=theta: float(theta @ x), full_info=False)
        model.opt(env)
        if two_point:
            values = np.array([theta @ plays[0], theta @ plays[1]])
            agent.update(float(values.mean()), {"losses": values})
            theirs.append(np.stack([model.perturbation.x1, model.perturbation.x2]))
            ours.append(plays)
        else:
            agent.update(float(theta @ plays))
            theirs.append(model.perturbation.x[np.newaxis])
            ours.append(plays[np.newaxis])
    return np.array(ours), np.array(theirs)


def drifting_costs(convex_set, horizon, seed):
    """theta_t: a unit vector of aff(K)'s directions turning by 0.01 rad a round plus
    noise, shifted so the simplex's costs stay positive (the drift scenario's kind)."""
    rng = np.random.default_rng(seed)
    n = convex_set.shape[0]
    first = convex_set.tangent(rng.standard_normal(n))
    second = convex_set.tangent(rng.standard_normal(n))
    first /= np.linalg.norm(first)
    second -= (second @ first) * first
    second /= np.linalg.norm(second)
    angles = 0.01 * np.arange(horizon)
    thetas = np.cos(angles)[:, None] * first + np.sin(angles)[:, None] * second
    thetas += 0.1 * rng.standard_normal((horizon, n))
    return thetas + (1.0 if isinstance(convex_set, Simplex) else 0.0)
