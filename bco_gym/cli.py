"""The ``bco-gym`` command: run, compare, exponents, tune, plot, list.

Every sub-command is a thin layer over :mod:`bco_gym.experiment` and
:mod:`bco_gym.plotting`; ``main(argv)`` returns the exit code: 0 success, 2 for a
usage error (unknown env id or agent name, a bad number, range or size, env or agent
kwargs the env or agent refuses, an output path that cannot be written, a directory
holding a different sweep or locked by another process, a malformed or tampered file),
reported on one line ``bco-gym COMMAND: error: ...``. Every argument is checked
(:mod:`bco_gym.cli_checks`) before anything is computed or written.

Default output directories depend on what is computed, so different commands never
meet in one: ``results/compare/<env>_<agents>_T<horizon>`` and
``results/exponents/<env>_<agents>_T<low>-<high>x<points>``, with ``_<8 hex digits>``
appended when --env-kwargs, --tuned or --gym-loop are given (:func:`default_out`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import re
import secrets
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import numpy as np

from bco_gym.cli_checks import (
    MAX_HORIZON,
    MAX_POINTS,
    MAX_SEED,
    MAX_SEEDS,
    UsageError,
    check_agent_names,
    check_cell_count,
    check_env_id,
    check_input_directory,
    check_instance,
    check_output_directory,
    check_output_file,
    load_tuned_checked,
)

USAGE_ERROR = 2
DEFAULT_AGENTS = "bbcg,fkm,bfw,random"
EXPONENT_AGENTS = "bbcg,fkm,bfw,ofw"
COMPARE_OUTPUTS = ("table.md", "table.csv", "regret.png")
EXPONENT_OUTPUTS = ("exponents.md", "exponents.csv", "exponents.png")


# -- argument types -------------------------------------------------------------------------------
def _integer(text: str, low: int, high: int, what: str) -> int:
    """An integer in [low, high]; 1e5 notation accepted when integral; limit named."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value != int(value) or value < low:
        raise argparse.ArgumentTypeError(f"{text!r} must be {what}")
    if value > high:
        raise argparse.ArgumentTypeError(f"{text!r} exceeds the limit of {high:,}")
    exact = int(text) if text.strip().lstrip("+").isdigit() else int(value)
    if exact > high:
        raise argparse.ArgumentTypeError(f"{text!r} exceeds the limit of {high:,}")
    return exact


def positive_int(text: str) -> int:
    """An integer >= 1 (at most MAX_HORIZON); scientific notation such as 1e5 accepted."""
    return _integer(text, 1, MAX_HORIZON, "a positive integer")


def horizon_int(text: str) -> int:
    """A horizon T in 1..MAX_HORIZON."""
    return _integer(text, 1, MAX_HORIZON, "a positive integer (rounds)")


def points_int(text: str) -> int:
    """A number of grid or horizon points in 1..MAX_POINTS."""
    return _integer(text, 1, MAX_POINTS, "a positive integer")


def non_negative_int(text: str) -> int:
    """A seed: an integer in 0..2^63-1 (1e3 notation accepted when integral)."""
    return _integer(text, 0, MAX_SEED, "a non-negative integer")


def seed_list(text: str) -> list[int]:
    """``K`` (seeds 0..K-1) or ``A:B`` (seeds A..B-1, half-open as in Python); at most
    MAX_SEEDS seeds."""
    if ":" not in text:
        return list(range(_integer(text, 1, MAX_SEEDS, "a positive integer (seed count)")))
    start_text, _, stop_text = text.partition(":")
    start, stop = non_negative_int(start_text), non_negative_int(stop_text)
    if stop <= start:
        raise argparse.ArgumentTypeError(f"seed range {text!r} is empty; use A:B with B > A")
    if stop - start > MAX_SEEDS:
        raise argparse.ArgumentTypeError(
            f"seed range {text!r} holds {stop - start:,} seeds, "
            f"more than the limit of {MAX_SEEDS:,}"
        )
    return list(range(start, stop))


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False


def positive_range(text: str) -> tuple[float, float]:
    """``LOW:HIGH`` with 0 < LOW < HIGH (finite floats; 1e3 notation allowed)."""
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
    except (json.JSONDecodeError, RecursionError) as error:
        raise argparse.ArgumentTypeError(f"{text[:80]!r} is not valid JSON: {error}") from None
    if not isinstance(value, dict):
        raise argparse.ArgumentTypeError(
            f"{text[:80]!r} must be a JSON object, e.g. '{{\"n\": 20}}'"
        )
    return value


class Parser(argparse.ArgumentParser):
    """argparse, with usage errors reported on one line (exit code 2)."""

    def error(self, message: str) -> NoReturn:
        self.exit(USAGE_ERROR, f"{self.prog}: error: {' '.join(message.split())} (see --help)\n")


# -- the parser -----------------------------------------------------------------------------------
def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
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
    command.add_argument(
        "--quiet",
        action="store_true",
        help="no progress (default: a bar on a terminal, else a line per finished run)",
    )
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
        "--horizon",
        type=horizon_int,
        default=None,
        help=f"T, at most {MAX_HORIZON:.0e} (default: the env's own)",
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
    command.add_argument("--horizon", type=horizon_int, default=10_000, help="T (default 10000)")
    command.add_argument(
        "--seeds",
        type=seed_list,
        default=seed_list("5"),
        help="K (seeds 0..K-1) or A:B (default 5)",
    )
    command.add_argument(
        "--out",
        type=Path,
        default=None,
        help="sweep directory (default: results/compare/<env>_<agents>_T<horizon>[_<digest of "
        "--env-kwargs, --tuned, --gym-loop>]); an existing one grows by new seeds or agents",
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
        "--points", type=points_int, default=4, help="number of log-spaced horizons (default 4)"
    )
    command.add_argument(
        "--seeds", type=seed_list, default=seed_list("4"), help="K or A:B (default 4)"
    )
    command.add_argument(
        "--out",
        type=Path,
        default=None,
        help="sweep directory (default: results/exponents/<env>_<agents>_T<low>-<high>x<points>"
        "[_<digest of --env-kwargs, --tuned, --gym-loop>])",
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
    command.add_argument("--horizon", type=horizon_int, default=10_000, help="T (default 10000)")
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
        "--points", type=points_int, default=7, help="grid points, log-spaced (default 7)"
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
# What a command may raise for a bad invocation or bad files (anything else is a bug).
REPORTED_ERRORS = (ValueError, ImportError, OSError, MemoryError)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``bco-gym`` command line; returns the exit code (2: a usage error, reported
    on one line ``bco-gym COMMAND: error: ...``)."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:
        return int(stop.code or 0) if not isinstance(stop.code, str) else USAGE_ERROR
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        warnings.showwarning = _WarningPrinter()
        try:
            return int(args.handler(args) or 0)
        except REPORTED_ERRORS as error:
            print(f"bco-gym {args.command}: error: {_one_line(error)}", file=sys.stderr)
            return USAGE_ERROR
        except KeyboardInterrupt:
            print(f"bco-gym {args.command}: interrupted", file=sys.stderr)
            return 130


def _one_line(error: BaseException) -> str:
    text = " ".join(str(error).split())
    if isinstance(error, OSError) and error.filename is not None:
        text = f"{error.strerror or type(error).__name__}: {error.filename!r}"
    if isinstance(error, MemoryError):
        text = f"out of memory ({text or 'MemoryError'})"
    return sanitize(text or type(error).__name__)


class _WarningPrinter:
    """``warnings.showwarning`` for the CLI: each distinct warning once, on one line."""

    def __init__(self) -> None:
        self.seen: set[str] = set()

    def __call__(self, message: Any, category: type[Warning], *_: Any, **__: Any) -> None:
        text = sanitize(" ".join(str(message).split()))
        if text not in self.seen:
            self.seen.add(text)
            print(f"warning: {category.__name__}: {text}", file=sys.stderr)


def sanitize(text: str) -> str:
    """``text`` without control characters (no terminal escape sequences)."""
    from bco_gym.experiment.summary import sanitize_text

    return sanitize_text(text)


# -- shared steps ---------------------------------------------------------------------------------
def env_kwargs_for(agents: Sequence[str], env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """``env_kwargs``, with feedback='full' added when a full-information agent is listed."""
    if _full_information(agents) and "feedback" not in env_kwargs:
        return {**env_kwargs, "feedback": "full"}
    return dict(env_kwargs)


def _full_information(agents: Sequence[str]) -> list[str]:
    from bco_gym.agents import AGENTS

    return [name for name in agents if getattr(AGENTS[name], "feedback", "bandit") == "full"]


def announce_feedback(agents: Sequence[str], given: dict[str, Any]) -> None:
    """The note saying the env was switched to full information (after every check)."""
    full = _full_information(agents)
    if full and "feedback" not in given:
        print(
            f"note: {', '.join(full)} need full information; the env uses feedback='full' "
            "(bandit agents only read the loss)",
            file=sys.stderr,
        )


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
    from bco_gym.experiment.tuning import check_disjoint

    tuning = load_tuned_checked(path)
    try:
        check_disjoint(tuning, seeds)
    except ValueError as error:
        raise UsageError(str(error)) from None
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
    print(f"warning: {sanitize(message)}", file=sys.stderr)


def _progress(args: argparse.Namespace) -> bool | str:
    """Sweeps' progress: none with --quiet, a bar on a terminal, else a line per cell."""
    if args.quiet:
        return False
    return True if sys.stderr.isatty() else "lines"


def _fast(args: argparse.Namespace) -> bool | None:
    """run()'s ``fast``: False with --gym-loop, else None (the fastest loop that applies)."""
    return False if args.gym_loop else None


def default_out(command: str, args: argparse.Namespace, agents: Sequence[str], axis: str) -> Path:
    """``results/<command>/<env>_<agents>_<axis>``, plus a digest of whatever else makes
    the sweep differ (env kwargs, tuned file, --gym-loop), so different sweeps never meet."""
    name = f"{args.env.split(':')[-1]}_{'-'.join(agents)}_{axis}"
    extra = {
        "env_kwargs": args.env_kwargs,
        "tuned": None if args.tuned is None else str(args.tuned),
        "gym_loop": bool(args.gym_loop),
    }
    if extra != {"env_kwargs": {}, "tuned": None, "gym_loop": False}:
        canonical = json.dumps(extra, sort_keys=True).encode()
        name += "_" + hashlib.sha256(canonical).hexdigest()[:8]
    return Path("results") / command / re.sub(r"[^A-Za-z0-9._+-]+", "-", name)


def _matplotlib_missing() -> str | None:
    """None when figures can be drawn, else the one-line note saying why not."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return 'matplotlib is not installed (pip install "bco_gym[plot]"): tables only, no figure'
    return None


# -- commands -------------------------------------------------------------------------------------
def command_run(args: argparse.Namespace) -> int:
    from bco_gym.experiment import run, save_result

    check_env_id(args.env)
    check_agent_names([args.agent])
    if args.out is not None:
        check_output_file(args.out)
    env_kwargs = env_kwargs_for([args.agent], args.env_kwargs)
    check_instance(
        args.env, env_kwargs, args.horizon, [args.agent], {args.agent: args.agent_kwargs}
    )
    announce_feedback([args.agent], args.env_kwargs)
    result = run(
        args.env,
        args.agent,
        horizon=args.horizon,
        seed=args.seed,
        env_kwargs=env_kwargs,
        agent_kwargs=args.agent_kwargs,
        progress=False if args.quiet else None,
        fast=_fast(args),
    )
    horizon = result.horizon
    scale = f"{result.scale_param}={result.scale_value:.4g}" if result.scale_value else ""
    print(
        sanitize(
            f"{result.env_id}  {result.agent} ({result.constants} {scale})  T={horizon}  "
            f"seed={result.seed}"
        )
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
    agents = _check_sweep_names(args)
    out = args.out or default_out("compare", args, agents, f"T{args.horizon}")
    results = _sweep_agents(args, agents, [args.horizon], out, COMPARE_OUTPUTS, args.horizon)
    report_compare(results, out)
    return 0


def command_exponents(args: argparse.Namespace) -> int:
    agents = _check_sweep_names(args)
    if args.points < 2:
        raise UsageError(f"--points {args.points}: an exponent needs at least 2 horizons")
    low, high = args.horizons
    if high > MAX_HORIZON:
        raise UsageError(f"--horizons {high:g} exceeds the limit of {MAX_HORIZON:,} rounds")
    horizons = log_horizons(low, high, args.points)
    axis = f"T{horizons[0]}-{horizons[-1]}x{len(horizons)}"
    out = args.out or default_out("exponents", args, agents, axis)
    results = _sweep_agents(args, agents, horizons, out, EXPONENT_OUTPUTS, None)
    report_exponents(results, out)
    return 0


def _check_sweep_names(args: argparse.Namespace) -> list[str]:
    check_env_id(args.env)
    return check_agent_names(args.agents)


def _sweep_agents(
    args: argparse.Namespace,
    agents: list[str],
    horizons: list[int],
    out: Path,
    outputs: Sequence[str],
    tuned_horizon: int | None,
) -> list:
    """The sweep behind ``compare`` and ``exponents``: every argument checked first, then
    one env, the agents (with tuned constants from --tuned), the horizons and --seeds,
    under ``out``'s lock; prints the runs' warnings once each."""
    from bco_gym.experiment import sweep
    from bco_gym.experiment.store import DirectoryLock

    check_output_directory(out, outputs=outputs)
    check_cell_count(len(agents) * len(horizons) * len(args.seeds))
    env_kwargs = env_kwargs_for(agents, args.env_kwargs)
    overrides, labels = tuned_overrides(
        args.tuned, args.env, env_kwargs, tuned_horizon, agents, args.seeds
    )
    check_instance(args.env, env_kwargs, horizons[0], agents, overrides)
    announce_feedback(agents, args.env_kwargs)
    missing = _matplotlib_missing()
    if missing:
        print(f"note: {missing}", file=sys.stderr)
    with DirectoryLock(out):
        results = sweep(
            [args.env],
            agents,
            horizons,
            args.seeds,
            out=out,
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
    from bco_gym.experiment.store import DirectoryLock
    from bco_gym.experiment.tuning import log_grid, save_tuned, tune

    check_env_id(args.env)
    agents = check_agent_names(args.agents)
    if args.points < 2:
        raise UsageError(f"--points {args.points}: a grid needs at least 2 points")
    out = check_output_file(args.out)
    sweep_dir = args.sweep_dir or out.with_name(out.stem + "_runs")
    check_output_directory(sweep_dir, "--sweep-dir")
    check_cell_count(len(agents) * args.points * len(args.tune_seeds))
    grid = log_grid(*args.grid, args.points)
    env_kwargs = env_kwargs_for(agents, args.env_kwargs)
    check_instance(args.env, env_kwargs, args.horizon, agents, {})
    announce_feedback(agents, args.env_kwargs)
    with DirectoryLock(sweep_dir):
        tuning = tune(
            args.env,
            agents,
            args.horizon,
            args.tune_seeds,
            grid,
            out=sweep_dir,
            backend=args.backend,
            env_kwargs=env_kwargs,
            progress=_progress(args),
            ray_address=args.ray_address,
        )
        path = save_tuned(out, tuning)
    print_tuning(args, tuning, grid)
    print(f"wrote {path} (runs in {sweep_dir})")
    return 0


def print_tuning(args: argparse.Namespace, tuning: Any, grid: Sequence[float]) -> None:
    from bco_gym.experiment.summary import format_column, render_text

    chosen = list(tuning.constants.items())
    theory = format_column([c.theory_value for _, c in chosen], 4)
    values = format_column([c.value for _, c in chosen], 4)
    regrets = format_column([c.mean_regret for _, c in chosen], 4)
    header = ["agent", "param", "theory value", "tuned value", "mean regret (tuned)", "grid scores"]
    body = [
        [agent, c.param, theory[i], values[i], regrets[i], " ".join(format_column(c.scores, 3))]
        for i, (agent, c) in enumerate(chosen)
    ]
    print(
        f"{args.env}, T={args.horizon}, tuning seeds {list(tuning.tune_seeds)}, "
        f"grid {' '.join(f'{v:g}' for v in grid)}"
    )
    print(render_text(header, body))
    for agent, reason in tuning.skipped.items():
        print(f"{agent}: skipped, {reason}")


def command_plot(args: argparse.Namespace) -> int:
    from bco_gym.experiment import load_sweep
    from bco_gym.experiment.store import DirectoryLock, SweepStore

    directory = check_input_directory(args.directory)
    store = SweepStore(directory)
    total = len(store.read_manifest()["spec"]["cells"])
    results = load_sweep(directory)
    if not results:
        raise UsageError(f"{str(directory)!r} holds no finished cells yet")
    if len(results) < total:
        _warn(f"{total - len(results)} of {total} cells are not computed yet; showing the rest")
    several = len({r.horizon for r in results}) > 1
    check_output_directory(directory, outputs=EXPONENT_OUTPUTS if several else COMPARE_OUTPUTS)
    with DirectoryLock(directory):
        if several:
            report_exponents(results, directory)
        else:
            report_compare(results, directory)
    return 0


def command_list(args: argparse.Namespace) -> int:
    from bco_gym.agents import AGENTS
    from bco_gym.envs import ENV_IDS
    from bco_gym.experiment.summary import render_text

    print("env ids:")
    for env_id in ENV_IDS:
        print(f"  {env_id}")
    print("agents:")
    rows = [
        [
            name,
            cls.__name__,
            getattr(cls, "feedback", "bandit"),
            getattr(cls, "SCALE_PARAM", None) or "-",
            plain_summary(cls.__doc__),
        ]
        for name, cls in AGENTS.items()
    ]
    table = render_text(["name", "class", "feedback", "scale", "summary"], rows)
    print("\n".join("  " + line for line in table.splitlines()))
    try:
        from bco_gym.losses import FAMILIES
    except ImportError:
        return 0
    print("loss families:")
    for name in FAMILIES:
        print(f"  {name}")
    return 0


def plain_summary(docstring: str | None, width: int = 72) -> str:
    """The first sentence of a docstring without reST markup, cut at ``width``."""
    text = " ".join((docstring or "").strip().split("\n\n")[0].split())
    text = re.sub(r":[a-z]+:`~?([^`]+)`", r"\1", text)
    text = text.replace("``", "").replace("`", "").replace("**", "")
    sentence = re.split(r"(?<=[.:;])\s", text, maxsplit=1)[0].rstrip(".:;")
    return sentence if len(sentence) <= width else sentence[: width - 3].rstrip() + "..."


def report_warnings(results: Sequence[Any]) -> None:
    """The runs' warnings on stderr, one line per kind: messages that differ only in their
    numbers (the same cap at another T or seed) are one kind, shown once with its runs."""
    kinds: dict[str, tuple[str, list[str]]] = {}
    for result in results:
        for message in result.warnings:
            kind = re.sub(r"\d[\d.,e+-]*", "#", message)
            first, runs = kinds.setdefault(kind, (message, []))
            runs.append(f"{result.agent}/T={result.horizon}")
    for first, runs in kinds.values():
        where = ", ".join(dict.fromkeys(runs))
        text = sanitize(" ".join(first.split()))
        print(f"warning ({len(runs)} runs: {where}; shown for the first): {text}", file=sys.stderr)


# -- reports --------------------------------------------------------------------------------------
def _write_text(path: Path, text: str) -> None:
    from bco_gym.experiment.results import atomic_write

    atomic_write(path, lambda stream: stream.write(text.encode("utf-8")))


def _write_figure(draw: Any, path: Path) -> str:
    """Draw with ``draw(temporary path)``, then move the figure into place atomically
    (never through a symlink); the one-line note instead when matplotlib is missing."""
    missing = _matplotlib_missing()
    if missing:
        return f"no figure ({missing})"
    temporary = path.with_name(f".{path.stem}.{secrets.token_hex(6)}.tmp{path.suffix}")
    try:
        draw(temporary)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return str(path)


def report_compare(results: Sequence[Any], out: Path) -> None:
    """Print the compare table; write table.md, table.csv and regret.png into ``out``."""
    from bco_gym.experiment.summary import (
        compare_columns,
        render_csv,
        render_markdown,
        render_text,
        summarize,
    )

    rows = summarize(results)
    header, body = compare_columns(rows)
    first = results[0]
    print(
        sanitize(
            f"{first.env_id}  T={first.horizon}  seeds={sorted({r.seed for r in results})}  "
            f"loss={first.loss.get('name')}"
        )
    )
    print(render_text(header, body))
    out = Path(out)
    _write_text(out / "table.md", render_markdown(header, body) + "\n")
    _write_text(out / "table.csv", render_csv(rows))

    def draw(path: Path) -> None:
        from bco_gym.plotting import plot_regret

        plot_regret(results, path)

    figure = _write_figure(draw, out / "regret.png")
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

    fits = fit_exponents(results)
    header, body = exponent_columns(fits)
    print(
        sanitize(
            f"{results[0].env_id}  loss={results[0].loss.get('name')}  "
            "slope: least squares of log mean regret on log T; CI: bootstrap over seeds"
        )
    )
    print(render_text(header, body))
    out = Path(out)
    _write_text(out / "exponents.md", render_markdown(header, body) + "\n")
    _write_text(out / "exponents.csv", render_csv(fits))

    def draw(path: Path) -> None:
        from bco_gym.plotting import plot_exponents

        plot_exponents(fits, path)

    figure = _write_figure(draw, out / "exponents.png")
    print(f"wrote {out / 'exponents.md'}, {out / 'exponents.csv'}, {figure}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
