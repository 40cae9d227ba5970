"""pbgd and pbgd2 against PyNOL's PBGD, round by round (issue 42's peer comparison).

Drives both implementations with the same exploration draws (tests/agents/pynol_peer.py)
on the 5-ball and the 6-simplex, linear costs turning 0.01 rad a round plus noise, and
prints the largest difference between their plays: with PyNOL's Hedge given pbgd's fixed
rate, and with PyNOL's own decreasing rate 2/(L D sqrt(t)). Needs the ``peer`` extra
(pynol-xzp).

Run:  python benchmarks/peer_pbgd.py [--horizon 400] [--seed 1]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "agents"))

from pynol_peer import compare, drifting_costs

from bco_gym.sets import L2Ball, Simplex


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--horizon", type=int, default=400)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print("| set | agent | max |ours - PyNOL|, same fixed meta rate | with PyNOL's own rate |")
    print("|---|---|---|---|")
    for convex_set in (L2Ball(5), Simplex(6)):
        thetas = drifting_costs(convex_set, args.horizon, args.seed)
        for two_point in (False, True):
            gaps = []
            for same_rate in (True, False):
                ours, theirs = compare(
                    convex_set, args.horizon, thetas, two_point=two_point, same_rate=same_rate
                )
                gaps.append(float(np.abs(ours - theirs).max()))
            name = "pbgd2" if two_point else "pbgd"
            print(f"| {convex_set!r} | {name} | {gaps[0]:.2g} | {gaps[1]:.2g} |")


if __name__ == "__main__":
    main()
