"""stable-baselines3 models as BCO agents: the reinforcement-learning baselines.

A BCO round is a one-step decision: the loss sequence is oblivious, so the action of
round t changes neither later losses nor the observation t/T. As a Markov decision
process the problem therefore has a known discount, gamma = 0 (the return of a round
is its reward -f_t(x_t)), and an SB3 algorithm is a (contextual, continuous-armed)
bandit learner. The agents here act in SB3's box [-1, 1]^shape and play the image of
the action under the set's :func:`~bco_gym.sets.box_maps.box_map`, the same map as
:class:`bco_gym.wrappers.BoxActionAdapter` applies on the env side.

Two modes (:class:`SB3Agent`):

* frozen (``online=False``): a trained model's policy is evaluated; ``update`` only
  counts rounds.
* online (``online=True``, and every ``sb3-*`` agent of :data:`SB3_AGENTS`): the model
  keeps learning during the episode, with SB3's own code paths driven from
  ``act``/``update`` so the agents are ordinary :class:`~bco_gym.agents.base.Agent`\\ s.
  Round for round this is ``model.learn(total_timesteps=T)`` on the adapted env:
  on-policy algorithms (PPO, A2C) sample (action, value, log-probability) from
  ``model.policy`` in ``act``; ``update`` adds the transition to
  ``model.rollout_buffer`` and, once it holds ``n_steps`` transitions, bootstraps with
  the value of the next observation, computes returns and advantages and calls
  ``model.train()`` (``OnPolicyAlgorithm.collect_rollouts`` + ``learn``). Off-policy
  algorithms (SAC, TD3) act through ``model._sample_action`` (uniform warm-up for
  ``learning_starts`` rounds, then the policy plus action noise); ``update`` adds the
  transition to ``model.replay_buffer`` and every ``train_freq`` rounds, after
  ``learning_starts``, calls ``model.train(gradient_steps, batch_size)``
  (``OffPolicyAlgorithm.collect_rollouts`` + ``learn``). Training that would only
  follow the last round is skipped: it cannot change any play of the episode.

Randomness and reproducibility. SB3 draws from the process-global generators (torch's
for policy samples and initial weights, numpy's legacy one for minibatches and action
noise, Python's ``random`` when seeding). Each agent keeps its own copies of those
three states, seeded from ``reset(seed)``, and swaps them in around the SB3 calls that
draw from them, so the agent neither disturbs nor depends on the caller's global
random state. The agents run torch with one thread unless told otherwise
(``torch_threads``, swapped in around the SB3 calls and recorded in ``params``): the
networks are tiny, so threads only add overhead, and results depend on the count.
On CPU with a given thread count the same seed gives the same actions, bit for bit.

Requires the ``rl`` extra: ``pip install 'bco_gym[rl]'`` (stable-baselines3, torch).

References:
    Raffin et al., Stable-Baselines3: Reliable Reinforcement Learning Implementations,
    JMLR 22(268), 2021. Schulman et al., Proximal Policy Optimization Algorithms, 2017
    (PPO). Mnih et al., Asynchronous Methods for Deep RL, ICML 2016 (A2C). Haarnoja
    et al., Soft Actor-Critic, ICML 2018 (SAC). Fujimoto et al., Addressing Function
    Approximation Error in Actor-Critic Methods, ICML 2018 (TD3).
"""

from __future__ import annotations

import importlib
import io
from types import ModuleType
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np

from bco_gym.agents.base import Agent
from bco_gym.agents.sb3.drivers import (
    FrozenDriver,
    OffPolicyDriver,
    OnPolicyDriver,
    PrivateRandomState,
)
from bco_gym.agents.sb3.options import (
    OFF_POLICY_COMMON,
    OFF_POLICY_OPTIONS,
    ON_POLICY_COMMON,
    ON_POLICY_OPTIONS,
    check_options,
)
from bco_gym.problem import Problem
from bco_gym.sets.box_maps import DEFAULT_VERTEX_TOLERANCE, MappedPoint, box_map

INSTALL_HINT = "pip install 'bco_gym[rl]'"


def import_sb3() -> tuple[ModuleType, ModuleType]:
    """(stable_baselines3, torch), or an ImportError saying how to install them."""
    try:
        import stable_baselines3
        import torch
    except ImportError as error:
        raise ImportError(
            "the RL baselines (SB3Agent, agents 'sb3-ppo', 'sb3-a2c', 'sb3-sac', 'sb3-td3') "
            f"need stable-baselines3 and torch, which are not installed; run: {INSTALL_HINT}"
        ) from error
    return stable_baselines3, torch


def _sb3_class(dotted: str) -> Any:
    """A class of stable_baselines3 by its dotted path under the package."""
    module_name, _, class_name = f"stable_baselines3.{dotted}".rpartition(".")
    return getattr(importlib.import_module(module_name), class_name)


def observation_space() -> gym.spaces.Box:
    """The observation space of every BCO env: the fraction t/T of rounds played."""
    return gym.spaces.Box(0.0, 1.0, (1,), np.float32)


def action_space(problem: Problem) -> gym.spaces.Box:
    """SB3's action space for ``problem``: the box [-1, 1]^shape of the set."""
    return gym.spaces.Box(-1.0, 1.0, problem.set.shape, np.float32)


def _problem_of(env_or_problem: Any, who: str) -> Problem:
    """The Problem itself, or ``env.unwrapped.problem`` (any wrappers, the adapter too)."""
    if isinstance(env_or_problem, Problem):
        return env_or_problem
    problem = getattr(getattr(env_or_problem, "unwrapped", env_or_problem), "problem", None)
    if not isinstance(problem, Problem):
        raise TypeError(
            f"{who} needs a Problem or a bco_gym env (whose unwrapped.problem is one); got "
            f"{env_or_problem!r}"
        )
    return problem


def _check_flag(name: str, value: Any) -> None:
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"SB3Agent: {name}={value!r} is not allowed; expected True or False")


def _check_threads(threads: Any) -> int:
    if isinstance(threads, bool) or not isinstance(threads, int | np.integer) or threads < 1:
        raise ValueError(f"torch_threads={threads!r} is not allowed; expected an integer >= 1")
    return int(threads)


class _SpacesOnlyEnv(gym.Env):
    """A stand-in env that only carries the spaces an SB3 model is built for."""

    def __init__(self, problem: Problem):
        self.observation_space = observation_space()
        self.action_space = action_space(problem)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        raise RuntimeError(
            "this model was built by a bco_gym sb3-* agent and learns through act/update; "
            "to call model.learn(), give it a real env: model.set_env(BoxActionAdapter(env))"
        )

    def step(self, action: np.ndarray):
        raise RuntimeError("see reset(): this stand-in env cannot be stepped")


class SB3Agent(Agent):
    """Run a stable-baselines3 model (PPO, A2C, SAC or TD3) in the BCO act/update loop.

    Each round the model acts in [-1, 1]^shape on the observation t/T and the agent
    plays the image of that action under the set's box map (see
    :class:`~bco_gym.wrappers.BoxActionAdapter`). Train the model on
    ``BoxActionAdapter(env)``, then evaluate it here, frozen or online (module
    docstring). In online mode ``reset(seed)`` restarts from a copy of the model as
    given (so every episode starts from the same weights) and ``self.model`` is that
    working copy; the model passed in is never modified. The observation passed to
    ``act`` is not needed: the agent recomputes t/T from its round counter, exactly
    as the env does (float32).

    Args:
        model: an SB3 ``PPO``, ``A2C``, ``SAC`` or ``TD3`` model with observation space
            Box(0, 1, (1,)) and action space Box(-1, 1, set.shape), trained on any
            number of envs (e.g. ``make_vec_env(id, wrapper_class=BoxActionAdapter)``).
        env_or_problem: the BCO problem, or an env carrying it (``env.unwrapped.problem``;
            wrapped or not, with or without :class:`~bco_gym.wrappers.BoxActionAdapter`),
            as for ``make_agent``.
        online: keep learning during the episode (default: frozen).
        deterministic: play the policy's mean action (frozen mode only; default True).
            Online mode samples, as ``learn`` does.
        vertex_tolerance: the simplex map's reach (see ``SoftmaxMap``).
        torch_threads: torch's intra-op threads while the agent runs SB3 (default 1: the
            networks are tiny, more threads only add overhead, and results depend on
            the count). Swapped in around each SB3 call, so the caller's setting is
            untouched; recorded in ``params``.
        name: the label of its results (default "sb3"): two models in one table need
            two names. ``run_many`` builds one agent per seed from a factory, e.g.
            ``lambda problem: SB3Agent(model, problem, name="ppo-frozen")``, and labels
            its results with that name too.

    ``act`` returns a point of K (a :class:`~bco_gym.sets.box_maps.MappedPoint`): step
    the BCO env itself with it, not ``BoxActionAdapter(env)``, which would map it a
    second time (the adapter warns when given one).

    Attributes:
        model: the SB3 model playing the current episode.
        model_seed: the seed of the episode's SB3 model and random states, drawn from
            ``reset(seed)`` (the seed ``model.learn`` would need to replay the episode).

    stats: ``rounds``, ``lmo_calls`` (always 0), ``projections`` (one per round for sets
    mapped through their projection), ``model_updates`` (calls of ``model.train``).
    """

    name: ClassVar[str] = "sb3"

    def __init__(
        self,
        model: Any,
        env_or_problem: Any,
        online: bool = False,
        deterministic: bool | None = None,
        vertex_tolerance: float = DEFAULT_VERTEX_TOLERANCE,
        torch_threads: int = 1,
        name: str | None = None,
    ):
        super().__init__(_problem_of(env_or_problem, type(self).__name__))
        if name is not None:
            if not isinstance(name, str) or not name.strip() or ":" in name:
                raise ValueError(
                    f"SB3Agent: name={name!r} is not allowed; expected a non-empty string "
                    "without ':' (the label of its results, e.g. 'ppo-frozen')"
                )
            self.name = name  # type: ignore[misc]  # this instance's label
        self._sb3, self._torch = import_sb3()
        _check_flag("online", online)
        if deterministic is not None:
            _check_flag("deterministic", deterministic)
        self.torch_threads = _check_threads(torch_threads)
        if online and deterministic:
            raise ValueError(
                "SB3Agent: deterministic=True needs online=False; an online model explores by "
                "sampling its policy, as model.learn() does"
            )
        self.online = bool(online)
        self._check_model(model)
        self.model = model
        self.deterministic = (not self.online) if deterministic is None else bool(deterministic)
        self.box_map = box_map(self.problem.set, vertex_tolerance)
        self._initial_model: bytes | None = None  # the model as at the first reset (online)
        self._random_state = PrivateRandomState(self._torch, 0, self.torch_threads)
        self._driver: Any = None
        self.model_seed: int | None = None
        self.params = {
            "algorithm": type(model).__name__,
            "online": self.online,
            "deterministic": self.deterministic,
            "vertex_tolerance": float(vertex_tolerance),
            "torch_threads": self.torch_threads,
        }

    # -- model checks and copies ------------------------------------------------------------
    def _check_model(self, model: Any) -> None:
        algorithms = tuple(getattr(self._sb3, name) for name in ("PPO", "A2C", "SAC", "TD3"))
        if not isinstance(model, algorithms):
            raise TypeError(
                f"SB3Agent needs a stable-baselines3 PPO, A2C, SAC or TD3 model, got {model!r}"
            )
        expected = action_space(self.problem)
        space = model.action_space
        if not (
            isinstance(space, gym.spaces.Box)
            and space.shape == expected.shape
            and np.all(space.low == -1.0)
            and np.all(space.high == 1.0)
        ):
            raise ValueError(
                f"SB3Agent: the model's action space is {space}, expected {expected} for "
                f"{self.set!r}; train it on bco_gym.wrappers.BoxActionAdapter(env)"
            )
        if model.observation_space.shape != (1,):
            raise ValueError(
                f"SB3Agent: the model's observation space is {model.observation_space}, "
                f"expected {observation_space()} (the round fraction t/T)"
            )
        off_policy = isinstance(model, _sb3_class("common.off_policy_algorithm.OffPolicyAlgorithm"))
        if self.online and off_policy and model.train_freq.unit.value != "step":
            raise ValueError(
                f"SB3Agent: online mode needs train_freq in steps, got {model.train_freq}; "
                "an episodic schedule would only train after the single episode"
            )

    def _new_model(self, seed: int) -> Any:
        """The model for a new episode (called inside the private random state).

        Frozen: the model itself. Online: a copy of the model as it was at the first
        reset (saved in memory with ``model.save``), seeded with ``seed``.
        """
        if not self.online:
            return self.model
        if self._initial_model is None:
            buffer = io.BytesIO()
            self.model.save(buffer)
            self._initial_model = buffer.getvalue()
        # loaded onto one stand-in env: a model trained on n_envs > 1 then learns on one
        model = type(self.model).load(
            io.BytesIO(self._initial_model), env=_SpacesOnlyEnv(self.problem), device="cpu"
        )
        model.set_random_seed(seed)
        return model

    # -- Agent hooks -------------------------------------------------------------------------
    def _reset(self) -> None:
        seed = int(self.rng.integers(0, 2**31 - 1))
        self.model_seed = seed
        self._random_state = PrivateRandomState(self._torch, seed, self.torch_threads)
        self.stats["model_updates"] = 0
        with self._random_state.everything():
            self.model = self._new_model(seed)
            if not self.online:
                self._driver = FrozenDriver(self.model, self.deterministic)
                return
            self._prepare_online(self.model)
            if isinstance(self.model, _sb3_class("common.on_policy_algorithm.OnPolicyAlgorithm")):
                self._driver = OnPolicyDriver(self.model, self._torch, self._random_state)
            else:
                self._driver = OffPolicyDriver(self.model, self._random_state)

    def _prepare_online(self, model: Any) -> None:
        """What ``model._setup_learn(total_timesteps=T)`` does, minus the env reset."""
        model.set_logger(_sb3_class("common.logger.Logger")(folder=None, output_formats=[]))
        model.num_timesteps = 0
        model._episode_num = 0
        model._total_timesteps = self.horizon
        model._num_timesteps_at_start = 0
        model._current_progress_remaining = 1.0
        model._last_episode_starts = np.ones(1, dtype=bool)
        if model.action_noise is not None:
            model.action_noise.reset()

    def _observation(self, round_index: int) -> np.ndarray:
        """The env's observation before round ``round_index``: t/T as float32."""
        return np.array([round_index / self.horizon], dtype=np.float32)

    def _act(self) -> np.ndarray:
        with self._random_state.torch():
            action = self._driver.act(self._observation(self._round))
        if self.box_map.uses_projection:
            self.stats["projections"] += 1
        return self.box_map(action).view(MappedPoint)

    def _update(self, loss: float, info: dict[str, Any] | None) -> None:
        last_round = self._round + 1 == self.horizon
        with self._random_state.torch():
            trained = self._driver.observe(-loss, self._observation(self._round + 1), last_round)
        self.stats["model_updates"] += int(trained)


class SB3OnlineAgent(SB3Agent):
    """A fresh SB3 model built from the problem, learning online over the episode.

    ``reset(seed)`` builds a new model (weights drawn from the seed) with the
    hyperparameters in ``params``: the class ``DEFAULTS`` tuned for BCO, updated by
    the keyword arguments. Those are keywords of the SB3 algorithm's constructor,
    plus ``hidden_sizes`` (the MLP's layer widths, ``policy_kwargs["net_arch"]``),
    ``vertex_tolerance`` (the simplex map's reach), ``torch_threads`` (torch's thread
    count while the agent runs, default 1, recorded in ``params``) and, for TD3/SAC,
    ``action_noise_std`` (sigma of Gaussian action noise in the box; 0 for none).
    Shared defaults: ``gamma = 0`` (exact: plays do not affect later rounds), small
    networks, device "cpu". ``OPTIONS`` lists the accepted keywords.

    With ``model=`` (``make_agent("sb3-ppo", env, model=trained_model)``) each episode
    starts instead from a copy of that trained model, which must be of the agent's
    algorithm and brings its own hyperparameters, and keeps learning online;
    ``params["pretrained"]`` is then True. For frozen evaluation use
    ``SB3Agent(model, env)``.
    """

    algorithm: ClassVar[str]
    DEFAULTS: ClassVar[dict[str, Any]]
    SCALE_PARAM: ClassVar[str | None] = "learning_rate"
    THEORY_DEFAULTS: ClassVar[bool] = False  # stable-baselines3's defaults, no theorem

    def __init__(
        self,
        problem: Problem,
        vertex_tolerance: float = DEFAULT_VERTEX_TOLERANCE,
        model: Any = None,
        torch_threads: int = 1,
        **hyperparameters: Any,
    ):
        sb3, torch = import_sb3()
        self._algorithm_class = getattr(sb3, self.algorithm)
        self._given_model = model is not None
        if self._given_model:
            self.hyperparameters = self._check_given(model, hyperparameters)
        else:
            self.hyperparameters = self._resolve(problem, hyperparameters)
            threads = _check_threads(torch_threads)
            with PrivateRandomState(torch, 0, threads).everything():
                model = _build_model(self._algorithm_class, problem, self.hyperparameters, 0, None)
        super().__init__(
            model,
            problem,
            online=True,
            vertex_tolerance=vertex_tolerance,
            torch_threads=torch_threads,
        )
        self.params = {**self.params, **self.hyperparameters}

    def _check_given(self, model: Any, hyperparameters: dict[str, Any]) -> dict[str, Any]:
        """A trained model of this agent's algorithm, which brings its own hyperparameters."""
        if not isinstance(model, self._algorithm_class):
            raise TypeError(
                f"{self.name}: model={model!r} is not allowed; expected a trained "
                f"stable_baselines3.{self.algorithm} model (or use SB3Agent(model, env) for "
                "any algorithm)"
            )
        if hyperparameters:
            raise ValueError(
                f"{self.name}: the given model brings its own hyperparameters; got "
                f"{sorted(hyperparameters)} as well (allowed with model=: vertex_tolerance, "
                "torch_threads)"
            )
        return {"pretrained": True}

    def _resolve(self, problem: Problem, overrides: dict[str, Any]) -> dict[str, Any]:
        """DEFAULTS updated by ``overrides``, whose keys must be in ``OPTIONS``."""
        unknown = sorted(set(overrides) - set(self.OPTIONS))
        if unknown:
            raise ValueError(
                f"{self.name}: unknown hyperparameter(s) {unknown}; allowed: {sorted(self.OPTIONS)}"
            )
        resolved = {**self.DEFAULTS, **overrides}
        if "buffer_size" in self.OPTIONS:
            resolved.setdefault("buffer_size", problem.horizon + 1)
        check_options(self.name, resolved)
        return resolved

    def make_model(self, seed: int, env: gym.Env | None = None) -> Any:
        """A new SB3 model with this agent's hyperparameters, seeded with ``seed``.

        ``env`` defaults to a stand-in carrying the problem's spaces; pass
        ``BoxActionAdapter(env)`` to train the very model this agent would build with
        ``model.learn``. Note that SB3's constructor seeds the global generators.
        """
        return _build_model(self._algorithm_class, self.problem, self.hyperparameters, seed, env)

    def _new_model(self, seed: int) -> Any:
        if self._given_model:  # a copy of the trained model, as SB3Agent does online
            return super()._new_model(seed)
        return self.make_model(seed)


def _build_model(
    algorithm_class: type,
    problem: Problem,
    hyperparameters: dict[str, Any],
    seed: int,
    env: gym.Env | None,
) -> Any:
    """An SB3 model for ``problem`` on CPU with an MLP policy of ``hidden_sizes``."""
    kwargs = dict(hyperparameters)
    policy_kwargs = dict(kwargs.pop("policy_kwargs", None) or {})
    policy_kwargs.setdefault("net_arch", list(kwargs.pop("hidden_sizes")))
    noise_std = kwargs.pop("action_noise_std", 0.0)
    if noise_std > 0:
        shape = problem.set.shape
        noise_class = _sb3_class("common.noise.NormalActionNoise")
        kwargs["action_noise"] = noise_class(np.zeros(shape), noise_std * np.ones(shape))
    stand_in = _SpacesOnlyEnv(problem) if env is None else env
    return algorithm_class(
        "MlpPolicy", stand_in, policy_kwargs=policy_kwargs, seed=seed, device="cpu", **kwargs
    )


class PPOAgent(SB3OnlineAgent):
    """PPO learning online (``sb3-ppo``): rollouts of 64 rounds, 4 epochs over one
    minibatch (``batch_size`` defaults to ``n_steps``)."""

    name = "sb3-ppo"
    REFERENCE = ("schulman2017proximal", "raffin2021stable")
    algorithm = "PPO"
    OPTIONS = (*ON_POLICY_OPTIONS, "batch_size", "n_epochs", "clip_range", "target_kl")
    DEFAULTS: ClassVar[dict[str, Any]] = {
        **ON_POLICY_COMMON,
        "learning_rate": 1e-3,
        "n_steps": 64,
        "n_epochs": 4,
    }

    def _resolve(self, problem: Problem, overrides: dict[str, Any]) -> dict[str, Any]:
        resolved = super()._resolve(problem, overrides)
        resolved.setdefault("batch_size", resolved["n_steps"])
        if resolved["batch_size"] < 2 and resolved.get("normalize_advantage", True):
            raise ValueError(
                f"{self.name}: batch_size={resolved['batch_size']} is not allowed; PPO "
                "normalises advantages over a minibatch, so expected an integer >= 2 "
                "(batch_size defaults to n_steps)"
            )
        return resolved


class A2CAgent(SB3OnlineAgent):
    """A2C learning online (``sb3-a2c``): one update every 8 rounds."""

    name = "sb3-a2c"
    REFERENCE = ("mnih2016asynchronous", "raffin2021stable")
    algorithm = "A2C"
    OPTIONS = (*ON_POLICY_OPTIONS, "use_rms_prop", "rms_prop_eps")
    DEFAULTS: ClassVar[dict[str, Any]] = {**ON_POLICY_COMMON, "learning_rate": 7e-4, "n_steps": 8}


class SACAgent(SB3OnlineAgent):
    """SAC learning online (``sb3-sac``): 100 uniform warm-up rounds, one gradient step a round."""

    name = "sb3-sac"
    REFERENCE = ("haarnoja2018soft", "raffin2021stable")
    algorithm = "SAC"
    OPTIONS = (*OFF_POLICY_OPTIONS, "ent_coef", "target_entropy", "use_sde", "use_sde_at_warmup")
    DEFAULTS: ClassVar[dict[str, Any]] = {**OFF_POLICY_COMMON, "learning_rate": 1e-3}


class TD3Agent(SB3OnlineAgent):
    """TD3 learning online (``sb3-td3``): as SAC, with Gaussian action noise of std 0.1."""

    name = "sb3-td3"
    REFERENCE = ("fujimoto2018addressing", "raffin2021stable")
    algorithm = "TD3"
    OPTIONS = (*OFF_POLICY_OPTIONS, "policy_delay", "target_policy_noise", "target_noise_clip")
    DEFAULTS: ClassVar[dict[str, Any]] = {
        **OFF_POLICY_COMMON,
        "learning_rate": 1e-3,
        "action_noise_std": 0.1,
    }


SB3_AGENTS: dict[str, type[SB3OnlineAgent]] = {
    agent.name: agent for agent in (PPOAgent, A2CAgent, SACAgent, TD3Agent)
}
