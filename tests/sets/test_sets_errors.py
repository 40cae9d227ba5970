"""Bad input: the documented exception, with a message naming the value and what is allowed."""

from __future__ import annotations

import re
import sys

import numpy as np
import pytest
from set_cases import QP_CASES

from bco_gym.sets import (
    BirkhoffPolytope,
    FlowPolytope,
    Hypercube,
    L1Ball,
    L2Ball,
    NuclearNormBall,
    ShrunkSet,
    Simplex,
)


def _wrong_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    return (*shape[:-1], shape[-1] + 1)


def test_wrong_shape_is_rejected_by_every_oracle(case):
    convex_set = case.make()
    bad = np.zeros(_wrong_shape(convex_set.shape))
    expected = re.escape(f"has shape {bad.shape}, expected {convex_set.shape}")
    for oracle, what in ((convex_set.lmo, "direction"), (convex_set.project, "point")):
        with pytest.raises(ValueError, match=f"{what} {expected}"):
            oracle(bad)
    with pytest.raises(ValueError, match=f"vector {expected}"):
        convex_set.tangent(bad)
    with pytest.raises(ValueError, match=r"vectors has shape .*, expected \(k, "):
        convex_set.tangent_many(bad[None, None])
    with pytest.raises(ValueError, match=f"point {expected}"):
        convex_set.shrink(0.5 * convex_set.inner_radius).project(bad)
    assert not convex_set.contains(bad)
    assert convex_set.violation(bad) == f"shape {bad.shape}, expected {convex_set.shape}"


def test_non_finite_entries_are_rejected(case):
    convex_set = case.make()
    bad = np.array(convex_set.center, dtype=float)
    bad.flat[0] = np.nan
    for oracle in (convex_set.lmo, convex_set.project, convex_set.tangent):
        with pytest.raises(ValueError, match="non-finite entries"):
            oracle(bad)
    with pytest.raises(ValueError, match="non-finite entries"):
        convex_set.tangent_many(bad[None])
    bad.flat[0] = np.inf
    assert convex_set.violation(bad) == "non-finite entries (NaN or inf)"


@pytest.mark.parametrize(
    ("convex_set", "point", "message"),
    [
        (
            Simplex(2),
            [0.5, 0.57],
            r"sum of entries 1.07 \(1 \+ 0.07\), expected 1 within atol=1e-09",
        ),
        (Simplex(2), [-0.1, 1.1], "entry 0 is -0.1, expected >= 0"),
        (L2Ball(2, 2.0), [3.0, 4.0], "Euclidean norm 5, expected <= 2"),
        (L1Ball(2, 2.0), [3.0, -4.0], "l1 norm 7, expected <= 2"),
        (Hypercube([0, 0, 2], [1, 1, 5]), [0.5, 0.5, 6.0], r"entry 2 is 6, expected in \[2, 5\]"),
        (NuclearNormBall(2, 2), np.diag([2.0, 1.0]), "nuclear norm 3, expected <= 1"),
        (BirkhoffPolytope(2), [[1.2, -0.2], [-0.2, 1.2]], r"entry \(0, 1\) is -0.2, expected >= 0"),
        (
            BirkhoffPolytope(2),
            [[0.6, 0.6], [0.4, 0.4]],
            r"row 0 sums to 1.2 \(1 \+ 0.2\), expected 1",
        ),
        (
            BirkhoffPolytope(2),
            [[0.6, 0.4], [0.6, 0.4]],
            r"column 0 sums to 1.2 \(1 \+ 0.2\), expected 1",
        ),
    ],
)
def test_violation_names_the_constraint_and_value(convex_set, point, message):
    reason = convex_set.violation(np.array(point, dtype=float))
    assert reason is not None and re.search(message, reason), reason
    assert not convex_set.contains(np.array(point, dtype=float))


def test_flow_violations_name_the_edge_or_node():
    grid = FlowPolytope.grid(2, 2)  # edges: (0,0)->(0,1), (0,0)->(1,0), (0,1)->(1,1), (1,0)->(1,1)
    assert "edge 1 ((0, 0) -> (1, 0)) carries -0.3" in grid.violation(
        np.array([1.3, -0.3, 1.3, -0.3])
    )
    reason = grid.violation(np.array([0.5, 0.5, 0.7, 0.5]))
    assert "flow not conserved at node (0, 1): in-flow 0.5, out-flow 0.7" in reason
    reason = grid.violation(np.array([0.6, 0.6, 0.6, 0.6]))
    assert "net out-flow of the source (0, 0) is 1.2 (1 + 0.2), expected 1" in reason
    dag = FlowPolytope([("s", "a"), ("s", "b"), ("a", "t"), ("b", "t"), ("t", "z")], "s", "t")
    reason = dag.violation(np.array([0.5, 0.5, 0.5, 0.5, 0.2]))
    assert "edge 4 ('t' -> 'z') lies on no source-sink path" in reason and "0.2" in reason


def test_shrunk_violation_explains_in_base_terms():
    shrunk = Simplex(3).shrink(0.5 * Simplex(3).inner_radius)
    reason = shrunk.violation(np.array([1.0, 0.0, 0.0]))
    assert reason.startswith("(scaled back to the base set) entry")


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: Simplex(1), r"Simplex: n=1 must be an integer >= 2 \(the 1-simplex"),
        (lambda: Simplex(0), "Simplex: n=0 must be an integer >= 2"),
        (lambda: Simplex(2.5), r"Simplex: n=2\.5 must be an integer"),
        (lambda: Simplex(True), "Simplex: n=True must be an integer"),
        (lambda: L2Ball(0), "L2Ball: n=0 must be an integer >= 1"),
        (lambda: L2Ball(3, radius=0.0), r"L2Ball: radius=0\.0 must be a finite number > 0"),
        (lambda: L1Ball(3, radius=-1), "L1Ball: radius=-1 must be a finite number > 0"),
        (lambda: L1Ball(3, radius=float("nan")), "L1Ball: radius=nan must be"),
        (lambda: L1Ball(3, radius="big"), "L1Ball: radius='big' must be"),
        (lambda: Hypercube(1.0, 1.0, n=3), r"low\[0\]=1 >= high\[0\]=1; need low < high"),
        (lambda: Hypercube([0, 2], [1, 1]), r"low\[1\]=2 >= high\[1\]=1"),
        (lambda: Hypercube(0.0, 1.0), "both scalars; pass n="),
        (lambda: Hypercube([0, 0], [1, 1, 1]), r"inconsistent sizes \[2, 3\]"),
        (lambda: Hypercube([0, 0], [1, 1], n=3), r"inconsistent sizes \[2, 3\]"),
        (lambda: Hypercube(0.0, [1.0, np.inf]), "high=.* has non-finite entries"),
        (lambda: Hypercube(np.zeros((2, 2)), 1.0), r"low has shape \(2, 2\); expected a scalar"),
        (lambda: NuclearNormBall(0, 3), "NuclearNormBall: rows=0 must be an integer >= 1"),
        (lambda: NuclearNormBall(3, 3, radius=0), "NuclearNormBall: radius=0 must be"),
        (lambda: BirkhoffPolytope(1), r"BirkhoffPolytope: n=1 must be an integer >= 2 \(B_1"),
        (lambda: FlowPolytope.grid(1, 5), r"grid: rows=1 must be an integer >= 2 \(a 1-wide"),
    ],
)
def test_invalid_construction(build, message):
    with pytest.raises(ValueError, match=message):
        build()


@pytest.mark.parametrize(
    ("edges", "source", "sink", "message"),
    [
        (
            [("s", "a"), ("a", "b"), ("b", "a"), ("b", "t")],
            "s",
            "t",
            "not a DAG; cycle 'a' -> 'b' -> 'a'",
        ),
        ([("s", "a"), ("a", "a"), ("a", "t")], "s", "t", "edge 1 is a self-loop at 'a'"),
        ([("s", "a"), ("b", "t"), ("s", "c")], "s", "t", "no path from source 's' to sink 't'"),
        ([("s", "a"), ("a", "t")], "s", "t", "only one path from 's' to 't'"),
        ([("s", "a"), ("a", "t")], "q", "t", "source 'q' is not an endpoint of any edge"),
        ([("s", "a"), ("a", "t")], "s", "s", "source and sink are the same node 's'"),
        ([("s", "a", "b")], "s", "b", "edge 0 is ('s', 'a', 'b'); expected a (tail, head)"),
        ([], "s", "t", "edges is empty"),
        ([("s", ["a"])], "s", "t", "edge 0 has an unhashable node ['a']"),
    ],
)
def test_invalid_graphs(edges, source, sink, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        FlowPolytope(edges, source, sink)


def test_longer_cycle_is_shown():
    edges = [("s", "a"), ("a", "b"), ("b", "c"), ("c", "a"), ("c", "t"), ("s", "t")]
    with pytest.raises(ValueError, match="cycle") as error:
        FlowPolytope(edges, "s", "t")
    cycle = str(error.value).split("cycle ")[1].split(" -> ")
    assert cycle[0] == cycle[-1] and sorted(cycle[:-1]) == ["'a'", "'b'", "'c'"]


def test_shrink_rejects_delta_outside_the_inner_radius():
    simplex = Simplex(3)
    for delta in (-0.1, 2.0 * simplex.inner_radius, float("nan")):
        with pytest.raises(ValueError, match=r"shrink: delta=.* must lie in \[0, r\]"):
            simplex.shrink(delta)


@pytest.mark.parametrize("case", QP_CASES, ids=repr)
def test_qp_sets_without_clarabel(case, monkeypatch):
    convex_set = case.make()
    monkeypatch.setitem(sys.modules, "clarabel", None)  # import clarabel now fails
    assert not convex_set.has_projection
    assert not convex_set.shrink(0.1 * convex_set.inner_radius).has_projection
    with pytest.raises(NotImplementedError, match=r"bco_gym\[qp\].*'bbcg'.*do not need"):
        convex_set.project(convex_set.center)
    module = sys.modules[type(convex_set).__module__]
    monkeypatch.setattr(module, "qp_available", lambda: True)  # found, but fails to import
    with pytest.raises(NotImplementedError, match="needs the Clarabel QP solver"):
        convex_set.project(convex_set.center)


_EDGES = [("s", "a"), ("a", "t"), ("s", "t")]

# Wrong-typed constructor arguments: refused (never converted), naming the value.
WRONG_TYPES = [
    ("Simplex n str", lambda: Simplex("3"), "'3'"),
    ("Simplex n float", lambda: Simplex(3.0), "3.0"),
    ("Simplex n numpy float", lambda: Simplex(np.float64(3.0)), "3.0"),
    ("Simplex n bool", lambda: Simplex(True), "True"),
    ("Simplex n None", lambda: Simplex(None), "None"),
    ("Simplex n list", lambda: Simplex([3]), r"\[3\]"),
    ("Simplex n complex", lambda: Simplex(3 + 0j), r"\(3\+0j\)"),
    ("L2Ball radius str", lambda: L2Ball(3, radius="1"), "'1'"),
    ("L2Ball radius bool", lambda: L2Ball(3, radius=True), "True"),
    ("L2Ball radius None", lambda: L2Ball(3, radius=None), "None"),
    ("L2Ball radius complex", lambda: L2Ball(3, radius=1 + 0j), r"\(1\+0j\)"),
    ("L2Ball radius list", lambda: L2Ball(3, radius=[1.0]), r"\[1\.0\]"),
    ("L2Ball radius array", lambda: L2Ball(3, radius=np.array(1.0)), r"array\(1\.\)"),
    ("L2Ball n str", lambda: L2Ball("3"), "'3'"),
    ("L1Ball radius bytes", lambda: L1Ball(3, radius=b"1"), "b'1'"),
    ("L1Ball n numpy bool", lambda: L1Ball(np.True_), "True"),
    ("L1Ball n float", lambda: L1Ball(4.0), "4.0"),
    ("Hypercube low str", lambda: Hypercube(low="0", high=1.0, n=2), "'0'"),
    ("Hypercube high str", lambda: Hypercube(low=0.0, high="1", n=2), "'1'"),
    ("Hypercube low strs", lambda: Hypercube(["0", "1"], [2.0, 3.0]), r"\['0', '1'\]"),
    ("Hypercube low bools", lambda: Hypercube([False, False], [1.0, 1.0]), "False"),
    ("Hypercube high complex", lambda: Hypercube(0.0, 1j, n=2), "1j"),
    ("Hypercube low None", lambda: Hypercube(None, 1.0, n=2), "None"),
    ("Hypercube high dict", lambda: Hypercube(0.0, {"x": 1.0}, n=2), "'x'"),
    ("Hypercube n str", lambda: Hypercube(0.0, 1.0, n="3"), "'3'"),
    ("Hypercube n float", lambda: Hypercube(0.0, 1.0, n=3.0), "3.0"),
    ("Nuclear radius bool", lambda: NuclearNormBall(2, 2, radius=True), "True"),
    ("Nuclear radius str", lambda: NuclearNormBall(2, 2, radius="2"), "'2'"),
    ("Nuclear rows str", lambda: NuclearNormBall("2", 2), "'2'"),
    ("Nuclear cols float", lambda: NuclearNormBall(2, 2.0), "2.0"),
    ("Nuclear warm_start str", lambda: NuclearNormBall(2, 2, warm_start="no"), "'no'"),
    ("Nuclear warm_start int", lambda: NuclearNormBall(2, 2, warm_start=1), "1"),
    ("Nuclear warm_start None", lambda: NuclearNormBall(2, 2, warm_start=None), "None"),
    ("Birkhoff n str", lambda: BirkhoffPolytope("3"), "'3'"),
    ("Birkhoff n float", lambda: BirkhoffPolytope(3.5), "3.5"),
    ("Birkhoff n numpy bool", lambda: BirkhoffPolytope(np.True_), "True"),
    ("Flow edges str", lambda: FlowPolytope("st", "s", "t"), "'st'"),
    ("Flow edges int", lambda: FlowPolytope(5, "s", "t"), "5"),
    ("Flow edges None", lambda: FlowPolytope(None, "s", "t"), "None"),
    ("Flow edges dict", lambda: FlowPolytope({"s": "t", "a": "t"}, "s", "t"), "'s'"),
    ("Flow edge str", lambda: FlowPolytope([("s", "a"), "at", ("s", "t")], "s", "t"), "'at'"),
    ("Flow edge int", lambda: FlowPolytope([("s", "a"), 5, ("s", "t")], "s", "t"), "5"),
    ("Flow source list", lambda: FlowPolytope(_EDGES, ["s"], "t"), r"\['s'\]"),
    ("Flow sink set", lambda: FlowPolytope(_EDGES, "s", {"t"}), r"\{'t'\}"),
    ("Flow sink nan", lambda: FlowPolytope(_EDGES, "s", float("nan")), "nan"),
    ("Flow node nan", lambda: FlowPolytope([("s", float("nan")), ("s", "t")], "s", "t"), "nan"),
    ("grid rows str", lambda: FlowPolytope.grid("3", 3), "'3'"),
    ("grid cols float", lambda: FlowPolytope.grid(3, 3.0), "3.0"),
    ("grid rows bool", lambda: FlowPolytope.grid(True, 3), "True"),
    ("shrink delta str", lambda: Simplex(3).shrink("0.1"), "'0.1'"),
    ("shrink delta bool", lambda: Simplex(3).shrink(False), "False"),
    ("shrink delta None", lambda: Simplex(3).shrink(None), "None"),
    ("ShrunkSet base str", lambda: ShrunkSet("simplex", 0.1), "'simplex'"),
]


@pytest.mark.parametrize(
    ("build", "shown"), [case[1:] for case in WRONG_TYPES], ids=[case[0] for case in WRONG_TYPES]
)
def test_wrong_typed_constructor_arguments_are_refused(build, shown):
    with pytest.raises((ValueError, TypeError)) as error:
        build()
    message = str(error.value)
    assert re.search(shown, message), message
    assert re.search(r"must|expected", message), message


def test_enough_wrong_types_are_enumerated():
    assert len(WRONG_TYPES) >= 30
