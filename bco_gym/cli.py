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
appended when --env-kwargs, --tuned or --gym-loop are given
(:func:`bco_gym.cli_commands.default_out`). The commands are in :mod:`bco_gym.cli_commands`.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from bco_gym.cli_arguments import (
    batch_size_int,
    horizon_int,
    integer_in,
    json_object,
    label_pair,
    name_list,
    non_negative_int,
    points_int,
    positive_range,
    seed_list,
)
from bco_gym.cli_bench import command_bench, command_demo
from bco_gym.cli_checks import MAX_HORIZON, MAX_SEEDS, UsageError
from bco_gym.cli_commands import (
    command_cite,
    command_compare,
    command_exponents,
    command_export,
    command_list,
    command_plot,
    command_run,
    command_tune,
)
from bco_gym.cli_reports import WarningPrinter, error_line
from bco_gym.errors import AgentError

USAGE_ERROR = 2
DEFAULT_AGENTS = "bbcg,fkm,bfw,random"
EXPONENT_AGENTS = "bbcg,fkm,bfw,ofw"


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
    parser.add_argument(
        "--version",
        action=_VersionAction,
        help="print the library version, the built-in suites and the reference archive's "
        "digest (and whether it is valid for this code), then exit",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    _add_run(commands)
    _add_compare(commands)
    _add_exponents(commands)
    _add_tune(commands)
    _add_demo(commands)
    _add_bench(commands)
    plot = commands.add_parser("plot", help="re-draw figures and tables from a sweep directory")
    plot.add_argument("directory", type=Path, help="a directory written by compare/exponents")
    plot.add_argument(
        "--out",
        type=Path,
        default=None,
        help="write the tables and the figure here (default: into the sweep directory; a "
        "read-only sweep is only printed)",
    )
    plot.set_defaults(handler=command_plot)
    _add_export(commands)
    listing = commands.add_parser("list", help="show env ids, agent names and loss families")
    listing.set_defaults(handler=command_list)
    return parser


def _add_export(commands: Any) -> None:
    """``export`` and ``cite``: a bench directory's tables for a paper, its BibTeX."""
    export = commands.add_parser(
        "export",
        help="a bench directory's tables (scores, per-scenario regrets, paired differences) "
        "as LaTeX, CSV or Markdown",
    )
    export.add_argument("directory", type=Path, help="a directory written by bco-gym bench")
    export.add_argument(
        "--format", choices=("latex", "csv", "markdown"), default="latex", help="default: latex"
    )
    export.add_argument(
        "--out", type=Path, default=None, help="write to this file (default: print)"
    )
    cite = commands.add_parser(
        "cite", help="BibTeX for a bench directory: the library, the suite, each agent's paper"
    )
    cite.add_argument("directory", type=Path, help="a directory written by bco-gym bench")
    cite.add_argument("--out", type=Path, default=None, help="write to this file (default: print)")
    for command in (export, cite):
        command.add_argument(
            "--suite",
            default=None,
            metavar="FILE.toml",
            help="the suite file the bench ran (needed only for a suite that is not built in)",
        )
    export.set_defaults(handler=command_export)
    cite.set_defaults(handler=command_cite)


class _VersionAction(argparse.Action):
    """``--version``: :func:`bco_gym.cli_commands.version_text`, computed only when asked."""

    def __init__(self, option_strings: Sequence[str], dest: str, help: str | None = None):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, *args: Any) -> NoReturn:
        from bco_gym.cli_commands import version_text

        print(version_text())
        parser.exit(0)


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
        _add_ray_address(command)
        command.add_argument(
            "--batch-size",
            type=batch_size_int,
            default=None,
            help="seeds of one agent played together in lockstep by one batched run (same "
            "results for every size; default: as many as fit a 256 MB budget, at most 64)",
        )


def _add_ray_address(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--ray-address",
        default=None,
        help="with --backend ray: join this Ray cluster, e.g. 10.0.0.1:6379 as `ray start "
        "--head` prints it (default: a local instance; docs/usage.md, Running on a cluster)",
    )


def _add_identity_flags(command: argparse.ArgumentParser, *, kwargs: bool = True) -> None:
    """--agent-kwargs (per agent), --label and --reuse-stale."""
    if kwargs:
        command.add_argument(
            "--agent-kwargs",
            type=json_object,
            default={},
            help='keyword arguments per agent as JSON, e.g. \'{"fkm": {"c": 2}}\' (or a variant '
            "in --agents: fkm[c=2])",
        )
    command.add_argument(
        "--label",
        type=label_pair,
        action="append",
        default=[],
        metavar="NAME=LABEL",
        help="what tables, figures and reports call an agent of --agents (repeatable; default: "
        "its registered name or class name)",
    )
    command.add_argument(
        "--reuse-stale",
        action="store_true",
        help="keep stored cells computed by other code than the agent's current one (default: "
        "recompute them, with a warning naming the agent and the cells)",
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
    command.add_argument(
        "--allow-large",
        action="store_true",
        help="run even when the run's estimated memory exceeds the machine's (refused by "
        "default, exit 2, naming the estimate)",
    )
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
    command.add_argument(
        "--env",
        default="BCO-Ball-v0",
        help="env id (default BCO-Ball-v0: on the ball r = R, so Theorem 1's parameters are "
        "not degenerate and at the default T bbcg's regret is about half of random's; on "
        "BCO-Simplex-v0 they are degenerate until T ~ 7,000 and cautious long after)",
    )
    command.add_argument(
        "--agents",
        type=name_list,
        default=name_list(DEFAULT_AGENTS),
        help=f"default {DEFAULT_AGENTS}",
    )
    command.add_argument(
        "--horizon",
        type=horizon_int,
        default=20_000,
        help="T (default 20000: the four default agents' final regrets are then separated by "
        "many standard deviations, in well under a minute on 2 cores)",
    )
    command.add_argument(
        "--seeds",
        type=seed_list,
        default=seed_list("5"),
        help="K (seeds 0..K-1) or A:B (default 5, played together by one batched run per agent)",
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
    _add_identity_flags(command)
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
    _add_identity_flags(command)
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
    command.add_argument(
        "--fixed",
        type=json_object,
        default={},
        help='arguments held fixed per agent as JSON, e.g. \'{"bbcg": {"smoothing_radius": '
        "0.016}}' (kept in --out; compare --tuned applies them too)",
    )
    _add_common(command, sweep=True)
    command.add_argument(
        "--reuse-stale",
        action="store_true",
        help="keep stored tuning cells computed by other code than the agent's current one",
    )
    command.set_defaults(handler=command_tune)


def _add_bench(commands: Any) -> None:
    from bco_gym.reports.suites import BUILTIN_NAMES

    command = commands.add_parser(
        "bench",
        help="score agents on a suite beside its reference agents -> OUT/report.md, scores.csv",
        description="Run every scenario of a suite (bco_gym.experiment.suites.SUITES) with "
        "its reference agents and the given agents on the same seeds, each a resumable sweep "
        "under OUT/runs/ (re-running with more agents computes only the new cells), then "
        "write OUT/scores.csv (score = final regret / random's on the same seed) and "
        "OUT/report.md: verdicts against bbcg and fkm (their tuned rows where a scenario "
        "has them, then their theory rows), IQM and mean scores with "
        "stratified-bootstrap 95% intervals, probability of improvement for every pair of "
        "agents, performance profiles with 95% bands, per-scenario rankings and paired "
        "tables. Exit status 1 when a cell failed.",
    )
    command.add_argument(
        "--agents",
        type=name_list,
        required=True,
        help="comma-separated agent names, import paths 'package.module:Class' or variants "
        "NAME[key=value,...]",
    )
    command.add_argument(
        "--suite",
        default="quick-v2",
        metavar="NAME|FILE.toml",
        help=f"a built-in suite ({', '.join(BUILTIN_NAMES)}) or a suite file FILE.toml of "
        "[[scenario]] tables (docs/benchmark.md). Default quick-v2: a SMOKE TEST under a "
        "minute (T = 2,000: its verdicts are not evidence); standard-v3: the designed grid "
        "with the best known rows on quadratic losses and moving optima, standard-v2: the "
        "same grid without them, their reference agents' results read from the package's "
        "archive; quick-v1 and standard-v1: as first published",
    )
    _add_scenarios(command)
    command.add_argument(
        "--recompute-references",
        action="store_true",
        help="compute the reference agents' cells here instead of reading the package's "
        "archive of them (quick-v2, standard-v2, standard-v3)",
    )
    command.add_argument(
        "--seeds",
        type=lambda text: integer_in(text, 2, MAX_SEEDS, "an integer >= 2 (seeds per scenario)"),
        default=None,
        help="seeds 0..K-1 in every scenario (default: each scenario's own seeds)",
    )
    command.add_argument("--out", type=Path, required=True, help="the bench directory")
    command.add_argument(
        "--quiet",
        action="store_true",
        help="no progress (default: a bar on a terminal, else a line per finished run)",
    )
    command.add_argument(
        "--backend",
        choices=("serial", "process", "ray"),
        default="serial",
        help="where each scenario's batches run (default: serial)",
    )
    _add_ray_address(command)
    command.add_argument(
        "--batch-size",
        type=batch_size_int,
        default=None,
        help="seeds of one agent played together by one batched run (same results for "
        "every size; default: chosen for memory)",
    )
    _add_identity_flags(command)
    command.add_argument(
        "--tune",
        action="store_true",
        help="hold each given agent to the references' protocol where a scenario has one: "
        "its scale constant (SCALE_PARAM) tuned over the references' grid on their tuning "
        "seeds at their tuning horizon, then played on the evaluation seeds beside its "
        "untuned rows (the report shows the constant chosen in each scenario)",
    )
    command.add_argument(
        "--timings",
        action="store_true",
        help="time every row of each scenario here (the references' and the given agents'), "
        "in turns, on one seed for at most 2,000 rounds, with the load average: like-with-like "
        "µs per round beside those their cells recorded (the archive's were measured when "
        "it was built, elsewhere)",
    )
    command.add_argument(
        "--agents-only",
        action="store_true",
        help="report.md and scores.csv cover only --agents and the references (default: every "
        "agent computed into OUT for this suite)",
    )
    command.add_argument(
        "--isolate",
        action="store_true",
        help="play each given agent in its own process, which receives only what its feedback "
        "entitles it to and sends back only its plays (oracle calls counted by its set)",
    )
    command.add_argument(
        "--fresh-seeds",
        type=lambda text: integer_in(text, 2, MAX_SEEDS, "an integer >= 2 (fresh seeds)"),
        default=None,
        metavar="N",
        help="also play every scenario on N seeds drawn from the operating system's entropy "
        "when the run starts, written into the report (and fresh-seeds.json) when it ends, "
        "with each given agent's fresh scores beside its public ones and a test of their "
        "agreement. --isolate --fresh-seeds N is the verification mode for a result to publish",
    )
    command.set_defaults(handler=command_bench)


def _add_scenarios(command: Any) -> None:
    command.add_argument(
        "--scenarios",
        type=name_list,
        default=None,
        metavar="A,B",
        help="run only these scenarios of the suite (comma-separated names; default all)",
    )


def _add_demo(commands: Any) -> None:
    command = commands.add_parser(
        "demo",
        help="the main job: scenarios where the methods differ -> OUT/report.md",
        description="Run the scenarios of bco_gym.reports.demo (i.i.d., drifting and "
        "adversarial losses, real portfolio data, shortest paths, RL baselines), each a "
        "resumable sweep under OUT/runs/, then write OUT/report.md with paired tables and "
        "figures.",
    )
    command.add_argument(
        "--out", type=Path, default=Path("results"), help="directory (default results)"
    )
    command.add_argument(
        "--backend",
        choices=("serial", "process", "ray"),
        default="process",
        help="where each scenario's batches run (default: process)",
    )
    _add_ray_address(command)
    command.add_argument(
        "--suite",
        default=None,
        metavar="NAME|FILE.toml",
        help="a built-in suite (e.g. standard-v1, the full main job of earlier versions: "
        "about an hour on two cores) or a suite file FILE.toml of [[scenario]] tables "
        "(default: the demo's own scenarios, about 5 minutes on two cores)",
    )
    _add_scenarios(command)
    command.add_argument(
        "--quick",
        action="store_true",
        help="tiny horizons and two seeds per scenario: a smoke test of the whole job",
    )
    command.add_argument(
        "--quiet",
        action="store_true",
        help="no progress (default: a bar on a terminal, else a line per finished run)",
    )
    command.set_defaults(handler=command_demo)


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
        warnings.showwarning = WarningPrinter()
        try:
            return int(args.handler(args) or 0)
        except REPORTED_ERRORS as error:
            print(f"bco-gym {args.command}: error: {error_line(error)}", file=sys.stderr)
            return USAGE_ERROR
        except AgentError as error:  # the user's agent raised while it played: not a usage error
            print(f"bco-gym {args.command}: error: {error_line(error)}", file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            print(f"bco-gym {args.command}: interrupted", file=sys.stderr)
            return 130


__all__ = ["USAGE_ERROR", "UsageError", "build_parser", "main"]

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
