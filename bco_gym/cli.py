"""The ``bco-gym`` command: run, compare, exponents, tune, plot, list.

Every sub-command is a thin layer over :mod:`bco_gym.experiment` and
:mod:`bco_gym.plotting`; ``main(argv)`` returns the exit code (0 success, 2 for a
usage error: unknown env id or agent name, a bad number or range, an output
directory holding a different sweep).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

USAGE_ERROR = 2
DEFAULT_AGENTS = "bbcg,fkm,bfw,random"
EXPONENT_AGENTS = "bbcg,fkm,bfw,ofw"


class UsageError(ValueError):
    """A command-line value that is not allowed (reported with exit code 2)."""


# -- argument types -------------------------------------------------------------------------------
def positive_int(text: str) -> int:
    """An integer >= 1; scientific notation such as 1e5 is accepted when integral."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value != int(value) or value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} must be a positive integer")
    return int(value)


def non_negative_int(text: str) -> int:
    """An integer >= 0 (1e3 notation accepted when integral)."""
    if not _is_number(text) or float(text) != int(float(text)) or float(text) < 0:
        raise argparse.ArgumentTypeError(f"{text!r} must be a non-negative integer")
    return int(float(text))


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def seed_list(text: str) -> list[int]:
    """``K`` (seeds 0..K-1) or ``A:B`` (seeds A..B-1, half-open as in Python)."""
    if ":" not in text:
        return list(range(positive_int(text)))
    start_text, _, stop_text = text.partition(":")
    start, stop = non_negative_int(start_text), non_negative_int(stop_text)
    if stop <= start:
        raise argparse.ArgumentTypeError(f"seed range {text!r} is empty; use A:B with B > A")
    return list(range(start, stop))


def positive_range(text: str) -> tuple[float, float]:
    """``LOW:HIGH`` with 0 < LOW < HIGH (floats; 1e3 notation allowed)."""
    low_text, separator, high_text = text.partition(":")
    if not separator or not (_is_number(low_text) and _is_number(high_text)):
        raise argparse.ArgumentTypeError(f"{text!r} must be a range LOW:HIGH of numbers")
    low, high = float(low_text), float(high_text)
    if not 0 < low < high:
        raise argparse.ArgumentTypeError(f"range {text!r} must satisfy 0 < LOW < HIGH")
    return low, high


def name_list(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"{text!r} names nothing; give a comma-separated list")
    if len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"{text!r} repeats a name")
    return names


def json_object(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(f"{text!r} is not valid JSON: {error}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(f"{text!r} must be a JSON object, e.g. '{{\"n\": 20}}'")
    return value


# -- the parser -----------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bco-gym",
        description="Bandit convex optimization experiments: run agents on BCO-*-v0 envs, "
        "compare them, fit regret exponents, tune constants, plot saved results.",
    )
    parser.add_argument("--version", action="version", version=f"bco_gym {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_run(commands)
    _add_compare(commands)
    _add_exponents(commands)
    _add_tune(commands)
    plot = commands.add_parser("plot", help="re-draw figures and tables from a sweep directory")
    plot.add_argument("directory", type=Path, help="a directory written by compare/exponents")
    plot.set_defaults(handler=command_plot)
    listing = commands.add_parser("list", help="show env ids, agent names and loss families")
    listing.set_defaults(handler=command_list)
    return parser


def _version() -> str:
    from bco_gym import __version__

    return __version__


def _add_common(command: argparse.ArgumentParser, *, sweep: bool) -> None:
    command.add_argument(
        "--env-kwargs",
        type=json_object,
        default={},
        help='extra gym.make arguments as JSON, e.g. \'{"n": 20, "loss": "linear"}\'',
    )
    command.add_argument("--quiet", action="store_true", help="no progress bars")
    if sweep:
        command.add_argument(
            "--backend",
            choices=("serial", "process", "ray"),
            default="serial",
            help="where cells run: this process, a process pool (os.cpu_count() workers) "
            "or Ray (default: serial)",
        )
        command.add_argument(
            "--ray-address", default=None, help="join this Ray cluster (default: local instance)"
        )


def _add_loop_flag(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--gym-loop",
        action="store_true",
        help="play every round through the Gymnasium loop (env.step + RegretRecorder) instead "
        "of the runner's fast path (block agents) or lean per-round loop; same results, slower",
    )


def _add_run(commands: Any) -> None:
    command = commands.add_parser("run", help="one agent, one env, one seed")
    command.add_argument("--env", default="BCO-Simplex-v0", help="env id (see `bco-gym list`)")
    command.add_argument("--agent", default="bbcg", help="agent name (see `bco-gym list`)")
    command.add_argument(
        "--horizon", type=positive_int, default=None, help="T (default: the env's own)"
    )
    command.add_argument("--seed", type=non_negative_int, default=0, help="env seed (default 0)")
    command.add_argument(
        "--agent-kwargs", type=json_object, default={}, help="agent overrides as JSON"
    )
    command.add_argument("--out", type=Path, default=None, help="save the result as this .json")
    _add_common(command, sweep=False)
    _add_loop_flag(command)
    command.set_defaults(handler=command_run)


def _add_compare(commands: Any) -> None:
    command = commands.add_parser(
        "compare",
        help="several agents over seeds: table + regret.png",
        description="Run each agent on the env for the given seeds and print mean ± std of "
        "the final regret, regret/T^(3/4), the theory bound, LMO calls and projections per "
        "round and rounds/s; write regret.png, table.md and table.csv into --out. The "
        "'constants' column says whether an agent ran with its theory defaults or with "
        "constants from --tuned.",
    )
    command.add_argument("--env", default="BCO-Simplex-v0", help="env id (default BCO-Simplex-v0)")
    command.add_argument(
        "--agents",
        type=name_list,
        default=name_list(DEFAULT_AGENTS),
        help=f"default {DEFAULT_AGENTS}",
    )
    command.add_argument("--horizon", type=positive_int, default=10_000, help="T (default 10000)")
    command.add_argument(
        "--seeds",
        type=seed_list,
        default=seed_list("5"),
        help="K (seeds 0..K-1) or A:B (default 5)",
    )
    command.add_argument(
        "--out", type=Path, default=Path("results/compare"), help="sweep directory"
    )
    command.add_argument(
        "--tuned", type=Path, default=None, help="tuned-constants JSON written by `bco-gym tune`"
    )
    _add_common(command, sweep=True)
    _add_loop_flag(command)
    command.set_defaults(handler=command_compare)


def _add_exponents(commands: Any) -> None:
    command = commands.add_parser(
        "exponents",
        help="fitted regret exponents vs theory (the paper's Table 1)",
        description="For each agent, fit the slope of log(mean final regret) against log T "
        "over log-spaced horizons, with a bootstrap-over-seeds confidence interval, beside the "
        "theoretical exponent (bbcg 3/4, fkm 3/4, ofw 3/4 with full information, bfw 4/5, "
        "ogd 1/2) and the LMO calls per round. The default instance is BCO-Ball-v0 with linear "
        "losses (r = R, so the theorem parameters are non-degenerate from small T). On the "
        "simplex, T >= 1e5 is needed before slopes mean anything: below that the theory's "
        "smoothing radius is capped at the inner radius r. Full-information agents (ofw, ogd) "
        "make the env use feedback='full'; bandit agents ignore the gradient.",
    )
    command.add_argument("--env", default="BCO-Ball-v0", help="env id (default BCO-Ball-v0)")
    command.add_argument(
        "--agents",
        type=name_list,
        default=name_list(EXPONENT_AGENTS),
        help=f"default {EXPONENT_AGENTS}",
    )
    command.add_argument(
        "--horizons", type=positive_range, default=(1e3, 1e5), help="LOW:HIGH (default 1e3:1e5)"
    )
    command.add_argument(
        "--points", type=positive_int, default=4, help="number of log-spaced horizons (default 4)"
    )
    command.add_argument(
        "--seeds", type=seed_list, default=seed_list("4"), help="K or A:B (default 4)"
    )
    command.add_argument(
        "--out", type=Path, default=Path("results/exponents"), help="sweep directory"
    )
    command.add_argument("--tuned", type=Path, default=None, help="tuned-constants JSON")
    _add_common(command, sweep=True)
    _add_loop_flag(command)
    command.set_defaults(handler=command_exponents)


def _add_tune(commands: Any) -> None:
    command = commands.add_parser(
        "tune",
        help="grid-search each agent's free constant on tuning seeds",
        description="For each agent, try a log-spaced grid of absolute values of its free "
        "constant (SCALE_PARAM: bbcg's c, the others' scale) on the tuning seeds, keep the "
        "value with the least mean final regret, and write the choice (with the tuning seeds) "
        "to --out for `compare --tuned`. Evaluate on seeds disjoint from the tuning seeds: "
        "compare refuses overlapping ones.",
    )
    command.add_argument("--env", default="BCO-Simplex-v0", help="env id (default BCO-Simplex-v0)")
    command.add_argument(
        "--agents", type=name_list, default=name_list("bbcg,fkm,bfw"), help="default bbcg,fkm,bfw"
    )
    command.add_argument("--horizon", type=positive_int, default=10_000, help="T (default 10000)")
    command.add_argument(
        "--tune-seeds",
        type=seed_list,
        default=seed_list("100:105"),
        help="A:B (half-open) or K; default 100:105, disjoint from compare's default 0..4",
    )
    command.add_argument(
        "--grid", type=positive_range, default=(0.03, 30.0), help="LOW:HIGH (default 0.03:30)"
    )
    command.add_argument(
        "--points", type=positive_int, default=7, help="grid points, log-spaced (default 7)"
    )
    command.add_argument(
        "--out", type=Path, default=Path("results/tuned_constants.json"), help="JSON to write"
    )
    command.add_argument(
        "--sweep-dir",
        type=Path,
        default=None,
        help="directory of the tuning runs (default: beside --out, named <out stem>_runs)",
    )
    _add_common(command, sweep=True)
    command.set_defaults(handler=command_tune)


# -- main -----------------------------------------------------------------------------------------
def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``bco-gym`` command line; returns the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:
        return int(stop.code or 0) if not isinstance(stop.code, str) else USAGE_ERROR
    import bco_gym  # noqa: F401  (registers the env ids)

    try:
        return int(args.handler(args) or 0)
    except (ValueError, ImportError) as error:
        print(f"bco-gym {args.command}: error: {error}", file=sys.stderr)
        return USAGE_ERROR


# -- validation -----------------------------------------------------------------------------------
def check_env(env_id: str) -> str:
    from bco_gym.experiment.runner import check_env_id

    try:
        return check_env_id(env_id)
    except ValueError as error:
        raise UsageError(str(error)) from None


def check_agents(names: Sequence[str]) -> list[str]:
    from bco_gym.agents import AGENTS

    unknown = [name for name in names if name not in AGENTS]
    if unknown:
        raise UsageError(
            f"unknown agent name(s) {', '.join(map(repr, unknown))}; "
            f"valid names: {', '.join(AGENTS)}"
        )
    return list(names)


def env_kwargs_for(agents: Sequence[str], env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """``env_kwargs``, with feedback='full' added when a full-information agent is listed."""
    from bco_gym.agents import AGENTS

    full = [name for name in agents if getattr(AGENTS[name], "feedback", "bandit") == "full"]
    if full and "feedback" not in env_kwargs:
        print(
            f"note: {', '.join(full)} need full information; the env uses feedback='full' "
            "(bandit agents only read the loss)",
            file=sys.stderr,
        )
        return {**env_kwargs, "feedback": "full"}
    return dict(env_kwargs)


def tuned_overrides(
    path: Path | None,
    env_id: str,
    env_kwargs: dict[str, Any],
    horizon: int | None,
    agents: Sequence[str],
    seeds: Sequence[int],
) -> tuple[dict[str, dict[str, float]], dict[str, str]]:
    """(agent_kwargs, constants labels) from a tuned-constants file, after the checks."""
    if path is None:
        return {}, {}
    from bco_gym.experiment.tuning import check_disjoint, load_tuned

    tuning = load_tuned(path)
    check_disjoint(tuning, seeds)
    if tuning.env_id != env_id:
        _warn(f"constants in {path} were tuned on {tuning.env_id}, not {env_id}")
    if tuning.env_kwargs != env_kwargs:
        _warn(
            f"constants in {path} were tuned with env kwargs {tuning.env_kwargs}, not {env_kwargs}"
        )
    if horizon is not None and tuning.horizon != horizon:
        _warn(f"constants in {path} were tuned at T={tuning.horizon}, evaluated at T={horizon}")
    overrides = {a: v for a, v in tuning.overrides().items() if a in agents}
    return overrides, {agent: "tuned" for agent in overrides}


def _warn(message: str) -> None:
    print(f"WARNING: {message}", file=sys.stderr)


def _progress(args: argparse.Namespace) -> bool | None:
    return False if args.quiet else None


def _fast(args: argparse.Namespace) -> bool | None:
    """run()'s ``fast``: False with --gym-loop, else None (the fastest loop that applies)."""
    return False if args.gym_loop else None


# -- commands -------------------------------------------------------------------------------------
def command_run(args: argparse.Namespace) -> int:
    from bco_gym.experiment import run, save_result

    check_env(args.env)
    check_agents([args.agent])
    env_kwargs = env_kwargs_for([args.agent], args.env_kwargs)
    result = run(
        args.env,
        args.agent,
        horizon=args.horizon,
        seed=args.seed,
        env_kwargs=env_kwargs,
        agent_kwargs=args.agent_kwargs,
        progress=_progress(args),
        fast=_fast(args),
    )
    horizon = result.horizon
    scale = f"{result.scale_param}={result.scale_value:.4g}" if result.scale_value else ""
    print(
        f"{result.env_id}  {result.agent} ({result.constants} {scale})  T={horizon}  "
        f"seed={result.seed}"
    )
    bound = "-" if result.regret_bound is None else f"{result.regret_bound:.4g}"
    print(
        f"regret {result.final_regret:.6g} (comparator gap {result.final_gap:.2g})  "
        f"regret/T^(3/4) {result.final_regret / horizon**0.75:.4g}  bound {bound}"
    )
    print(
        f"LMO calls/round {result.lmo_calls / horizon:.3g}  "
        f"projections/round {result.projections / horizon:.3g}"
    )
    print(
        f"time: agent {result.agent_seconds:.3g} s, env {result.env_seconds:.3g} s, "
        f"comparator {result.comparator_seconds:.3g} s ({result.rounds_per_second:,.0f} rounds/s, "
        f"{result.loop} loop)"
    )
    if args.out is not None:
        print(f"wrote {save_result(args.out, result)}")
    return 0


def command_compare(args: argparse.Namespace) -> int:
    check_env(args.env)
    agents = check_agents(args.agents)
    results = _sweep_agents(args, agents, [args.horizon], tuned_horizon=args.horizon)
    report_compare(results, args.out)
    return 0


def command_exponents(args: argparse.Namespace) -> int:
    check_env(args.env)
    agents = check_agents(args.agents)
    if args.points < 2:
        raise UsageError(f"--points {args.points}: an exponent needs at least 2 horizons")
    horizons = log_horizons(*args.horizons, args.points)
    results = _sweep_agents(args, agents, horizons, tuned_horizon=None)
    report_exponents(results, args.out)
    return 0


def _sweep_agents(
    args: argparse.Namespace, agents: list[str], horizons: list[int], tuned_horizon: int | None
) -> list:
    """The sweep behind ``compare`` and ``exponents``: one env, the agents (with tuned
    constants from --tuned), the horizons and --seeds; prints the runs' warnings."""
    from bco_gym.experiment import sweep

    env_kwargs = env_kwargs_for(agents, args.env_kwargs)
    overrides, labels = tuned_overrides(
        args.tuned, args.env, env_kwargs, tuned_horizon, agents, args.seeds
    )
    results = sweep(
        [args.env],
        agents,
        horizons,
        args.seeds,
        out=args.out,
        backend=args.backend,
        env_kwargs=env_kwargs,
        agent_kwargs=overrides,
        constants=labels,
        progress=_progress(args),
        ray_address=args.ray_address,
        fast=_fast(args),
    )
    report_warnings(results)
    return results


def log_horizons(low: float, high: float, points: int) -> list[int]:
    """``points`` log-spaced integer horizons from ``low`` to ``high`` (duplicates merged)."""
    if low < 1:
        raise UsageError(f"horizons start at {low:g}; the smallest horizon is 1")
    values = sorted(set(np.rint(np.geomspace(low, high, points)).astype(int).tolist()))
    if len(values) < 2:
        raise UsageError(f"horizons {low:g}:{high:g} with {points} points give {values}")
    return values


def command_tune(args: argparse.Namespace) -> int:
    from bco_gym.experiment.tuning import log_grid, save_tuned, tune

    check_env(args.env)
    agents = check_agents(args.agents)
    if args.points < 2:
        raise UsageError(f"--points {args.points}: a grid needs at least 2 points")
    grid = log_grid(*args.grid, args.points)
    out = args.out
    sweep_dir = args.sweep_dir or out.with_name(out.stem + "_runs")
    tuning = tune(
        args.env,
        agents,
        args.horizon,
        args.tune_seeds,
        grid,
        out=sweep_dir,
        backend=args.backend,
        env_kwargs=env_kwargs_for(agents, args.env_kwargs),
        progress=_progress(args),
        ray_address=args.ray_address,
    )
    from bco_gym.experiment.summary import render_text

    header = ["agent", "param", "theory value", "tuned value", "mean regret (tuned)", "grid scores"]
    body = [
        [
            agent,
            choice.param,
            "-" if choice.theory_value is None else f"{choice.theory_value:.4g}",
            f"{choice.value:.4g}",
            f"{choice.mean_regret:.4g}",
            " ".join(f"{score:.3g}" for score in choice.scores),
        ]
        for agent, choice in tuning.constants.items()
    ]
    print(
        f"{args.env}, T={args.horizon}, tuning seeds {list(tuning.tune_seeds)}, "
        f"grid {' '.join(f'{v:g}' for v in grid)}"
    )
    print(render_text(header, body))
    for agent, reason in tuning.skipped.items():
        print(f"{agent}: skipped, {reason}")
    print(f"wrote {save_tuned(out, tuning)} (runs in {sweep_dir})")
    return 0


def command_plot(args: argparse.Namespace) -> int:
    from bco_gym.experiment import load_sweep

    results = load_sweep(args.directory)
    if not results:
        raise UsageError(f"{args.directory} holds no finished cells yet")
    if len({r.horizon for r in results}) > 1:
        report_exponents(results, args.directory)
    else:
        report_compare(results, args.directory)
    return 0


def command_list(args: argparse.Namespace) -> int:
    from bco_gym.agents import AGENTS
    from bco_gym.envs import ENV_IDS

    print("env ids:")
    for env_id in ENV_IDS:
        print(f"  {env_id}")
    print("agents:")
    for name, cls in AGENTS.items():
        summary = (cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else ""
        feedback = getattr(cls, "feedback", "bandit")
        scale = getattr(cls, "SCALE_PARAM", None) or "-"
        print(f"  {name:<8} {cls.__name__:<24} feedback={feedback:<6} scale={scale:<8} {summary}")
    try:
        from bco_gym.losses import FAMILIES
    except ImportError:
        return 0
    print("loss families:")
    for name in FAMILIES:
        print(f"  {name}")
    return 0


def report_warnings(results: Sequence[Any]) -> None:
    """Each distinct warning the runs raised, once, with the runs it concerns (stderr)."""
    seen: dict[str, list[str]] = {}
    for result in results:
        for message in result.warnings:
            seen.setdefault(message, []).append(f"{result.agent}/T={result.horizon}")
    for message, runs in seen.items():
        where = ", ".join(dict.fromkeys(runs))
        print(f"warning ({len(runs)} runs: {where}): {message}", file=sys.stderr)


# -- reports --------------------------------------------------------------------------------------
def report_compare(results: Sequence[Any], out: Path) -> None:
    """Print the compare table; write table.md, table.csv and regret.png into ``out``."""
    from bco_gym.experiment.summary import (
        compare_columns,
        render_csv,
        render_markdown,
        render_text,
        summarize,
    )
    from bco_gym.plotting import plot_regret

    rows = summarize(results)
    header, body = compare_columns(rows)
    first = results[0]
    print(
        f"{first.env_id}  T={first.horizon}  seeds={sorted({r.seed for r in results})}  "
        f"loss={first.loss.get('name')}"
    )
    print(render_text(header, body))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "table.md").write_text(render_markdown(header, body) + "\n", encoding="utf-8")
    (out / "table.csv").write_text(render_csv(rows), encoding="utf-8")
    figure = plot_regret(results, out / "regret.png")
    print(f"wrote {out / 'table.md'}, {out / 'table.csv'}, {figure}")


def report_exponents(results: Sequence[Any], out: Path) -> None:
    """Print the exponents table; write exponents.md, exponents.csv and exponents.png."""
    from bco_gym.experiment.summary import (
        exponent_columns,
        fit_exponents,
        render_csv,
        render_markdown,
        render_text,
    )
    from bco_gym.plotting import plot_exponents

    fits = fit_exponents(results)
    header, body = exponent_columns(fits)
    print(
        f"{results[0].env_id}  loss={results[0].loss.get('name')}  "
        "slope: least squares of log mean regret on log T; CI: bootstrap over seeds"
    )
    print(render_text(header, body))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "exponents.md").write_text(render_markdown(header, body) + "\n", encoding="utf-8")
    (out / "exponents.csv").write_text(render_csv(fits), encoding="utf-8")
    figure = plot_exponents(fits, out / "exponents.png")
    print(f"wrote {out / 'exponents.md'}, {out / 'exponents.csv'}, {figure}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
