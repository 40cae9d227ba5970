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
``pip install pynol-xzp``: either ``PYNOL_PATH``, a ``pip install --target`` folder put on
a child's PYTHONPATH, or ``PYNOL_PYTHON``, a venv's interpreter, default
``/tmp/pynol-venv/bin/python``) on the same loss vectors (the library's theta_t of
``BCO-Ball-v0``, n = 10, through PyNOL's ``InnerLoss``), the same constants (our FKM's
eta and delta, PyNOL's start x_1 = 0 as ours) and T = 10^5, played by PyNOL's own
``online_learning`` loop in a child process, twice: as shipped, and with its two
per-round defects repaired (``Ball.unit_vec`` re-seeds NumPy's global generator from OS
entropy every round; ``opt_by_gradient`` deep-copies the domain every round to shrink it)
by two small subclasses that keep its update. Against our FKM through ``run`` (the
compiled kernel at this size) and ``run_many`` (64 seeds), whole calls (env, comparator
and result included). Rounds per second of CPU time, the three measured in turns. The
regrets are shown too: the Gaussian streams differ, so they agree in distribution, not
bit for bit. Without PyNOL the rows say so.

Run:  python benchmarks/bench_peer.py [--horizon 20000] [--pynol-horizon 100000] [--peer-only]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
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
    eta, delta, variant = float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
    horizon, n = theta.shape

    class RepairedBall(Ball):
        # PyNOL's Ball.unit_vec calls np.random.seed(None) every round (fresh OS entropy
        # for the global generator); here the global generator is seeded once.
        def unit_vec(self, seed=None):
            direction = np.random.normal(size=self.dimension)
            return direction / np.linalg.norm(direction)

    class RepairedBGD(BGDOnePoint):
        # PyNOL's opt_by_gradient builds (1 - shrink) * domain, a deepcopy of the domain,
        # every round; here the shrunk ball is built once. The update is PyNOL's own.
        def opt_by_gradient(self, env):
            if not hasattr(self, "_shrunk"):
                self._shrunk = (1 - self.shrink) * self.domain
            unit_vec = self.domain.unit_vec()
            x1 = self.x + self.scale_perturb * unit_vec
            loss, surrogate_loss = env.get_loss(x1)
            grad = self.get_grad(self.domain.dimension, loss, unit_vec)
            self.x = self.x - self.get_step_size() * grad
            self.x = self._shrunk.project(self.x)
            self.t += 1
            return x1, loss, surrogate_loss

    np.random.seed(0)
    env = Environment(func_sequence=InnerLoss(feature=theta))
    if variant == "shipped":
        learner = BGDOnePoint(Ball(n, radius=1.0), step_size=eta, scale_perturb=delta,
                              prior=np.zeros(n))
    else:
        learner = RepairedBGD(RepairedBall(n, radius=1.0), step_size=eta,
                              scale_perturb=delta, prior=np.zeros(n))
    start = time.process_time()
    _, loss, _, _ = online_learning(horizon, env, learner)
    seconds = time.process_time() - start
    total = math.fsum(loss)
    best = -float(np.linalg.norm(theta.sum(axis=0)))
    print(json.dumps({"cpu_s": seconds, "cumulative_loss": total, "regret": total - best}))
    """
)
#: Where the child finds PyNOL: ``PYNOL_PATH`` (a ``pip install --target`` folder, put on
#: the child's PYTHONPATH, run by this interpreter) or else ``PYNOL_PYTHON``'s own venv.
PYNOL_PATH = os.environ.get("PYNOL_PATH", "")
PEER_REPEATS = 3


def _pynol_call(path: Path, eta: float, delta: float, variant: str) -> dict:
    """One PyNOL run in a child process: its CPU seconds of the loop and its regret."""
    python = sys.executable if PYNOL_PATH else PYNOL_PYTHON
    finished = subprocess.run(
        [python, "-c", PYNOL_CHILD, str(path), repr(eta), repr(delta), variant],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": PYNOL_PATH},
    )
    return json.loads(finished.stdout.strip().splitlines()[-1])


def pynol_peer(horizon: int = PYNOL_HORIZON, seeds: int = PYNOL_SEEDS) -> list[Row]:
    """PyNOL's BGDOnePoint as shipped and repaired against our FKM: rounds per second.

    The three are measured in turns (shipped, repaired, ours; ``PEER_REPEATS`` times),
    each figure the least CPU time of its turns; the load average is recorded.
    """
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
    available = bool(PYNOL_PATH) or Path(PYNOL_PYTHON).exists()
    load_before = os.getloadavg()
    best = {"shipped": math.inf, "repaired": math.inf, "ours": math.inf}
    figures: dict = {}
    single = None
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "theta.npy"
        np.save(path, theta)
        for _ in range(PEER_REPEATS):
            if available:
                for variant in ("shipped", "repaired"):
                    figures[variant] = _pynol_call(path, eta, delta, variant)
                    best[variant] = min(best[variant], figures[variant]["cpu_s"])
            seconds, _, single = cpu_seconds(
                lambda: run(env_id, "fkm", horizon=horizon, seed=SEED, env_kwargs=size)
            )
            best["ours"] = min(best["ours"], seconds)
    batch_cpu, _, batch = cpu_seconds(
        lambda: run_many(env_id, "fkm", list(range(seeds)), horizon=horizon, env_kwargs=size)
    )
    ours = horizon / best["ours"]
    ours_batched = seeds * horizon / batch_cpu
    detail = {
        "case": f"{env_id} n={size['n']}, T={horizon}",
        "eta": eta,
        "delta": delta,
        "ours_single_rounds_per_s": ours,
        "ours_batched_run_rounds_per_s": ours_batched,
        "ours_single_loop": single.loop,
        "ours_batched_loop": batch[0].loop,
        "ours_regret_seed0": single.final_regret,
        "comparator_cpu_s_not_subtracted": comparator,
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "pynol": PYNOL_PATH or PYNOL_PYTHON,
    }
    shipped = repaired = math.nan
    if available:
        shipped, repaired = horizon / best["shipped"], horizon / best["repaired"]
        detail.update(
            {
                "pynol_shipped_rounds_per_s": shipped,
                "pynol_repaired_rounds_per_s": repaired,
                "pynol_shipped_regret": figures["shipped"]["regret"],
                "pynol_repaired_regret": figures["repaired"]["regret"],
            }
        )
    else:
        detail["pynol_missing"] = "set PYNOL_PATH or PYNOL_PYTHON to an install of pynol-xzp"
    note = f"ball n={size['n']}, T={horizon:.0e}"
    return [
        Row(
            "0c peer",
            f"PyNOL BGDOnePoint as shipped ({note})",
            shipped,
            "rounds/s",
            "",
            None,
            detail,
        ),
        Row(
            "0c peer",
            f"PyNOL BGDOnePoint repaired ({note})",
            repaired,
            "rounds/s",
            "",
            None,
            detail,
        ),
        Row("0c peer", f"FKM run() ({note}, whole call)", ours, "rounds/s", "", None, detail),
        Row(
            "0c peer",
            f"FKM run_many({seeds} seeds) ({note}, whole call)",
            ours_batched,
            "run-rounds/s",
            "",
            None,
            detail,
        ),
        Row(
            "0c peer",
            "FKM run() / repaired PyNOL (rounds/s)",
            ours / repaired,
            "x",
            "> 1",
            verdict(ours / repaired, at_least=1.0) if available else None,
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
    parser.add_argument("--peer-only", action="store_true", help="only PyNOL against FKM (rows 0c)")
    args = parser.parse_args()
    if args.peer_only:
        rows = pynol_peer(args.pynol_horizon, args.seeds)
        print(table(rows))
        print(json.dumps(rows[0].detail, indent=1, default=str))
        write_json("peer_pynol", rows)
        return
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
