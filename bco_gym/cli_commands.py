"""The ``bco-gym`` sub-commands and the reports they print and write.

Each ``command_*`` takes the parsed arguments (see :mod:`bco_gym.cli`), checks every
argument (:mod:`bco_gym.cli_checks`) before computing or writing anything, and returns
the exit code. Tables and figures are written atomically and never through a symlink.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import secrets
import shlex
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from bco_gym.cli_checks import (
    MAX_HORIZON,
    UsageError,
    check_agent_names,
    check_cell_count,
    check_command_directory,
    check_env_id,
    check_grid,
    check_input_directory,
    check_instance,
    check_output_directory,
    check_output_file,
    check_sweep_kind,
    claim_command_directory,
    load_tuned_checked,
)
from bco_gym.io import name_digest, write_text

COMPARE_OUTPUTS = ("table.md", "table.csv", "regret.png")
EXPONENT_OUTPUTS = ("exponents.md", "exponents.csv", "exponents.png")
#: What the other commands write under their default parent ``results/`` (demo's default
#: --out): they do not make ``results/`` a stranger's directory.
DEMO_SHARED = ("compare", "exponents", "tuned_constants.json", "tuned_constants_runs")


def sanitize(text: str) -> str:
    """``text`` without control characters (no terminal escape sequences)."""
    from bco_gym.reports.summary import sanitize_text

    return sanitize_text(text)


# -- shared steps ---------------------------------------------------------------------------------
def env_kwargs_for(agents: Sequence[str], env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """``env_kwargs``, with feedback='full' added when a full-information agent is listed,
    feedback='two-point' when every listed agent is a two-point agent (fkm2, bbcg2)."""
    if _full_information(agents) and "feedback" not in env_kwargs:
        return {**env_kwargs, "feedback": "full"}
    if agents and _two_point(agents) == list(agents) and "feedback" not in env_kwargs:
        return {**env_kwargs, "feedback": "two-point"}
    return dict(env_kwargs)


def _two_point(agents: Sequence[str]) -> list[str]:
    from bco_gym.agents import resolve_agent

    return [name for name in agents if resolve_agent(name).feedback == "two-point"]


def _full_information(agents: Sequence[str]) -> list[str]:
    from bco_gym.agents import resolve_agent

    return [name for name in agents if resolve_agent(name).feedback == "full"]


def announce_feedback(agents: Sequence[str], given: dict[str, Any]) -> None:
    """The note saying the env was switched to full information (after every check)."""
    full = _full_information(agents)
    if full and "feedback" not in given:
        print(
            f"note: {', '.join(full)} need{'s' if len(full) == 1 else ''} full information; "
            "the env uses feedback='full' (bandit agents only read the loss)",
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
    from bco_gym.sweeps.tuning import check_disjoint

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
    return match_tuned(path, tuning, agents)


def match_tuned(
    path: Path, tuning: Any, agents: Sequence[str]
) -> tuple[dict[str, dict[str, float]], dict[str, str]]:
    """The tuned constants of ``agents``, matched by identity (a file keyed by an import
    path applies to the built-in name and back); a key matching none of them is named."""
    from bco_gym.agents.registry import resolve_agent

    wanted = {resolve_agent(agent).identity(): agent for agent in agents}
    overrides, unmatched = {}, []
    for key, values in tuning.overrides().items():
        agent = wanted.get(resolve_agent(key).identity())
        if agent is None:
            unmatched.append(tuning.labels.get(key, key))
        else:
            overrides[agent] = values
    if unmatched:
        _warn(
            f"{path} holds tuned constants for {', '.join(map(repr, unmatched))}, none of "
            f"the agents given ({', '.join(agents)}); not used"
        )
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
        name += "_" + name_digest(extra, 8)
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
        args.env,
        env_kwargs,
        args.horizon,
        [args.agent],
        {args.agent: args.agent_kwargs},
        allow_large=args.allow_large,
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
        allow_large=args.allow_large,
    )
    horizon = result.horizon
    scale = f"{result.scale_param}={result.scale_value:.4g}" if result.scale_value else ""
    print(
        sanitize(
            f"{result.env_id}  {result.agent} ({result.constants} {scale})  T={horizon}  "
            f"seed={result.seed}"
        )
    )
    print(regret_line(result))
    print(
        f"LMO calls/round {result.lmo_calls / horizon:.3g}  "
        f"projections/round {result.projections / horizon:.3g}"
    )
    print(
        f"time: agent {result.agent_seconds:.3g} s, env {result.env_seconds:.3g} s, "
        f"comparator {result.comparator_seconds:.3g} s ({result.rounds_per_second:,.0f} rounds/s, "
        f"{result.loop} loop)"
    )
    latency = result.latency_us
    print("round time (µs): " + "  ".join(f"{k} {v:.3g}" for k, v in latency.items()))
    if args.out is not None:
        print(f"wrote {save_result(args.out, result)}")
    return 0


def regret_line(result: Any) -> str:
    """``bco-gym run``'s regret line: the regret, its comparator (exact, certified with
    its gap, or uncertified, then with the warning on a line of its own), T^(3/4), bound."""
    from bco_gym.losses.verification import UNCERTIFIED
    from bco_gym.reports.summary import UNCERTIFIED_NOTE, comparator_text

    bound = "-" if result.regret_bound is None else f"{result.regret_bound:.4g}"
    status = comparator_text([result])
    line = (
        f"regret {result.final_regret:.6g} (comparator {status})  "
        f"regret/T^(3/4) {result.final_regret / result.horizon**0.75:.4g}  bound {bound}"
    )
    return line + (f"\nwarning: {UNCERTIFIED_NOTE}" if status == UNCERTIFIED else "")


def command_compare(args: argparse.Namespace) -> int:
    agents = _check_sweep_names(args)
    out = args.out or default_out("compare", args, agents, f"T{args.horizon}")
    results = _sweep_agents(args, agents, [args.horizon], out, COMPARE_OUTPUTS, args.horizon)
    if results:
        report_compare(results, out)
    return report_failures(out)


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
    if results:
        report_exponents(results, out)
    return report_failures(out)


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
    from bco_gym.sweeps.store import DirectoryLock

    check_output_directory(out, outputs=outputs)
    check_sweep_kind(out, args.command)
    check_cell_count(len(agents) * len(horizons) * len(args.seeds))
    env_kwargs = env_kwargs_for(agents, args.env_kwargs)
    overrides, labels = tuned_overrides(
        args.tuned, args.env, env_kwargs, tuned_horizon, agents, args.seeds
    )
    given = agent_kwargs_per_agent(args.agent_kwargs, agents)
    overrides = {a: {**overrides.get(a, {}), **given.get(a, {})} for a in {*overrides, *given}}
    labels = {a: ("custom" if a in given else label) for a, label in labels.items()}
    names = agent_labels(args.label, agents)
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
            batch_size=args.batch_size,
            failures="record",
            labels=names,
            reuse_stale=args.reuse_stale,
        )
    report_warnings(results)
    return results


def agent_kwargs_per_agent(given: dict[str, Any], agents: Sequence[str]) -> dict[str, dict]:
    """``--agent-kwargs`` of compare, exponents and bench: an object of agent (as listed
    in --agents) -> object of keyword arguments; UsageError naming what is wrong."""
    for agent, kwargs in given.items():
        if agent not in agents:
            raise UsageError(
                f"--agent-kwargs names agent {agent!r}, not one of --agents {list(agents)}; "
                'give {"AGENT": {"key": value}}, e.g. \'{"fkm": {"c": 2}}\''
            )
        if not isinstance(kwargs, dict):
            raise UsageError(
                f"--agent-kwargs {agent!r}: expected an object of keyword arguments, got "
                f"{json.dumps(kwargs)}"
            )
    return {agent: dict(kwargs) for agent, kwargs in given.items()}


def agent_labels(pairs: Sequence[tuple[str, str]], agents: Sequence[str]) -> dict[str, str]:
    """``--label NAME=LABEL`` pairs as a mapping; UsageError for a NAME not in --agents."""
    labels: dict[str, str] = {}
    for name, label in pairs:
        if name not in agents:
            raise UsageError(
                f"--label {name}={label}: {name!r} is not one of --agents {list(agents)}"
            )
        if name in labels:
            raise UsageError(f"--label gives {name!r} twice")
        labels[name] = label
    return labels


def report_failures(out: Path) -> int:
    """The failed cells recorded in ``out`` on stderr; the exit status (1 if any)."""
    from bco_gym.sweeps import load_failures

    failures = load_failures(out)
    for failure in failures:
        print(f"error: {sanitize(failure.describe())}", file=sys.stderr)
    if failures:
        print(
            f"error: {len(failures)} cell(s) failed (recorded in {out / 'failures'}); the "
            "other cells finished and are reported",
            file=sys.stderr,
        )
    return 1 if failures else 0


def log_horizons(low: float, high: float, points: int) -> list[int]:
    """``points`` log-spaced integer horizons from ``low`` to ``high`` (duplicates merged)."""
    if low < 1:
        raise UsageError(f"horizons start at {low:g}; the smallest horizon is 1")
    values = sorted(set(np.rint(np.geomspace(low, high, points)).astype(int).tolist()))
    if len(values) < 2:
        raise UsageError(f"horizons {low:g}:{high:g} with {points} points give {values}")
    return values


def command_tune(args: argparse.Namespace) -> int:
    from bco_gym.sweeps.store import DirectoryLock
    from bco_gym.sweeps.tuning import TuningFailedError, log_grid, save_tuned, tune

    check_env_id(args.env)
    agents = check_agent_names(args.agents)
    if args.points < 2:
        raise UsageError(f"--points {args.points}: a grid needs at least 2 points")
    out = check_output_file(args.out)
    sweep_dir = args.sweep_dir or out.with_name(out.stem + "_runs")
    check_output_directory(sweep_dir, "--sweep-dir")
    check_sweep_kind(sweep_dir, "tune", "--sweep-dir")
    check_cell_count(len(agents) * args.points * len(args.tune_seeds))
    grid = log_grid(*args.grid, args.points)
    env_kwargs = env_kwargs_for(agents, args.env_kwargs)
    check_instance(args.env, env_kwargs, args.horizon, agents, {})
    check_grid(args.env, env_kwargs, args.horizon, agents, grid)
    announce_feedback(agents, args.env_kwargs)
    with DirectoryLock(sweep_dir):
        try:
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
                batch_size=args.batch_size,
                agent_kwargs=fixed_kwargs(args.fixed, agents),
                reuse_stale=args.reuse_stale,
            )
        except TuningFailedError as error:
            print_tuning(args, error.tuning, grid)
            print(f"bco-gym tune: error: {sanitize(str(error))}", file=sys.stderr)
            report_tuning_failures(error.tuning.failures, sweep_dir)
            print(f"wrote nothing to {out}", file=sys.stderr)
            return 1
        path = save_tuned(out, tuning)
    print_tuning(args, tuning, grid)
    print(f"wrote {path} (runs in {sweep_dir})")
    return report_tuning_failures(tuning.failures, sweep_dir)


def report_tuning_failures(failures: Sequence[Any], sweep_dir: Path) -> int:
    """Each failed tuning cell on stderr, and where it is recorded; the exit status (1 if any)."""
    for failure in failures:
        kwargs = sorted(failure.cell.get("agent_kwargs", {}).items())
        given = ", ".join(f"{name}={value!r}" for name, value in kwargs)
        print(f"error: {sanitize(failure.describe())} (with {sanitize(given)})", file=sys.stderr)
    if failures:
        print(
            f"error: {len(failures)} tuning cell(s) failed (recorded in "
            f"{sweep_dir / 'failures'}); a value with a failed cell was not chosen",
            file=sys.stderr,
        )
    return 1 if failures else 0


def fixed_kwargs(fixed: dict[str, Any], agents: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``tune --fixed``: a JSON object of agent -> object of keyword arguments."""
    for agent, kwargs in fixed.items():
        if agent not in agents:
            raise UsageError(f"--fixed names agent {agent!r}, not one of --agents {list(agents)}")
        if not isinstance(kwargs, dict):
            raise UsageError(f"--fixed {agent!r}: expected an object of arguments, got {kwargs!r}")
    return fixed


def command_demo(args: argparse.Namespace) -> int:
    from bco_gym.reports.demo import SCENARIOS, run_demo
    from bco_gym.reports.suites import resolve_suite, select_scenarios

    check_ray_address(args)
    try:
        if args.suite is None:  # the demo's own scenarios
            name, found = "demo", SCENARIOS
        else:
            name, found = resolve_suite(args.suite)
        scenarios = select_scenarios(name, found, args.scenarios)
    except ValueError as error:
        raise UsageError(str(error)) from None

    out = check_command_directory(
        args.out, "demo", outputs=("report.md",), shared=DEMO_SHARED, recognise=_demo_written
    )
    claim_command_directory(out, "demo")

    def announce(line: str) -> None:
        if not args.quiet:
            print(line, file=sys.stderr, flush=True)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the runs keep theirs; the report lists them
        with backend_session(args.backend, args.ray_address):
            path = run_demo(
                out,
                scenarios=scenarios,
                backend=args.backend,
                progress=_progress(args),
                quick=args.quick,
                announce=announce,
            )
    print(f"wrote {path} and {path.with_name('index.html')} (open it in a browser)")
    return 0


def check_ray_address(args: argparse.Namespace) -> None:
    """``--ray-address`` only with ``--backend ray``, and Ray installed when asked for."""
    if args.ray_address is not None and args.backend != "ray":
        raise UsageError(
            f"--ray-address {args.ray_address!r} needs --backend ray (not {args.backend!r})"
        )
    if args.backend == "ray":
        from bco_gym.sweeps.backends import import_ray

        try:
            import_ray()
        except ImportError as error:
            raise UsageError(str(error)) from None


def backend_session(
    backend: str, ray_address: str | None
) -> contextlib.AbstractContextManager[Any]:
    """One Ray connection over a whole bench or demo on the Ray backend (the cluster at
    ``ray_address``, or a local instance: :func:`bco_gym.sweeps.backends.ray_session`);
    nothing on the other backends."""
    if backend != "ray":
        return contextlib.nullcontext()
    from bco_gym.sweeps.backends import ray_session

    return ray_session(ray_address)


def command_bench(args: argparse.Namespace) -> int:
    from bco_gym.agents.registry import resolve_agent
    from bco_gym.engine.isolation import protected
    from bco_gym.reports.bench import DAMAGED_ARCHIVE, MARKER, run_bench
    from bco_gym.reports.suites import SUPERSEDED, resolve_suite, select_scenarios
    from bco_gym.sweeps.sweep import StaleCellWarning

    check_ray_address(args)
    try:
        name, found = resolve_suite(args.suite)
        select_scenarios(name, found, args.scenarios)
    except ValueError as error:
        raise UsageError(str(error)) from None
    if name in SUPERSEDED:
        print(f"warning: {SUPERSEDED[name]}", file=sys.stderr, flush=True)

    for agent in args.agents:
        try:
            resolve_agent(agent)
        except (ValueError, TypeError) as error:
            raise UsageError(str(error)) from None
    if args.tune:
        from bco_gym.reports.bench_tuning import check_tunable

        try:
            check_tunable(args.agents)
        except ValueError as error:
            raise UsageError(str(error)) from None
    agent_kwargs = agent_kwargs_per_agent(args.agent_kwargs, args.agents)
    labels = agent_labels(args.label, args.agents)
    out = check_command_directory(
        args.out,
        "bench",
        outputs=("report.md", "scores.csv"),
        recognise=lambda path: (path / MARKER).is_file(),
    )
    claim_command_directory(out, "bench")

    def announce(line: str) -> None:
        if not args.quiet:
            print(line, file=sys.stderr, flush=True)

    protection = protected() if args.isolate else contextlib.nullcontext()
    with warnings.catch_warnings(), protection:  # the bench non-dumpable (isolation)
        warnings.simplefilter("ignore")  # the runs keep theirs; the report lists them
        warnings.simplefilter("default", StaleCellWarning)  # but stale cells are said here
        with backend_session(args.backend, args.ray_address):
            outcome = run_bench(
                args.agents,
                out,
                suite=args.suite,
                scenarios=args.scenarios,
                seeds=args.seeds,
                recompute_references=args.recompute_references,
                backend=args.backend,
                batch_size=args.batch_size,
                progress=_progress(args),
                announce=announce,
                command=_bench_command(args),
                agent_kwargs=agent_kwargs,
                labels=labels,
                reuse_stale=args.reuse_stale,
                agents_only=args.agents_only,
                isolate=args.isolate,
                fresh_seeds=args.fresh_seeds,
                tune=args.tune,
                timings=args.timings,
            )
    print(f"wrote {outcome.report} and {outcome.scores}")
    if args.fresh_seeds is not None:
        print(f"fresh seeds in {outcome.report.with_name('fresh-seeds.json')}")
    for line in outcome.recomputed:  # said whatever --quiet and the warning filters say
        print(sanitize(f"warning: recomputed a damaged cell: {line}"), file=sys.stderr)
    for line in outcome.archive_notes:  # a damaged archive too (announced unless --quiet)
        if args.quiet and DAMAGED_ARCHIVE in line:
            print(sanitize(f"warning: {line}"), file=sys.stderr)
    if outcome.failures:
        print(f"{len(outcome.failures)} cell(s) failed (listed in the report):", file=sys.stderr)
        for failure in outcome.failures:
            print(f"  {failure}", file=sys.stderr)
        return 1
    return 0


def _bench_command(args: argparse.Namespace) -> str:
    """The command line that reproduces the bench (what the report names)."""
    seeds = f" --seeds {args.seeds}" if args.seeds is not None else ""
    chosen = f" --scenarios {','.join(args.scenarios)}" if args.scenarios else ""
    chosen += " --recompute-references" if args.recompute_references else ""
    extra = "".join(f" --label {shlex.quote(f'{name}={label}')}" for name, label in args.label)
    if args.agent_kwargs:
        extra += f" --agent-kwargs {shlex.quote(json.dumps(args.agent_kwargs))}"
    extra += " --agents-only" if args.agents_only else ""
    extra += " --isolate" if args.isolate else ""
    extra += f" --fresh-seeds {args.fresh_seeds}" if args.fresh_seeds is not None else ""
    extra += " --tune" if args.tune else ""
    extra += " --timings" if args.timings else ""
    return (
        f"bco-gym bench --agents {shlex.quote(','.join(args.agents))} --suite {args.suite}"
        f"{chosen}{seeds} --out {args.out}{extra}"
    )


def _demo_written(path: Path) -> bool:
    """Whether ``path`` holds a demo written before the owner file existed: a
    ``runs/`` directory of sweeps (each with its ``manifest.json``)."""
    runs = path / "runs"
    if runs.is_symlink() or not runs.is_dir():
        return False
    sweeps = list(runs.iterdir())
    return bool(sweeps) and all((entry / "manifest.json").is_file() for entry in sweeps)


def print_tuning(args: argparse.Namespace, tuning: Any, grid: Sequence[float]) -> None:
    from bco_gym.agents.registry import find_agent
    from bco_gym.reports.summary import format_column, render_text

    chosen = list(tuning.constants.items())
    theory = format_column([c.theory_value for _, c in chosen], 4)
    for i, (agent, _) in enumerate(chosen):  # an agent's own default, not a theorem's
        spec = find_agent(agent)
        if spec is not None and not spec.theory_defaults:
            theory[i] += " (default, no theorem)"
    values = format_column([c.value for _, c in chosen], 4)
    regrets = format_column([c.mean_regret for _, c in chosen], 4)
    header = ["agent", "param", "theory value", "tuned value", "mean regret (tuned)", "grid scores"]
    body = [
        [
            tuning.label(agent),
            c.param,
            theory[i],
            values[i],
            regrets[i],
            " ".join(format_column(c.scores, 3)),
        ]
        for i, (agent, c) in enumerate(chosen)
    ]
    print(
        f"{args.env}, T={args.horizon}, tuning seeds {list(tuning.tune_seeds)}, "
        f"grid {' '.join(f'{v:g}' for v in grid)}"
    )
    print(render_text(header, body))
    for agent, reason in tuning.skipped.items():
        print(f"{tuning.label(agent)}: skipped, {reason}")
    for agent, constant in chosen:
        if constant.excluded:
            left_out = ", ".join(f"{v:g}" for v in constant.excluded)
            print(
                f"{tuning.label(agent)}: {constant.param} = {left_out} left out (a cell "
                "failed; score -)"
            )


def command_plot(args: argparse.Namespace) -> int:
    """Print a sweep's table; write the tables and the figure into the sweep directory, or
    into ``--out`` when given. A read-only sweep without ``--out`` is only printed."""
    from bco_gym.experiment import load_sweep
    from bco_gym.sweeps.store import DirectoryLock, SweepStore

    directory = check_input_directory(args.directory)
    store = SweepStore(directory)
    total = len(store.read_manifest()["spec"]["cells"])
    results = load_sweep(directory)
    if not results:
        raise UsageError(f"{str(directory)!r} holds no finished cells yet")
    if len(results) < total:
        _warn(f"{total - len(results)} of {total} cells are not computed yet; showing the rest")
    several = len({r.horizon for r in results}) > 1
    report = report_exponents if several else report_compare
    outputs = EXPONENT_OUTPUTS if several else COMPARE_OUTPUTS
    out = args.out
    if out is not None and out.resolve() != directory.resolve():
        check_command_directory(out, "plot", outputs=outputs)
        claim_command_directory(out, "plot")
        report(results, out)
        return 0
    if not os.access(directory, os.W_OK | os.X_OK):
        report(results, None)
        _warn(
            f"{str(directory)!r} is read-only: printed the table, wrote nothing (give --out "
            "DIR to write the tables and the figure there)"
        )
        return 0
    check_output_directory(directory, "plot", outputs=outputs)
    with DirectoryLock(directory):
        report(results, directory)
    return 0


def command_export(args: argparse.Namespace) -> int:
    """Print (or write to ``--out``) a bench directory's tables in ``--format``."""
    from bco_gym.reports.export import export_text, load_bench

    bench = load_bench(_bench_directory(args.directory), suite_file=args.suite)
    _emit(export_text(bench, args.format), args.out)
    return 0


def command_cite(args: argparse.Namespace) -> int:
    """Print (or write to ``--out``) the BibTeX of a bench directory."""
    from bco_gym.reports.export import cite_text

    _emit(cite_text(_bench_directory(args.directory), suite_file=args.suite), args.out)
    return 0


def _bench_directory(path: Path) -> Path:
    if not path.is_dir():
        raise UsageError(f"{str(path)!r} is not a directory written by bco-gym bench")
    return path


def _emit(text: str, out: Path | None) -> None:
    """``text`` printed, or written atomically to ``out`` (never through a symlink)."""
    if out is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    from bco_gym.sweeps.results import atomic_write

    if out.is_dir():
        raise UsageError(f"--out {str(out)!r} is a directory; give a file name")
    atomic_write(out, lambda stream: stream.write(text.encode("utf-8")))


def version_text() -> str:
    """What ``bco-gym --version`` prints: the library version, the built-in suites (a
    suite's name carries its version) and, per suite with a shipped reference archive,
    the archive's SHA-256 (:func:`bco_gym.reports.references.archive_digest`) and whether
    this code can read it."""
    from bco_gym import __version__
    from bco_gym.provenance import result_code_digest
    from bco_gym.reports import references
    from bco_gym.reports.suites import SUITES

    lines = [
        f"bco_gym {__version__}",
        f"suites: {', '.join(SUITES)}",
        f"result code: {result_code_digest()}",
        f"reference archive (format {references.FORMAT}):",
    ]
    for suite in references.ARCHIVED:
        digest = references.archive_digest(suite) or "-"
        lines.append(f"  {suite}: sha256 {digest}")
        lines.append(f"    {references.archive_status(suite)}")
    return "\n".join(lines)


def command_list(args: argparse.Namespace) -> int:
    from bco_gym.agents import available_agents, find_agent
    from bco_gym.agents.registry import plugin_errors
    from bco_gym.envs import ENV_IDS
    from bco_gym.reports.summary import render_text

    print("env ids:")
    for env_id in ENV_IDS:
        print(f"  {env_id}")
    print("agents:")
    broken = plugin_errors()
    rows = []
    for name, source in available_agents().items():
        spec = None if name in broken else find_agent(name)
        if spec is None:
            continue
        version = f" {spec.version}" if spec.version and source != "builtin" else ""
        rows.append(
            [
                name,
                spec.import_path.split(":")[-1] if source == "builtin" else spec.import_path,
                spec.feedback,
                spec.scale_param or "-",
                ("" if source == "builtin" else f"[{source}{version}] ")
                + plain_summary(spec.summary),
            ]
        )
    table = render_text(["name", "class", "feedback", "scale", "summary"], rows)
    print("\n".join("  " + line for line in table.splitlines()))
    for name, error in broken.items():
        print(
            f"  plugin {name!r} (entry point of bco_gym.agents) failed to load: {sanitize(error)}"
        )
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


def report_compare(results: Sequence[Any], out: Path | None) -> None:
    """Print the compare table; write table.md, table.csv and regret.png into ``out``
    (nothing when ``out`` is None)."""
    from bco_gym.reports.summary import (
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
    _warn_uncertified(rows)
    if out is None:
        return
    out = Path(out)
    write_text(out / "table.md", render_markdown(header, body) + "\n")
    write_text(out / "table.csv", render_csv(rows))

    def draw(path: Path) -> None:
        from bco_gym.plotting import plot_regret

        plot_regret(results, path)

    figure = _write_figure(draw, out / "regret.png")
    print(f"wrote {out / 'table.md'}, {out / 'table.csv'}, {figure}")


def _warn_uncertified(rows: Sequence[Any]) -> None:
    """Under a table, the warning when a row's comparator is uncertified."""
    from bco_gym.losses.verification import UNCERTIFIED
    from bco_gym.reports.summary import UNCERTIFIED_NOTE

    uncertified = [row.agent for row in rows if row.comparator == UNCERTIFIED]
    if uncertified:
        print(sanitize(f"warning ({', '.join(dict.fromkeys(uncertified))}): {UNCERTIFIED_NOTE}"))


def report_exponents(results: Sequence[Any], out: Path | None) -> None:
    """Print the exponents table; write exponents.md, exponents.csv and exponents.png
    into ``out`` (nothing when ``out`` is None)."""
    from bco_gym.reports.summary import (
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
    _warn_uncertified(fits)
    if out is None:
        return
    out = Path(out)
    write_text(out / "exponents.md", render_markdown(header, body) + "\n")
    write_text(out / "exponents.csv", render_csv(fits))

    def draw(path: Path) -> None:
        from bco_gym.plotting import plot_exponents

        plot_exponents(fits, path)

    figure = _write_figure(draw, out / "exponents.png")
    print(f"wrote {out / 'exponents.md'}, {out / 'exponents.csv'}, {figure}")
