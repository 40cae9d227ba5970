"""Which method when: every sentence follows the ranking's separated pairs and the costs."""

from __future__ import annotations

import numpy as np
from synthetic_results import synthetic_result

from bco_gym.reports.advice import which_method
from bco_gym.stats.ranking import rank


def runs(finals, seconds=None):
    """Eight seeds; ``finals``: agent -> (mean, sd about a shared base); per-round cost in µs."""
    rng = np.random.default_rng(0)
    base = 100 * rng.standard_normal(8)
    results = []
    for agent, (mean, spread) in finals.items():
        cost = (seconds or {}).get(agent, 1.0) * 1e-6 * 100
        for seed in range(8):
            value = 1000 + base[seed] + mean + spread * rng.standard_normal()
            results.append(
                synthetic_result(
                    agent,
                    seed,
                    (value / 100, value / 10, value),
                    feedback="full" if agent == "ofw" else "bandit",
                    seconds=(cost, 0.0),
                )
            )
    return results


def test_a_clear_winner_is_chosen_and_the_full_information_agent_named():
    results = runs(
        {"random": (5000, 5), "bbcg": (0, 5), "fkm": (400, 5), "bfw": (900, 5), "ofw": (-800, 5)},
        seconds={"bbcg": 3.0, "fkm": 20.0, "bfw": 21.0},
    )
    text = which_method(rank(results), results)
    assert text.startswith(
        "Which method when: bbcg has the lowest final regret of the bandit agents separated "
        "from random play, separated "
        "from every other bandit agent (mean final regret: bbcg "
    )
    assert "µs per round: bbcg 3, fkm 20, bfw 21)" in text
    assert (
        "With more feedback than one loss a round (a lower reference, not a bandit agent), "
        "ofw (full info) does better still" in text
    )
    assert text.endswith("Here, choose bbcg.")
    assert "not separated from random play" not in text  # every bandit agent beats it
    assert "worse than random" not in text


def test_tied_best_agents_give_the_cheapest_one_that_beats_random():
    results = runs(
        {"random": (50, 150), "bbcg": (0, 5), "fkm": (1, 5), "sb3-ppo": (-300, 5)},
        seconds={"bbcg": 3.0, "fkm": 20.0, "sb3-ppo": 5000.0},
    )
    ranking = rank(results)
    assert not ranking.separated("bbcg", "random")
    text = which_method(ranking, results)
    assert "sb3-ppo has the lowest final regret of the bandit agents separated from random" in text
    assert "fkm and bbcg are not separated from random play at this horizon." in text
    results = runs(
        {"random": (500, 5), "bbcg": (0, 5), "fkm": (1, 5)}, seconds={"bbcg": 3.0, "fkm": 20.0}
    )
    text = which_method(rank(results), results)
    assert (
        "fkm and bbcg are the best bandit agents separated from random play, not separated "
        "from each other" in text
    )
    assert text.endswith("Here, choose bbcg (tied with fkm; the cheapest per round).")


def test_nothing_beating_random_is_said_plainly():
    results = runs(
        {"random": (0, 300), "bbcg": (0, 5), "fkm": (200, 5), "ofw": (-500, 5)},
        seconds={"bbcg": 3.0, "fkm": 20.0},
    )
    text = which_method(rank(results), results)
    assert "No bandit agent is separated from random play (better) here at this horizon" in text
    assert "full info" not in text  # no best bandit agent to compare it with
    results = runs({"random": (0, 0), "bbcg": (0, 0)})  # equal on every seed
    assert which_method(rank(results), results).startswith(
        "Which method when: no two bandit agents are separated here"
    )


def test_an_agent_worse_than_random_is_never_called_best():
    """Issue 43: "fkm and stubborn are the best bandit agents, not separated from each
    other" while stubborn's mean was above random's: its noise hid it from every test."""
    results = runs(
        {"random": (500, 5), "fkm": (0, 5), "stubborn": (1200, 2000)},
        seconds={"fkm": 20.0, "stubborn": 1.0},
    )
    ranking = rank(results)
    assert ranking.means["stubborn"] > ranking.means["random"]
    assert not ranking.separated("stubborn", "fkm")  # the case: stubborn beaten by no one
    assert not ranking.separated("stubborn", "random")
    text = which_method(ranking, results)
    assert "are the best bandit agents" not in text
    assert "fkm has the lowest final regret of the bandit agents separated from random play" in (
        text
    )
    assert "stubborn is not separated from random play at this horizon." in text
    assert text.endswith("Here, choose fkm.")  # not the cheaper stubborn


def test_no_agent_separated_from_random_gives_no_best():
    results = runs({"random": (0, 5), "fkm": (-5, 400), "bbcg": (300, 5)})
    ranking = rank(results)
    assert ranking.beats("random", "bbcg") and not ranking.separated("fkm", "random")
    text = which_method(ranking, results)
    assert "No bandit agent is separated from random play (better); the lowest mean is" in text
    assert "best" not in text.replace("No bandit agent", "")
    assert text.endswith("none is advised.")
