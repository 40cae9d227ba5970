"""``bco-gym demo`` and ``bco-gym bench``: the main job and the benchmark."""

from __future__ import annotations

import argparse
import contextlib
import json
import shlex
import sys
import warnings
from pathlib import Path
from typing import Any

from bco_gym.cli_checks import UsageError, check_command_directory, claim_command_directory
from bco_gym.cli_commands import agent_kwargs_per_agent, agent_labels, progress_mode
from bco_gym.cli_reports import sanitize

#: What the other commands write under their default parent ``results/`` (demo's default
#: --out): they do not make ``results/`` a stranger's directory.
DEMO_SHARED = ("compare", "exponents", "tuned_constants.json", "tuned_constants_runs")


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
                progress=progress_mode(args),
                quick=args.quick,
                announce=announce,
            )
    print(f"wrote {path} and {path.with_name('index.html')} (open it in a browser)")
    return 0


def command_bench(args: argparse.Namespace) -> int:
    from bco_gym.agents.registry import resolve_agent
    from bco_gym.engine.protection import protected
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
                progress=progress_mode(args),
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
