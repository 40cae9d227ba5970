"""One way to resolve a theorem's parameters: the problem's constants in one object, one
capped power with one warning pointed at the user's call, OPTIONS from the signature."""

from __future__ import annotations

import inspect
import warnings

import pytest

from bco_gym.agents import AGENTS, make_agent
from bco_gym.agents.theory import ProblemConstants, capped_power, keyword_options
from bco_gym.problem import Problem
from bco_gym.sets import L2Ball, Simplex

#: The constructors that resolve a capped theorem parameter, with a horizon below the
#: theorem's (their default is capped) and one above it (it is not).
CAPPED = {
    "fkm": (Simplex(10), 10, 10**9),
    "bfw": (Simplex(10), 10, 10**12),
    "bbcg": (Simplex(10), 1000, 10**8),
    "loo-bbgd": (L2Ball(3), 100, 10**12),
    "so-bgd": (L2Ball(3), 100, 10**8),
    "fejer-bgd": (L2Ball(3), 10, 10**8),
}


def test_the_problems_constants_are_one_object():
    problem = Problem(Simplex(4), 100, 2.0, 3.0, "bandit")
    constants = ProblemConstants.of(problem)
    convex_set = problem.set
    expected = (100, 3, convex_set.inner_radius, convex_set.outer_radius, 2.0, 3.0)
    assert constants.symbols() == expected  # d is aff_dim: 3 for the 4-simplex


@pytest.mark.parametrize("name", list(CAPPED))
def test_a_capped_default_warns_once_at_the_users_call(name):
    convex_set, short, long = CAPPED[name]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        make_agent(name, Problem(convex_set, short, 1.0, 1.0, "bandit"))
    capped = [w for w in caught if "it is capped at" in str(w.message)]
    assert capped, [str(w.message) for w in caught]
    assert all(w.filename == __file__ for w in capped)  # the user's line, whatever agent
    assert all(str(w.message).startswith(AGENTS[name].__name__ + ": the default") for w in capped)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make_agent(name, Problem(convex_set, long, 1.0, 1.0, "bandit"))


def test_capped_power_caps_the_default_and_refuses_an_override_beyond_its_limit():
    common = dict(scale=2.0, symbol="c", exponent=0.5, cap=0.5, cap_symbol="r/2")
    assert capped_power("A", "delta", None, horizon=64, **common) == 2.0 * 64**-0.5
    with pytest.warns(UserWarning, match=r"reaches r/2 = 0\.5 at T = 4 .* T > 16"):
        assert capped_power("A", "delta", None, horizon=4, **common) == 0.5
    assert capped_power("A", "delta", 0.5, horizon=4, **common) == 0.5  # at the limit: allowed
    with pytest.raises(
        ValueError, match=r"A: delta=0\.6 exceeds r/2 = 0\.5; allowed: 0 < delta <= 0\.5"
    ):
        capped_power("A", "delta", 0.6, horizon=4, **common)
    with pytest.raises(ValueError, match=r"delta=1 equals r = 1 \(why\); allowed: 0 < delta < 1"):
        capped_power(
            "A", "delta", 1.0, horizon=4, limit=1.0, limit_symbol="r", strictly_below=True,
            reason=" (why)", **common,
        )  # fmt: skip
    with pytest.raises(ValueError, match=r"delta=-1\.0 must be finite and > 0"):
        capped_power("A", "delta", -1.0, horizon=4, **common)


def test_options_are_the_constructors_keywords():
    for name, cls in AGENTS.items():
        if name.startswith("sb3-"):
            continue  # SB3's options are its algorithm's, declared
        assert cls.OPTIONS == keyword_options(cls.__init__), name
        assert "batch_size" not in cls.OPTIONS
        assert "OPTIONS =" not in inspect.getsource(cls), name  # derived, never by hand
