"""0. Peer: FKM per round through the Gymnasium loop versus a plain numpy FKM loop.

The hand loop is what a researcher writes without the library: the losses drawn up
front, then per round a Gaussian direction (centred on the simplex), the play
y = x + delta*u, its loss, the step x - eta*(d/delta) f(y) u and the projection onto the
shrunk set; the regret against the best vertex at the end. Same set, same loss sequence
(the library's per-round vectors theta_t), same FKM constants (eta, delta) and the same
Gaussian stream, so its cumulative loss must equal the library's up to rounding, which
is checked.

Three timings per set (CPU seconds, each loop over the same T rounds):

* gym: the DESIGN.md loop, ``gym.make`` + ``RegretRecorder`` + ``make_agent("fkm")``;
* lean: ``bco_gym.experiment.run(id, "fkm")`` -- the runner's default loop for FKM,
  which has no block path (its play depends on the previous loss), so this is the lean
  per-round loop; the whole call is timed (env and agent construction and the
  40-checkpoint comparator included);
* hand: the loop above.

Targets: gym / hand <= 1.5; lean / hand < 1.

The published peer (0c): PyNOL's one-point bandit gradient descent (``BGDOnePoint``,
``pip install pynol-xzp``, in its own virtual environment: ``PYNOL_PYTHON``, default
``/tmp/pynol-venv/bin/python``) on the same loss vectors (the library's theta_t of
``BCO-Ball-v0``, n = 10, through PyNOL's ``InnerLoss``), the same constants (our FKM's
eta and delta, PyNOL's start x_1 = 0 as ours) and T = 10^5, played by PyNOL's own
``online_learning`` loop in a child process; against our FKM through ``run`` and through
``run_many`` (64 seeds, per run-round). Rounds per second side by side (CPU time of the
loops; our comparator is subtracted). The regrets are shown too: the Gaussian streams
differ, so they agree in distribution, not bit for bit. Without PyNOL the rows say so.

Run:  python benchmarks/bench_peer.py [--horizon 20000] [--pynol-horizon 100000]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import tempfile
import textwrap
from functools import partial
from pathlib import Path

from common import (
    Row,
    cpu_seconds,
    interleaved_best,
    pin_blas_threads,
    table,
    verdict,
    write_json,
)

pin_blas_threads()

import gymnasium as gym  # noqa: E402
import numpy as np  # noqa: E402

import bco_gym  # noqa: E402, F401
from bco_gym.agents import make_agent  # noqa: E402
from bco_gym.experiment import agent_seed_for, default_checkpoints, run, run_many  # noqa: E402
from bco_gym.wrappers import RegretRecorder  # noqa: E402

CASES = {"ball": ("BCO-Ball-v0", {"n": 10}), "simplex": ("BCO-Simplex-v0", {"n": 10})}
HORIZON = 20_000
SEED = 0
PYNOL_HORIZON = 100_000
PYNOL_SEEDS = 64
PYNOL_PYTHON = os.environ.get("PYNOL_PYTHON", "/tmp/pynol-venv/bin/python")


def gym_loop(env_id: str, size: dict, horizon: int, seed: int):
    """The DESIGN.md loop: returns a function playing one episode -> (cumulative, regret)."""
    env = RegretRecorder(gym.make(env_id, horizon=horizon, **size))
    agent = make_agent("fkm", env)

    def play() -> tuple[float, float]:
        observation, info = env.reset(seed=seed)
        agent.reset(seed=agent_seed_for(seed))
        done = False
        while not done:
            action = agent.act(observation)
            observation, _, terminated, truncated, info = env.step(action)
            agent.update(info["loss"], info)
            done = terminated or truncated
        return info["cumulative_loss"], info["regret"]

    return play


def project_simplex(v: np.ndarray) -> np.ndarray:
    """Euclidean projection onto the probability simplex by sorting."""
    u = np.sort(v)[::-1]
    cumulative = np.cumsum(u) - 1.0
    rho = np.nonzero(u * np.arange(1, len(v) + 1) > cumulative)[0][-1]
    return np.maximum(v - cumulative[rho] / (rho + 1), 0.0)


def hand_loop(env_id: str, size: dict, horizon: int, seed: int):
    """FKM written by hand with numpy on the same problem: -> (cumulative, regret)."""
    env = gym.make(env_id, horizon=horizon, **size)
    env.reset(seed=seed)
    losses = env.unwrapped.losses  # the same loss sequence (linear: theta_t)
    convex_set = env.unwrapped.set
    constants = make_agent("fkm", env).params  # the same eta and delta
    eta, delta = constants["step_size"], constants["smoothing_radius"]
    center = np.array(convex_set.center)
    dimension, scale = convex_set.aff_dim, 1.0 - delta / convex_set.inner_radius
    simplex = env_id == "BCO-Simplex-v0"
    chunks = math.ceil(horizon / losses.chunk_size)

    def play() -> tuple[float, float]:
        drawn = [losses.chunk(k) for k in range(chunks)]  # the losses, drawn up front
        theta = np.concatenate([part["theta"] for part in drawn])[:horizon]
        offset = theta @ center
        rng = np.random.default_rng(agent_seed_for(seed))
        x = center.copy()
        paid = np.empty(horizon)
        for t in range(horizon):
            g = rng.standard_normal(len(x))
            if simplex:
                g -= g.mean()
            u = g / np.linalg.norm(g)
            y = x + delta * u
            loss = theta[t] @ y - offset[t]
            paid[t] = loss
            x = x - (eta * dimension * loss / delta) * u
            if simplex:
                x = center + scale * (project_simplex(center + (x - center) / scale) - center)
            else:
                norm = np.linalg.norm(x)
                if norm > scale:
                    x *= scale / norm
        total = theta.sum(axis=0)
        if simplex:
            best = total[np.argmin(total)] - offset.sum()
        else:
            best = -np.linalg.norm(total)
        return math.fsum(paid), math.fsum(paid) - best

    return play


def measure(horizon: int = HORIZON, repeats: int = 3) -> tuple[list[Row], dict]:
    rows, raw = [], {}
    for label, (env_id, size) in CASES.items():
        best, results = interleaved_best(
            {
                "gym": gym_loop(env_id, size, horizon, SEED),
                "hand": hand_loop(env_id, size, horizon, SEED),
                "lean": partial(run, env_id, "fkm", horizon=horizon, seed=SEED, env_kwargs=size),
            },
            repeats,
        )
        gym_seconds, lean_seconds, hand_seconds = best["gym"], best["lean"], best["hand"]
        (gym_total, gym_regret), (hand_total, hand_regret) = results["gym"], results["hand"]
        result = results["lean"]
        agree = abs(hand_total - gym_total) <= 1e-8 * (1.0 + abs(gym_total))
        same_run = result.cumulative_loss[-1] == gym_total
        per_round = {
            "gym_us": 1e6 * gym_seconds / horizon,
            "lean_us": 1e6 * lean_seconds / horizon,
            "hand_us": 1e6 * hand_seconds / horizon,
        }
        raw[label] = {
            **per_round,
            "loop": result.loop,
            "gym_cumulative_loss": gym_total,
            "hand_cumulative_loss": hand_total,
            "gym_regret": gym_regret,
            "hand_regret": hand_regret,
            "hand_agrees_with_library": agree,
            "runner_equals_gym_loop": same_run,
        }
        gym_ratio = gym_seconds / hand_seconds
        lean_ratio = lean_seconds / hand_seconds
        note = f"{env_id} n={size['n']}, T={horizon}"
        rows.append(
            Row(
                "0 peer",
                f"FKM gym loop / hand loop ({label})",
                gym_ratio,
                "x",
                "<= 1.5",
                verdict(gym_ratio, at_most=1.5) and agree,
                {"case": note, **raw[label]},
            )
        )
        rows.append(
            Row(
                "0 peer",
                f"FKM runner ({result.loop} loop) / hand loop ({label})",
                lean_ratio,
                "x",
                "< 1",
                verdict(lean_ratio, at_most=1.0) and lean_ratio < 1.0 and same_run,
                {"case": note, **raw[label]},
            )
        )
    return rows, raw


PYNOL_CHILD = textwrap.dedent(
    """
    import json, math, sys, time
    import numpy as np
    from pynol.environment.domain import Ball
    from pynol.environment.environment import Environment
    from pynol.environment.loss_function import InnerLoss
    from pynol.learner.base import BGDOnePoint
    from pynol.online_learning import online_learning

    theta = np.load(sys.argv[1])
    eta, delta = float(sys.argv[2]), float(sys.argv[3])
    horizon, n = theta.shape
    env = Environment(func_sequence=InnerLoss(feature=theta))
    learner = BGDOnePoint(Ball(n, radius=1.0), step_size=eta, scale_perturb=delta,
                          prior=np.zeros(n))
    start = time.process_time()
    _, loss, _, _ = online_learning(horizon, env, learner)
    seconds = time.process_time() - start
    total = math.fsum(loss)
    best = -float(np.linalg.norm(theta.sum(axis=0)))
    print(json.dumps({"cpu_s": seconds, "cumulative_loss": total, "regret": total - best}))
    """
)


def pynol_peer(horizon: int = PYNOL_HORIZON, seeds: int = PYNOL_SEEDS) -> list[Row]:
    """PyNOL's BGDOnePoint against our FKM (single and batched): rounds per second."""
    env_id, size = CASES["ball"]
    env = gym.make(env_id, horizon=horizon, **size)
    env.reset(seed=SEED)
    losses = env.unwrapped.losses
    chunks = math.ceil(horizon / losses.chunk_size)
    theta = np.concatenate([losses.chunk(k)["theta"] for k in range(chunks)])[:horizon]
    constants = make_agent("fkm", env).params
    eta, delta = constants["step_size"], constants["smoothing_radius"]
    points = default_checkpoints(horizon)
    comparator, _, _ = cpu_seconds(lambda: losses.comparator(points))
    single_cpu, _, single = cpu_seconds(
        lambda: run(env_id, "fkm", horizon=horizon, seed=SEED, env_kwargs=size)
    )
    batch_cpu, _, batch = cpu_seconds(
        lambda: run_many(env_id, "fkm", list(range(seeds)), horizon=horizon, env_kwargs=size)
    )
    ours = horizon / (single_cpu - comparator)
    ours_batched = seeds * horizon / (batch_cpu - seeds * comparator)
    detail = {
        "case": f"{env_id} n={size['n']}, T={horizon}",
        "eta": eta,
        "delta": delta,
        "ours_single_rounds_per_s": ours,
        "ours_batched_run_rounds_per_s": ours_batched,
        "ours_regret_seed0": single.final_regret,
        "ours_batched_loop": batch[0].loop,
        "pynol_python": PYNOL_PYTHON,
    }
    if not Path(PYNOL_PYTHON).exists():
        detail["pynol"] = "not installed (set PYNOL_PYTHON to a venv with pynol-xzp)"
        peer = math.nan
    else:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "theta.npy"
            np.save(path, theta)
            finished = subprocess.run(
                [PYNOL_PYTHON, "-c", PYNOL_CHILD, str(path), repr(eta), repr(delta)],
                capture_output=True,
                text=True,
                check=True,
                env={**os.environ, "PYTHONPATH": ""},
            )
        figures = json.loads(finished.stdout.strip().splitlines()[-1])
        peer = horizon / figures["cpu_s"]
        detail.update({"pynol_rounds_per_s": peer, "pynol_regret": figures["regret"]})
    note = f"ball n={size['n']}, T={horizon:.0e}"
    return [
        Row("0c peer", f"PyNOL BGDOnePoint rounds/s ({note})", peer, "rounds/s", "", None, detail),
        Row("0c peer", f"FKM run() rounds/s ({note})", ours, "rounds/s", "", None, detail),
        Row(
            "0c peer",
            f"FKM run_many({seeds} seeds) run-rounds/s ({note})",
            ours_batched,
            "rounds/s",
            "",
            None,
            detail,
        ),
        Row("0c peer", "FKM run() / PyNOL (rounds/s)", ours / peer, "x", "", None, detail),
        Row(
            "0c peer",
            f"FKM run_many({seeds}) / PyNOL (rounds/s)",
            ours_batched / peer,
            "x",
            "",
            None,
            detail,
        ),
    ]


def measure_all(
    horizon: int = HORIZON, pynol_horizon: int = PYNOL_HORIZON, seeds: int = PYNOL_SEEDS
):
    rows, raw = measure(horizon)
    peer = pynol_peer(pynol_horizon, seeds)
    raw["pynol"] = peer[0].detail
    return rows + peer, raw


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=HORIZON)
    parser.add_argument("--pynol-horizon", type=int, default=PYNOL_HORIZON)
    parser.add_argument("--seeds", type=int, default=PYNOL_SEEDS)
    args = parser.parse_args()
    rows, raw = measure_all(args.horizon, args.pynol_horizon, args.seeds)
    print(table(rows))
    for label, values in raw.items():
        if label == "pynol":
            continue
        print(
            f"{label}: us/round gym {values['gym_us']:.1f}, runner {values['lean_us']:.1f}, "
            f"hand {values['hand_us']:.1f}; hand loop agrees: {values['hand_agrees_with_library']}"
        )
    write_json("peer", rows)


if __name__ == "__main__":
    main()
