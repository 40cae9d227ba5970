"""The package as users get it: build the sdist and the wheel, check what they hold, install
the wheel (not editable) into a clean virtual environment with the bench, fast and plot
extras, and use it there, outside the source tree.

1. ``python -m build`` builds the sdist, then the wheel from the sdist (so a file missing
   from the sdist fails here too), into a temporary directory.
2. The wheel holds exactly the package files git tracks under ``bco_gym/`` (a missing
   package-data entry fails; so does any test, cache or build leftover) plus its metadata
   with ``LICENSE`` and ``NOTICE.md``; the sdist holds those, the packaging files and the
   texts (README, CHANGELOG, CITATION), and no tests, docs, caches or build leftovers.
3. In a new virtual environment, ``pip install 'bco_gym-X-py3-none-any.whl[bench,fast,plot]'``;
   then, from an empty directory with no PYTHONPATH: ``bco-gym --version``, ``bco-gym
   list``, ``gym.make("BCO-Simplex-v0")`` (one episode played), and ``bco-gym bench`` of an
   example agent (``examples/your_own_agent.py``, copied next to the run) on quick-v2.
   First the shipped archive of quick-v2 must be valid for the installed code (else the
   check stops there, naming the rebuild command, before bench would recompute every
   reference cell); then every reference row of the bench's scores.csv must be the
   archive's cell (the same ``computed_at``), and only the agent's cells computed by
   this run.

Prints the wheel's size and file count. Exit 0 when every check passes, else 1 with the
failed check on the last line. The reference archive must be valid for the code being
packaged: after any change to the code that determines results it is stale until it is
rebuilt (the message names the command).

    python .ci/wheel_check.py [--keep]      (--keep: leave the temporary directory)
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
AGENT = "your_own_agent:EstimatedLeader"
AGENT_LABEL = "leader"
SUITE = "quick-v2"
REBUILD = (
    "OMP_NUM_THREADS=1 python -m bco_gym.reports.references quick-v2 standard-v2 standard-v3 "
    "--backend process"
)
#: Files every wheel must hold besides the package's (under bco_gym-X.dist-info/).
METADATA = (
    "METADATA",
    "WHEEL",
    "RECORD",
    "entry_points.txt",
    "licenses/LICENSE",
    "licenses/NOTICE.md",
)
#: What the sdist holds outside bco_gym/.
SDIST_TOP = {
    "LICENSE",
    "NOTICE.md",
    "README.md",
    "CHANGELOG.md",
    "CITATION.cff",
    "pyproject.toml",
    "MANIFEST.in",
    "PKG-INFO",
    "setup.cfg",
}
LEFTOVERS = (
    "__pycache__",
    ".pyc",
    ".pyo",
    ".nbi",
    ".nbc",
    "kernels.sha256",
    ".egg-info/",
    "build/",
)


class CheckFailed(Exception):
    """A check did not pass (its message is the last line printed)."""


def run(command: list[object], **kwargs: object) -> subprocess.CompletedProcess[str]:
    shown = " ".join("<script>" if "\n" in str(part) else str(part) for part in command)
    print(f"$ {shown}", flush=True)
    done = subprocess.run([str(p) for p in command], text=True, capture_output=True, **kwargs)
    if done.returncode != 0:
        sys.stdout.write(done.stdout[-4000:])
        sys.stderr.write(done.stderr[-4000:])
        raise CheckFailed(f"`{shown}` exited {done.returncode}")
    return done


def tracked_package_files() -> set[str]:
    listed = run(["git", "-C", ROOT, "ls-files", "bco_gym"]).stdout.split()
    return {name for name in listed if (ROOT / name).is_file()}


def leftovers(names: set[str]) -> list[str]:
    return sorted(name for name in names if any(part in name for part in LEFTOVERS))


def check_wheel(wheel: Path, package: set[str]) -> None:
    with zipfile.ZipFile(wheel) as archive:
        names = {info.filename for info in archive.infolist() if not info.is_dir()}
        total = sum(info.file_size for info in archive.infolist())
    inside = {name for name in names if name.startswith("bco_gym/")}
    info = [name for name in names if ".dist-info/" in name]
    missing = sorted(package - inside)
    extra = sorted(inside - package)
    if missing:
        raise CheckFailed(f"the wheel lacks tracked package files: {missing[:10]}")
    if extra or leftovers(names):
        raise CheckFailed(
            f"the wheel holds files git does not track: {(extra or leftovers(names))[:10]}"
        )
    for needed in METADATA:
        if not any(name.endswith(f".dist-info/{needed}") for name in info):
            raise CheckFailed(f"the wheel's metadata lacks {needed}")
    outside = sorted(name for name in names - inside if ".dist-info/" not in name)
    if outside:
        raise CheckFailed(f"the wheel holds files outside the package: {outside[:10]}")
    kinds: dict[str, list[int]] = {}
    with zipfile.ZipFile(wheel) as archive:
        for item in archive.infolist():
            if item.is_dir():
                continue
            kind = _kind(item.filename)
            kinds.setdefault(kind, [0, 0])
            kinds[kind][0] += 1
            kinds[kind][1] += item.file_size
    print(
        f"wheel {wheel.name}: {wheel.stat().st_size / 1e6:.2f} MB compressed, "
        f"{total / 1e6:.2f} MB unpacked, {len(names)} files"
    )
    for kind, (count, size) in sorted(kinds.items(), key=lambda item: -item[1][1]):
        print(f"  {kind}: {count} files, {size / 1e6:.2f} MB")


def _kind(name: str) -> str:
    if ".dist-info/" in name:
        return "metadata (dist-info: METADATA, RECORD, licences, entry points)"
    if name.startswith("bco_gym/data/references/"):
        return "reference archive (bco_gym/data/references)"
    if name.startswith("bco_gym/data/portfolio/"):
        return "price series with PROVENANCE.md (bco_gym/data/portfolio)"
    if name.startswith("bco_gym/data/suites/"):
        return "built-in suites (bco_gym/data/suites/*.toml)"
    if name.endswith(".py"):
        return "Python sources"
    return "other package files (py.typed)"


def check_sdist(sdist: Path, package: set[str]) -> None:
    with tarfile.open(sdist) as archive:
        members = [member.name for member in archive.getmembers() if member.isfile()]
    top = members[0].split("/", 1)[0]
    names = {name.split("/", 1)[1] for name in members}
    inside = {name for name in names if name.startswith("bco_gym/")}
    missing = sorted(package - inside)
    if missing:
        raise CheckFailed(f"the sdist lacks tracked package files: {missing[:10]}")
    others = {name for name in names - inside if not name.startswith("bco_gym.egg-info/")}
    extra = sorted((inside - package) | (others - SDIST_TOP))
    if extra or leftovers(inside | others):
        raise CheckFailed(
            f"the sdist holds files it should not: {(extra or leftovers(names))[:10]}"
        )
    absent = sorted(SDIST_TOP - {"setup.cfg"} - others)
    if absent:
        raise CheckFailed(f"the sdist lacks {absent}")
    print(f"sdist {sdist.name}: {sdist.stat().st_size / 1e6:.2f} MB, {len(names)} files ({top}/)")


def clean_environment() -> dict[str, str]:
    """This environment without what would let the source tree leak in."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    env["OMP_NUM_THREADS"] = "1"
    return env


MAKE_ENV = """
import pathlib, sys
import gymnasium as gym
import bco_gym
where = pathlib.Path(bco_gym.__file__).resolve()
assert pathlib.Path(sys.prefix).resolve() in where.parents, f"imported from {where}"
env = gym.make("BCO-Simplex-v0", horizon=50)
obs, info = env.reset(seed=0)
done, rounds = False, 0
while not done:
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
    done, rounds = terminated or truncated, rounds + 1
assert rounds == 50, rounds
print(f"gym.make('BCO-Simplex-v0'): 50 rounds; bco_gym {bco_gym.__version__} from {where.parent}")
"""

#: Run by the clean environment's Python before the bench: the shipped archive of the suite
#: must be valid for the installed code (else bench would recompute every reference cell).
CHECK_ARCHIVE = """
import sys
from bco_gym.reports import references
status = references.archive_status(sys.argv[1])
print(f"shipped archive of {sys.argv[1]}: {status}")
raise SystemExit(0 if status.startswith("valid for this code") else 3)
"""

#: Run by the clean environment's Python after the bench: every reference row of
#: scores.csv must be the shipped archive's cell; every row of the agent new.
CHECK_BENCH = """
import csv, sys
from bco_gym.reports import references
from bco_gym.reports.suites import SUITES
out, suite, label, started = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
archived = {}
for scenario in SUITES[suite]:
    for _, cells in (references.load_scenario(suite, scenario.name) or {}).values():
        for cell, result in cells:
            archived[(scenario.name, result.agent, result.seed)] = result.computed_at
rows = list(csv.DictReader(open(f"{out}/scores.csv", encoding="utf-8")))
given = [row for row in rows if row["agent"] == label]
others = [row for row in rows if row["agent"] != label]
assert given and others, (len(given), len(others))
old = [r for r in given if not r["computed_at"] or r["computed_at"] < started]
assert not old, f"agent rows not computed by this run: {old[:3]}"
wrong = [
    (r["scenario"], r["agent"], r["seed"], r["computed_at"])
    for r in others
    if archived.get((r["scenario"], r["agent"], int(r["seed"]))) != r["computed_at"]
]
assert not wrong, f"reference rows not read from the shipped archive: {wrong[:5]}"
print(f"bench: {len(others)} reference rows read from the shipped archive, {len(given)} rows "
      f"of {label} computed by this run")
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="bco_gym-wheel-"))
    began = time.monotonic()
    try:
        check_all(work)
    except CheckFailed as failure:
        print(f"wheel check FAILED: {failure}", flush=True)
        return 1
    finally:
        if args.keep:
            print(f"kept {work}")
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"wheel check passed in {time.monotonic() - began:.0f} s")
    return 0


def check_all(work: Path) -> None:
    dist = work / "dist"
    run([sys.executable, "-m", "build", "--outdir", dist, ROOT])
    (wheel,) = dist.glob("*.whl")
    (sdist,) = dist.glob("*.tar.gz")
    package = tracked_package_files()
    check_wheel(wheel, package)
    check_sdist(sdist, package)

    venv = work / "venv"
    run([sys.executable, "-m", "venv", venv])
    python, console = venv / "bin" / "python", venv / "bin" / "bco-gym"
    env = clean_environment()
    run([python, "-m", "pip", "install", "--quiet", f"{wheel}[bench,fast,plot]"], env=env)
    away = work / "away"
    away.mkdir()
    print(run([console, "--version"], cwd=away, env=env).stdout, end="")
    listing = run([console, "list"], cwd=away, env=env).stdout
    for needed in ("BCO-Simplex-v0", "bbcg", "fkm"):
        if needed not in listing:
            raise CheckFailed(f"`bco-gym list` does not list {needed!r}")
    print(f"bco-gym list: {len(listing.splitlines())} lines")
    print(run([python, "-c", MAKE_ENV], cwd=away, env=env).stdout, end="")

    checked = subprocess.run(
        [str(python), "-c", CHECK_ARCHIVE, SUITE], cwd=away, env=env, text=True, capture_output=True
    )
    print(checked.stdout, end="")
    if checked.returncode != 0:
        sys.stderr.write(checked.stderr[-3000:])
        raise CheckFailed(
            f"the shipped reference archive of {SUITE} is not valid for the code being "
            "packaged, so bench would recompute its reference cells instead of reading them: "
            f"rebuild it on this code with `{REBUILD}`, commit bco_gym/data/references/, and "
            "run this check again"
        )

    agents = away / "agents"
    agents.mkdir()
    shutil.copy(ROOT / "examples" / "your_own_agent.py", agents / "your_own_agent.py")
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 1))
    out = away / "bench"
    bench = [console, "bench", "--agents", AGENT, "--suite", SUITE, "--out", out, "--quiet"]
    run(bench, cwd=away, env={**env, "PYTHONPATH": str(agents)})
    checked = subprocess.run(
        [str(python), "-c", CHECK_BENCH, str(out), SUITE, AGENT_LABEL, started],
        cwd=away,
        env=env,
        text=True,
        capture_output=True,
    )
    print(checked.stdout, end="")
    if checked.returncode != 0:
        sys.stderr.write(checked.stderr[-3000:])
        raise CheckFailed("the bench directory's rows are not what the archive and the run say")


if __name__ == "__main__":
    raise SystemExit(main())
