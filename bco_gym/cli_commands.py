"""The ``bco-gym`` sub-commands run, compare, exponents, tune, plot and list (demo and
bench: :mod:`bco_gym.cli_bench`; what they print and write: :mod:`bco_gym.cli_reports`).

Each ``command_*`` takes the parsed arguments (see :mod:`bco_gym.cli`), checks every
argument (:mod:`bco_gym.cli_checks`) before computing or writing anything, and returns
the exit code. Tables and figures are written atomically and never through a symlink.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
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
from bco_gym.cli_reports import (
    matplotlib_missing,
    print_tuning,
    regret_line,
    report_compare,
    report_exponents,
    report_failures,
    report_tuning_failures,
    report_warnings,
    sanitize,
)
from bco_gym.io import name_digest, write_text

COMPARE_OUTPUTS = ("table.md", "table.csv", "regret.png")
EXPONENT_OUTPUTS = ("exponents.md", "exponents.csv", "exponents.png")


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


def progress_mode(args: argparse.Namespace) -> bool | str:
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
    missing = matplotlib_missing()
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
            progress=progress_mode(args),
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
                progress=progress_mode(args),
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


def fixed_kwargs(fixed: dict[str, Any], agents: Sequence[str]) -> dict[str, dict[str, Any]]:
    """``tune --fixed``: a JSON object of agent -> object of keyword arguments."""
    for agent, kwargs in fixed.items():
        if agent not in agents:
            raise UsageError(f"--fixed names agent {agent!r}, not one of --agents {list(agents)}")
        if not isinstance(kwargs, dict):
            raise UsageError(f"--fixed {agent!r}: expected an object of arguments, got {kwargs!r}")
    return fixed


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
    if out.is_dir():
        raise UsageError(f"--out {str(out)!r} is a directory; give a file name")
    write_text(out, text)


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


def suite_lines() -> list[str]:
    """``bco-gym list``'s suites: each built-in suite, its scenarios and what it is (a
    smoke test, superseded, or with shipped reference results)."""
    from bco_gym.reports.references import ARCHIVED, archive_digest
    from bco_gym.reports.suites import SMOKE_TESTS, SUITES, SUPERSEDED

    rows = []
    for name, scenarios in SUITES.items():
        notes = [
            "smoke test" if name in SMOKE_TESTS else "",
            "superseded" if name in SUPERSEDED else "",
            ("reference archive" if archive_digest(name) else "archive not built yet")
            if name in ARCHIVED
            else "",
        ]
        rows.append([name, f"{len(scenarios)} scenarios", ", ".join(n for n in notes if n)])
    from bco_gym.reports.summary import render_text

    return render_text(["suite", "scenarios", "notes"], rows).splitlines()


def command_list(args: argparse.Namespace) -> int:
    from bco_gym.agents import available_agents, find_agent
    from bco_gym.agents.registry import plugin_errors
    from bco_gym.envs import ENV_IDS
    from bco_gym.reports.summary import render_text

    print("env ids:")
    for env_id in ENV_IDS:
        print(f"  {env_id}")
    print("suites (bco-gym bench --suite NAME):")
    print("\n".join("  " + line for line in suite_lines()))
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
