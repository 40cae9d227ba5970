"""Bad input to the Python API, enumerated: each is refused cleanly.

Every case makes one bad call and checks that it raises the expected typed error,
whose message names the offending value (``shows``) and says what is allowed; where
the call was made on an object (an env, a wrapper, a model), that object is then used
correctly and must still work (``recover``). The cases cover env construction through
``gym.make`` and the class, ``step``/``reset``, the action space, Gymnasium's and our
wrappers, ``RegretRecorder``, the box maps, ``SB3Agent``, ``make_agent`` for the sb3
names, and loss sequences that return no finite number.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.error import Error as GymnasiumError
from gymnasium.error import ResetNeeded

import bco_gym  # noqa: F401  (registers the env ids)
from bco_gym import BanditConvexEnv
from bco_gym.agents import make_agent
from bco_gym.envs import ConvexSetSpace
from bco_gym.errors import InfeasibleActionError, InvalidLossError
from bco_gym.losses import LinearLoss
from bco_gym.sets import Simplex
from bco_gym.wrappers import BoxActionAdapter, RegretRecorder

#: words by which a message says what is allowed
ALLOWED = re.compile(r"allowed|expected|accepted|valid|must|needs|use |To accept", re.IGNORECASE)


@dataclass(frozen=True)
class Case:
    """One bad call: ``act(arrange())`` raises ``error`` showing ``shows``; then
    ``recover(target)`` must work on the same object."""

    name: str
    act: Callable[[Any], Any]
    error: type[BaseException]
    shows: str
    arrange: Callable[[], Any] = lambda: None
    recover: Callable[[Any], Any] | None = None


def simplex_env(**kwargs: Any) -> gym.Env:
    env = gym.make("BCO-Simplex-v0", n=3, horizon=20, **kwargs)
    env.reset(seed=0)
    return env


def ball_env() -> gym.Env:
    env = gym.make("BCO-Ball-v0", n=2, horizon=20)
    env.reset(seed=0)
    return env


def center_steps(env: gym.Env) -> None:
    """The env still plays: the centre is accepted and the round advances from 0."""
    _, _, _, _, info = env.step(env.unwrapped.set.center)
    assert info["t"] == 1


# -- gym.make and the class ----------------------------------------------------------------
#: the seven generated-loss ids (a data id has other keywords; see test_env_registration)
SEVEN_IDS = (
    "BCO-Simplex-v0",
    "BCO-Ball-v0",
    "BCO-L1Ball-v0",
    "BCO-Hypercube-v0",
    "BCO-NuclearBall-v0",
    "BCO-ShortestPath-v0",
    "BCO-Birkhoff-v0",
)
SIZE_KEYWORD = {
    "BCO-Simplex-v0": ("n", "3", "'3'"),
    "BCO-Ball-v0": ("n", 0, "n=0"),
    "BCO-L1Ball-v0": ("n", 2.0, "n=2.0"),
    "BCO-Hypercube-v0": ("n", True, "n=True"),
    "BCO-NuclearBall-v0": ("rows", 0, "rows=0"),
    "BCO-ShortestPath-v0": ("grid", 1, "grid=1"),
    "BCO-Birkhoff-v0": ("n", None, "n=None"),
}
EVERY_ID_KWARGS = [
    ({"dim": 5}, "'dim'"),
    ({"horizon": 1.5}, "horizon=1.5"),
    ({"atol": "x"}, "atol='x'"),
    ({"loss_kwargs": "str"}, "loss_kwargs='str'"),
    ({"feedback": 3}, "feedback=3"),
    ({"loss": 3}, "loss=3"),
]
SIMPLEX_KWARGS = [
    ({"horizon": 0}, "horizon=0"),
    ({"horizon": -5}, "horizon=-5"),
    ({"horizon": "10"}, "horizon='10'"),
    ({"horizon": True}, "horizon=True"),
    ({"horizon": [10]}, "horizon=[10]"),
    ({"horizon": 1e3}, "horizon=1000.0"),
    ({"atol": -1.0}, "atol=-1.0"),
    ({"atol": math.nan}, "atol=nan"),
    ({"atol": math.inf}, "atol=inf"),
    ({"atol": True}, "atol=True"),
    ({"atol": "1e-6"}, "atol='1e-6'"),
    ({"atol": None}, "atol=None"),
    ({"atol": [1e-9]}, "atol=[1e-09]"),
    ({"loss_kwargs": [("noise", 0.1)]}, "loss_kwargs=[('noise', 0.1)]"),
    ({"loss_kwargs": {1: 2}}, "loss_kwargs={1: 2}"),
    ({"loss": "nope"}, "'nope'"),
    ({"loss": None}, "loss=None"),
    ({"feedback": "Bandit"}, "feedback='Bandit'"),
    ({"feedback": None}, "feedback=None"),
    ({"feedback": ["bandit"]}, "feedback=['bandit']"),
    ({"on_infeasible": "clip"}, "on_infeasible='clip'"),
    ({"on_infeasible": True}, "on_infeasible=True"),
    ({"render_mode": "human"}, "render_mode='human'"),
    ({"render_mode": 1}, "render_mode=1"),
    ({"n": 1}, "n=1"),
    ({"dimension": 3, "size": 2}, "'dimension', 'size'"),
]


def make_cases() -> list[Case]:
    cases = []
    for env_id in SEVEN_IDS:
        for kwargs, shows in EVERY_ID_KWARGS:
            cases.append(Case(f"make-{env_id}-{shows}", _maker(env_id, kwargs), ValueError, shows))
        keyword, value, shows = SIZE_KEYWORD[env_id]
        cases.append(
            Case(f"make-{env_id}-{shows}", _maker(env_id, {keyword: value}), ValueError, shows)
        )
    for kwargs, shows in SIMPLEX_KWARGS:
        cases.append(
            Case(f"make-simplex-{shows}", _maker("BCO-Simplex-v0", kwargs), ValueError, shows)
        )
    return cases


def _maker(env_id: str, kwargs: dict[str, Any]) -> Callable[[Any], Any]:
    return lambda _: gym.make(env_id, **kwargs)


def class_cases() -> list[Case]:
    simplex = Simplex(3)
    losses = LinearLoss(simplex)
    return [
        Case("class-set-str", lambda _: BanditConvexEnv("simplex", "linear", 10), TypeError, "str"),
        Case(
            "class-set-none", lambda _: BanditConvexEnv(None, "linear", 10), TypeError, "NoneType"
        ),
        Case("class-losses-int", lambda _: BanditConvexEnv(simplex, 3, 10), TypeError, "losses=3"),
        Case("class-losses-none", lambda _: BanditConvexEnv(simplex, None, 10), TypeError, "None"),
        Case(
            "class-horizon-0",
            lambda _: BanditConvexEnv(simplex, losses, 0),
            ValueError,
            "horizon=0",
        ),
        Case(
            "class-horizon-2.5", lambda _: BanditConvexEnv(simplex, losses, 2.5), ValueError, "2.5"
        ),
        Case(
            "class-losses-and-kwargs",
            lambda _: BanditConvexEnv(simplex, losses, 10, loss_kwargs={"noise": 0.1}),
            ValueError,
            "{'noise': 0.1}",
        ),
        Case(
            "class-losses-other-set",
            lambda _: BanditConvexEnv(simplex, LinearLoss(Simplex(4)), 10),
            ValueError,
            "Simplex(n=4)",
        ),
        Case(
            "class-atol-str",
            lambda _: BanditConvexEnv(simplex, losses, 10, atol="x"),
            ValueError,
            "atol='x'",
        ),
        Case(
            "class-unknown-family-kwarg",
            lambda _: BanditConvexEnv(simplex, "linear", 10, loss_kwargs={"nois": 0.1}),
            ValueError,
            "nois",
        ),
    ]


# -- step and reset -----------------------------------------------------------------------
BAD_ACTIONS = [
    ("complex", np.array([0.5, 0.5, 0.0]) + 0j, "complex"),
    ("complex-list", [0.5 + 1j, 0.5, 0.0], "complex"),
    ("bool-array", np.array([True, False, False]), "bool"),
    ("bool-list", [True, False, False], "bool"),
    ("string-list", ["0.1", "0.4", "0.5"], "'0.1'"),
    ("string-array", np.array(["0.1", "0.4", "0.5"]), "'0.1'"),
    ("object-strings", np.array(["0.1", "0.4", "0.5"], dtype=object), "'0.1'"),
    ("object-floats", np.array([0.2, 0.3, 0.5], dtype=object), "object"),
    ("bytes", np.array([b"0", b"1", b"0"]), "b'0'"),
    ("datetime", np.array([0, 1, 0], dtype="datetime64[s]"), "datetime64"),
    ("none", None, "None"),
    ("dict", {"x": 1.0}, "{'x': 1.0}"),
    ("string", "abc", "'abc'"),
    ("ragged", [[0.5], [0.5, 0.0]], "[[0.5], [0.5, 0.0]]"),
    ("scalar", 0.5, "shape ()"),
    ("batch-of-one", np.full((1, 3), 1 / 3), "shape (1, 3)"),
    ("too-long", np.full(4, 0.25), "shape (4,)"),
    ("empty", np.empty(0), "shape (0,)"),
    ("nan", np.array([np.nan, 0.5, 0.5]), "nan"),
    ("inf", np.array([np.inf, 0.0, 0.0]), "inf"),
    ("minus-inf", np.array([-np.inf, 1.0, 1.0]), "-inf"),
    ("sum-off", np.array([0.5, 0.5, 0.07]), "sum of entries 1.07"),
    ("negative", np.array([1.2, -0.2, 0.0]), "entry 1 is -0.2"),
    ("float32", np.full(3, 1 / 3, dtype=np.float32), "distance to the set"),
]


def step_cases() -> list[Case]:
    cases = [
        Case(
            f"step-{name}",
            _stepper(action),
            InfeasibleActionError,
            shows,
            simplex_env,
            center_steps,
        )
        for name, action, shows in BAD_ACTIONS
    ]
    cases += [
        Case(
            "step-ball-outside",
            _stepper([1.0, 1.0]),
            InfeasibleActionError,
            "[1. 1.]",
            ball_env,
            center_steps,
        ),
        Case(
            "step-ball-complex",
            _stepper([1j, 0.0]),
            InfeasibleActionError,
            "complex",
            ball_env,
            center_steps,
        ),
        Case(
            "step-nuclear-flat",
            _stepper(np.zeros(6)),
            InfeasibleActionError,
            "shape (6,), expected (2, 3)",
            lambda: _reset(gym.make("BCO-NuclearBall-v0", rows=2, cols=3, horizon=5)),
            center_steps,
        ),
        Case(
            "step-birkhoff-bool",
            _stepper(np.eye(3, dtype=bool)),
            InfeasibleActionError,
            "bool",
            lambda: _reset(gym.make("BCO-Birkhoff-v0", n=3, horizon=5)),
            center_steps,
        ),
        Case(
            "step-flow-strings",
            lambda env: env.step([str(v) for v in env.unwrapped.set.center]),
            InfeasibleActionError,
            "strings",
            lambda: _reset(gym.make("BCO-ShortestPath-v0", grid=2, horizon=5)),
            center_steps,
        ),
        Case(
            "step-before-reset",
            lambda env: env.unwrapped.step(env.unwrapped.set.center),
            ResetNeeded,
            "reset",
            lambda: gym.make("BCO-Simplex-v0", n=3, horizon=2),
            lambda env: center_steps(_reset(env)),
        ),
        Case(
            "step-after-horizon",
            lambda env: env.unwrapped.step(env.unwrapped.set.center),
            ResetNeeded,
            "horizon=2",
            lambda: _played(gym.make("BCO-Simplex-v0", n=3, horizon=2), 2),
            lambda env: center_steps(_reset(env)),
        ),
        Case(
            "reset-seed-str",
            lambda env: env.reset(seed="x"),
            GymnasiumError,
            "str",
            simplex_env,
            center_steps,
        ),
        Case(
            "reset-seed-negative",
            lambda env: env.reset(seed=-1),
            GymnasiumError,
            "-1",
            simplex_env,
            center_steps,
        ),
        Case(
            "reset-seed-float",
            lambda env: env.reset(seed=1.5),
            GymnasiumError,
            "float",
            simplex_env,
            center_steps,
        ),
        Case(
            "reset-options",
            lambda env: env.reset(options={"horizon": 5}),
            ValueError,
            "{'horizon': 5}",
            simplex_env,
            center_steps,
        ),
    ]
    return cases


def _stepper(action: Any) -> Callable[[gym.Env], Any]:
    return lambda env: env.step(action)


def _reset(env: gym.Env) -> gym.Env:
    env.reset(seed=0)
    return env


def _played(env: gym.Env, rounds: int) -> gym.Env:
    _reset(env)
    for _ in range(rounds):
        env.step(env.unwrapped.set.center)
    return env


# -- losses that return no finite number ------------------------------------------------
class BrokenLoss(LinearLoss):
    """Linear losses, except that round ``at`` returns ``value`` (a user's bug)."""

    name = "broken"

    def __init__(self, convex_set, value: Any, at: int = 2, gradient: Any = None):
        super().__init__(convex_set)
        self.value, self.at, self.bad_gradient = value, at, gradient

    def _evaluate(self, params, part, points):
        values = super()._evaluate(params, part, points)
        if part.start <= self.at < part.stop:
            if isinstance(self.value, np.ndarray):
                return self.value
            values = values.astype(object) if isinstance(self.value, str) else values.copy()
            values[self.at - part.start] = self.value
        return values

    def _gradient(self, params, offset, x):
        gradient = super()._gradient(params, offset, x)
        return (
            self.bad_gradient if self.bad_gradient is not None and offset == self.at else gradient
        )


class NanComparator(LinearLoss):
    name = "nan-comparator"

    def comparator(self, checkpoints):
        return [
            type(c)(c.horizon, c.point, math.nan, c.gap) for c in super().comparator(checkpoints)
        ]


def broken_env(value: Any, feedback: str = "bandit", gradient: Any = None) -> gym.Env:
    convex_set = Simplex(3)
    env = BanditConvexEnv(
        convex_set, BrokenLoss(convex_set, value, 2, gradient), 6, feedback=feedback
    )
    return _played(env, 2)


def round_unchanged(env: gym.Env) -> None:
    """After the refusal the env is still in round 2, and round 2 is refused again."""
    assert env.unwrapped.round == 2
    with pytest.raises(InvalidLossError):
        env.step(env.unwrapped.set.center)


def loss_cases() -> list[Case]:
    center = Simplex(3).center
    where = "loss sequence BrokenLoss ('broken'), round 2"
    cases = [
        Case(
            f"loss-{name}",
            lambda env: env.step(center),
            InvalidLossError,
            where,
            _bind(broken_env, value),
            round_unchanged,
        )
        for name, value in [
            ("nan", math.nan),
            ("inf", math.inf),
            ("minus-inf", -math.inf),
            ("empty", np.empty(0)),
            ("two", np.zeros(2)),
            ("string", "0.5"),
        ]
    ]
    cases.append(
        Case(
            "loss-gradient-nan",
            lambda env: env.step(center),
            InvalidLossError,
            "round 2: the gradient is array([nan",
            _bind(broken_env, 0.0, "full", np.full(3, np.nan)),
        )
    )
    cases.append(
        Case(
            "recorder-comparator-nan",
            lambda env: _played(env, 3),
            InvalidLossError,
            "value nan",
            lambda: RegretRecorder(BanditConvexEnv(Simplex(3), NanComparator(Simplex(3)), 3)),
        )
    )
    return cases


def _bind(function: Callable[..., Any], *args: Any) -> Callable[[], Any]:
    return lambda: function(*args)


# -- spaces and wrappers ------------------------------------------------------------------
def space_cases() -> list[Case]:
    simplex = Simplex(3)
    space = lambda: ConvexSetSpace(simplex, seed=0)  # noqa: E731
    return [
        Case("space-not-a-set", lambda _: ConvexSetSpace("simplex"), TypeError, "str"),
        Case("space-atol-str", lambda _: ConvexSetSpace(simplex, atol="x"), ValueError, "atol='x'"),
        Case(
            "space-atol-negative",
            lambda _: ConvexSetSpace(simplex, atol=-1.0),
            ValueError,
            "atol=-1.0",
        ),
        Case("space-batch-0", lambda _: ConvexSetSpace(simplex, batch=0), ValueError, "batch=0"),
        Case(
            "space-batch-float",
            lambda _: ConvexSetSpace(simplex, batch=1.5),
            ValueError,
            "batch=1.5",
        ),
        Case(
            "space-batch-str", lambda _: ConvexSetSpace(simplex, batch="2"), ValueError, "batch='2'"
        ),
        Case(
            "space-sample-mask",
            lambda s: s.sample(mask=np.ones(3)),
            GymnasiumError,
            "mask=array",
            space,
            lambda s: simplex.contains(s.sample()),
        ),
    ]


def adapted() -> BoxActionAdapter:
    env = BoxActionAdapter(gym.make("BCO-Simplex-v0", n=3, horizon=10))
    env.reset(seed=0)
    return env


def box_steps(env: gym.Env) -> None:
    _, _, _, _, info = env.step(np.zeros(env.action_space.shape, dtype=np.float32))
    assert info["t"] == 1


def wrapper_cases() -> list[Case]:
    simplex_env_raw = lambda: gym.make("BCO-Simplex-v0", n=3, horizon=10)  # noqa: E731
    cases = [
        Case(
            "adapter-cartpole",
            lambda _: BoxActionAdapter(gym.make("CartPole-v1")),
            TypeError,
            "CartPole",
        ),
        Case(
            "recorder-cartpole",
            lambda _: RegretRecorder(gym.make("CartPole-v1")),
            TypeError,
            "CartPole",
        ),
    ]
    for value in ("x", 0, 1.0, math.nan, True, -0.5):
        cases.append(
            Case(
                f"adapter-vertex-tolerance-{value!r}",
                lambda env, v=value: BoxActionAdapter(env, vertex_tolerance=v),
                ValueError,
                f"vertex_tolerance={value!r}",
                simplex_env_raw,
                lambda env: box_steps(_reset(BoxActionAdapter(env))),
            )
        )
    for name, action, shows in [
        ("complex", np.zeros(3) + 0j, "complex"),
        ("bool", np.array([True, False, True]), "bool"),
        ("strings", ["0.1", "0.2", "0.3"], "'0.1'"),
        ("shape", np.zeros(2), "shape (2,)"),
        ("nan", np.array([np.nan, 0.0, 0.0]), "nan"),
    ]:
        cases.append(
            Case(f"adapter-step-{name}", _stepper(action), ValueError, shows, adapted, box_steps)
        )
    recorded = lambda: _played(RegretRecorder(gym.make("BCO-Simplex-v0", n=3, horizon=10)), 5)  # noqa: E731
    for checkpoints, shows in [
        ([1.5], "[1.5]"),
        (["2"], "['2']"),
        ([0], "[0]"),
        ([3, 2], "[3, 2]"),
        (3, "3"),
        ([], "[]"),
        ([6], "[6]"),
    ]:
        cases.append(
            Case(
                f"regret-curve-{shows}",
                lambda env, c=checkpoints: env.regret_curve(c),
                ValueError,
                f"checkpoints {shows}",
                recorded,
                lambda env: env.regret_curve([5]),
            )
        )
    cases += [
        Case(
            "rescale-action-on-simplex",
            lambda env: env.step(np.ones(3, dtype=np.float32)),
            InfeasibleActionError,
            "BoxActionAdapter",
            lambda: _reset(
                gym.wrappers.RescaleAction(gym.make("BCO-Simplex-v0", n=3, horizon=5), -1.0, 1.0)
            ),
            lambda env: env.step(np.array([-1.0, 1.0, -1.0], dtype=np.float32)),
        ),
        Case(
            "clip-action-on-ball",
            lambda env: env.step(np.array([5.0, 5.0])),
            InfeasibleActionError,
            "BoxActionAdapter",
            lambda: _reset(gym.wrappers.ClipAction(gym.make("BCO-Ball-v0", n=2, horizon=5))),
            lambda env: env.step(np.array([0.5, 0.0])),
        ),
    ]
    return cases


# -- stable-baselines3 --------------------------------------------------------------------
_MODELS: dict[str, Any] = {}


def ppo_model() -> Any:
    """A PPO model for the 3-simplex (built once: SB3 constructors are slow)."""
    if "ppo" not in _MODELS:
        from bco_gym.agents.sb3.agent import PPOAgent

        problem = gym.make("BCO-Simplex-v0", n=3, horizon=20).unwrapped.problem
        _MODELS["ppo"] = PPOAgent(problem, n_steps=4, hidden_sizes=[4]).make_model(seed=0)
    return _MODELS["ppo"]


def sb3_agent_works(arranged: tuple[Any, gym.Env]) -> None:
    from bco_gym.agents.sb3.agent import SB3Agent

    model, env = arranged
    agent = SB3Agent(model, env)
    agent.reset(seed=0)
    env.reset(seed=0)
    env.step(np.asarray(agent.act()))


def sb3_cases() -> list[Case]:
    from bco_gym.agents.sb3.agent import SB3Agent

    arrange = lambda: (ppo_model(), gym.make("BCO-Simplex-v0", n=3, horizon=20))  # noqa: E731
    four = lambda: (ppo_model(), gym.make("BCO-Simplex-v0", n=4, horizon=20))  # noqa: E731
    cases = [
        Case(
            "sb3agent-model-str",
            lambda a: SB3Agent("model.zip", a[1]),
            TypeError,
            "'model.zip'",
            arrange,
            sb3_agent_works,
        ),
        Case(
            "sb3agent-cartpole",
            lambda a: SB3Agent(a[0], gym.make("CartPole-v1")),
            TypeError,
            "CartPole",
            arrange,
            sb3_agent_works,
        ),
        Case(
            "sb3agent-env-str",
            lambda a: SB3Agent(a[0], "BCO-Simplex-v0"),
            TypeError,
            "'BCO-Simplex-v0'",
            arrange,
            sb3_agent_works,
        ),
        Case(
            "sb3agent-online-str",
            lambda a: SB3Agent(a[0], a[1], online="yes"),
            TypeError,
            "online='yes'",
            arrange,
            sb3_agent_works,
        ),
        Case(
            "sb3agent-deterministic-int",
            lambda a: SB3Agent(a[0], a[1], deterministic=1),
            TypeError,
            "deterministic=1",
            arrange,
            sb3_agent_works,
        ),
        Case(
            "sb3agent-online-deterministic",
            lambda a: SB3Agent(a[0], a[1], online=True, deterministic=True),
            ValueError,
            "deterministic=True",
            arrange,
            sb3_agent_works,
        ),
        Case(
            "sb3agent-vertex-tolerance",
            lambda a: SB3Agent(a[0], a[1], vertex_tolerance=2),
            ValueError,
            "vertex_tolerance=2",
            arrange,
            sb3_agent_works,
        ),
        Case(
            "sb3agent-threads-0",
            lambda a: SB3Agent(a[0], a[1], torch_threads=0),
            ValueError,
            "torch_threads=0",
            arrange,
            sb3_agent_works,
        ),
        Case(
            "sb3agent-threads-float",
            lambda a: SB3Agent(a[0], a[1], torch_threads=2.0),
            ValueError,
            "torch_threads=2.0",
            arrange,
            sb3_agent_works,
        ),
        Case(
            "sb3agent-wrong-space",
            lambda a: SB3Agent(a[0], a[1]),
            ValueError,
            "(3,), float32), expected",
            four,
            lambda a: sb3_agent_works((a[0], gym.make("BCO-Simplex-v0", n=3, horizon=20))),
        ),
    ]
    return cases


MAKE_AGENT_BAD = [
    ("sb3-dqn", {}, "'sb3-dqn'"),
    ("sb3-ppo", {"n_step": 8}, "n_step"),
    ("sb3-ppo", {"gamma": 2.0}, "gamma=2.0"),
    ("sb3-ppo", {"n_steps": "8"}, "n_steps='8'"),
    ("sb3-ppo", {"n_steps": 1}, "batch_size=1"),
    ("sb3-ppo", {"use_sde": "yes"}, "use_sde='yes'"),
    ("sb3-ppo", {"hidden_sizes": "64"}, "hidden_sizes='64'"),
    ("sb3-ppo", {"hidden_sizes": [0]}, "hidden_sizes=[0]"),
    ("sb3-ppo", {"batch_size": 1.5}, "batch_size=1.5"),
    ("sb3-ppo", {"n_epochs": True}, "n_epochs=True"),
    ("sb3-ppo", {"clip_range": -1}, "clip_range=-1"),
    ("sb3-ppo", {"policy_kwargs": "x"}, "policy_kwargs='x'"),
    ("sb3-ppo", {"learning_rate": "fast"}, "learning_rate='fast'"),
    ("sb3-ppo", {"learning_rate": np.float32(1e-3)}, "(a Python int or float)"),
    ("sb3-ppo", {"target_kl": 0}, "target_kl=0"),
    ("sb3-ppo", {"vertex_tolerance": "x"}, "vertex_tolerance='x'"),
    ("sb3-ppo", {"model": "trained.zip"}, "model='trained.zip'"),
    ("sb3-ppo", {"torch_threads": -1}, "torch_threads=-1"),
    ("sb3-a2c", {"use_rms_prop": 1}, "use_rms_prop=1"),
    ("sb3-a2c", {"gae_lambda": 1.5}, "gae_lambda=1.5"),
    ("sb3-td3", {"action_noise_std": -1}, "action_noise_std=-1"),
    ("sb3-td3", {"tau": 2}, "tau=2"),
    ("sb3-td3", {"buffer_size": 0}, "buffer_size=0"),
    ("sb3-td3", {"train_freq": "x"}, "train_freq='x'"),
    ("sb3-td3", {"learning_starts": -1}, "learning_starts=-1"),
    ("sb3-td3", {"policy_delay": 0}, "policy_delay=0"),
    ("sb3-sac", {"ent_coef": "x"}, "ent_coef='x'"),
    ("sb3-sac", {"target_entropy": "x"}, "target_entropy='x'"),
    ("sb3-sac", {"n_epochs": 3}, "n_epochs"),
]


def make_agent_cases() -> list[Case]:
    arrange = lambda: gym.make("BCO-Simplex-v0", n=3, horizon=20)  # noqa: E731
    cases = [
        Case(
            f"make-agent-{name}-{shows}",
            lambda env, n=name, k=kwargs: make_agent(n, env, **k),
            ValueError if "model" not in kwargs else TypeError,
            shows,
            arrange,
            lambda env: make_agent("sb3-a2c", env, n_steps=4, hidden_sizes=[4]),
        )
        for name, kwargs, shows in MAKE_AGENT_BAD
    ]
    cases += [
        Case(
            "make-agent-model-and-hyperparameters",
            lambda env: make_agent("sb3-ppo", env, model=ppo_model(), n_steps=8),
            ValueError,
            "['n_steps']",
            arrange,
        ),
        Case(
            "make-agent-model-of-another-algorithm",
            lambda env: make_agent("sb3-sac", env, model=ppo_model()),
            TypeError,
            "stable_baselines3.SAC",
            arrange,
            lambda env: make_agent("sb3-ppo", env, model=ppo_model()),
        ),
    ]
    return cases


CASES = [
    *make_cases(),
    *class_cases(),
    *step_cases(),
    *loss_cases(),
    *space_cases(),
    *wrapper_cases(),
    *sb3_cases(),
    *make_agent_cases(),
]


def test_at_least_150_distinct_bad_inputs_are_enumerated():
    names = [case.name for case in CASES]
    assert len(set(names)) == len(names) >= 150


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_bad_input_is_refused_cleanly(case):
    target = case.arrange()
    with pytest.raises(case.error) as caught:
        case.act(target)
    message = str(caught.value)
    assert case.shows in message, f"{message!r} does not show {case.shows!r}"
    assert ALLOWED.search(message), f"{message!r} does not say what is allowed"
    if case.recover is not None:
        case.recover(target)


ACTION_VALUES = [
    np.array([0.2, 0.3, 0.5]),
    np.array([0, 1, 0], dtype=np.int8),
    np.array([0, 1, 0], dtype=np.uint64),
    np.array([0.25, 0.25, 0.5], dtype=np.float16),
    np.array([0.25, 0.25, 0.5], dtype=np.float32),
    np.array([0.25, 0.25, 0.5], dtype=np.longdouble),
    [0, 0, 1],
    [0.2, 0.3, 0.5],
    *(action for _, action, _ in BAD_ACTIONS),
]


@pytest.mark.parametrize(
    "action", ACTION_VALUES, ids=lambda a: f"{type(a).__name__}-{getattr(a, 'dtype', '')}"
)
def test_action_space_contains_exactly_what_step_accepts(action):
    env = simplex_env()
    try:
        env.step(action)
        accepted = True
    except InfeasibleActionError:
        accepted = False
    assert env.action_space.contains(action) is accepted
