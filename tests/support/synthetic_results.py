"""Hand-made RunResults for the figure, table and report tests (no runs: exact numbers)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from bco_gym.engine.result import RunResult

CHECKPOINTS = (1, 10, 100)


def synthetic_result(
    agent: str,
    seed: int,
    regret: Sequence[float],
    *,
    checkpoints: Sequence[int] = CHECKPOINTS,
    feedback: str = "bandit",
    bound: float | None = None,
    lmo_calls: int = 0,
    projections: int = 0,
    seconds: tuple[float, float] = (0.01, 0.01),
    constants: str = "theory",
    scale: float | None = 1.0,
    loss: dict | None = None,
    env_id: str = "BCO-Ball-v0",
) -> RunResult:
    """A RunResult with the given regret curve at ``checkpoints`` (the last is T)."""
    points = np.asarray(checkpoints, dtype=np.int64)
    regret = np.asarray(regret, dtype=float)
    comparator = -np.asarray(points, dtype=float)
    scale_param = None if agent == "random" else "c"
    params = {} if scale_param is None else {"c": scale}
    return RunResult(
        env_id=env_id,
        agent=agent,
        seed=seed,
        agent_seed=seed + 1000,
        horizon=int(points[-1]),
        checkpoints=points,
        cumulative_loss=comparator + regret,
        comparator_loss=comparator,
        comparator_gap=np.zeros(len(points)),
        regret=regret,
        round_losses=None,
        final_regret=float(regret[-1]),
        final_gap=0.0,
        lmo_calls=lmo_calls,
        projections=projections,
        regret_bound=bound,
        params=params,
        scale_param=scale_param,
        constants=constants,
        env_kwargs={"feedback": feedback} if feedback == "full" else {},
        agent_kwargs={},
        loss=loss or {"name": "linear", "mean_norm": 0.5, "noise": 0.5},
        problem={"set": "L2Ball(n=3, radius=1)", "shape": [3], "dim": 3, "feedback": feedback},
        stats={"rounds": int(points[-1])},
        loop="lean",
        agent_seconds=seconds[0],
        env_seconds=seconds[1],
        comparator_seconds=0.0,
        wall_seconds=sum(seconds),
    )


# Final regrets on seeds 0..3; every curve is (r/100, r/10, r).
FINALS = {
    "random": (100.0, 104.0, 98.0, 102.0),
    "bbcg": (60.0, 70.0, 50.0, 64.0),
    "fkm": (80.0, 66.0, 90.0, 84.0),
    "ofw": (30.0, 31.0, 29.0, 30.0),
}


def comparison(agents: Sequence[str] = ("random", "bbcg", "fkm", "ofw")) -> list[RunResult]:
    """Four seeds of each agent at T = 100 with the FINALS regrets; ofw is full information."""
    return [
        synthetic_result(
            agent,
            seed,
            (final / 100, final / 10, final),
            feedback="full" if agent == "ofw" else "bandit",
            bound=None if agent == "random" else 1000.0 + seed,
            lmo_calls=0 if agent == "random" else 2 * (seed + 1),
            projections=100 if agent == "fkm" else 0,
            seconds=(0.001 * (seed + 1), 0.002),
        )
        for agent in agents
        for seed, final in enumerate(FINALS[agent])
    ]
