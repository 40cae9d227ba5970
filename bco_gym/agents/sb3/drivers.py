"""SB3's own training loop, one BCO round at a time, and the random state it draws from.

:class:`PrivateRandomState` keeps an agent's copies of the process-global generators
stable-baselines3 draws from (and its torch thread count), swapped in around SB3
calls. The drivers turn ``act``/``update`` into SB3's code paths:
:class:`FrozenDriver` evaluates a trained policy (``model.predict``),
:class:`OnPolicyDriver` replays ``OnPolicyAlgorithm.collect_rollouts`` + ``learn``
(PPO, A2C) and :class:`OffPolicyDriver` ``OffPolicyAlgorithm.collect_rollouts`` +
``learn`` (SAC, TD3). Used by :mod:`bco_gym.agents.sb3.agent`, which documents the modes.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import numpy as np


class PrivateRandomState:
    """This agent's copies of the global generators SB3 draws from.

    ``with state.torch():`` swaps the agent's torch CPU generator state (policy
    samples, weight initialisation) and thread count in, and on leaving saves the
    generator state and restores the caller's state and thread count;
    ``with state.legacy():`` does the same for numpy's legacy global generator and
    Python's ``random`` (minibatch shuffles, replay sampling, action
    noise, SB3's own seeding). The two are separate because the numpy swap costs
    ~100 microseconds, while torch's is ~1: the numpy one wraps only the calls that
    draw from it.
    """

    def __init__(self, torch: ModuleType, seed: int, threads: int = 1):
        self._torch_module = torch
        self._threads = threads
        self._torch_state = torch.Generator().manual_seed(seed).get_state()
        self._legacy_state = (
            np.random.RandomState(seed).get_state(),
            random.Random(seed).getstate(),
        )

    @contextlib.contextmanager
    def torch(self) -> Iterator[None]:
        torch = self._torch_module
        outer = torch.get_rng_state()
        outer_threads = torch.get_num_threads()
        torch.set_rng_state(self._torch_state)
        if outer_threads != self._threads:
            torch.set_num_threads(self._threads)
        try:
            yield
        finally:
            self._torch_state = torch.get_rng_state()
            torch.set_rng_state(outer)
            if outer_threads != self._threads:
                torch.set_num_threads(outer_threads)

    @contextlib.contextmanager
    def legacy(self) -> Iterator[None]:
        # the legacy global numpy generator is exactly what SB3 draws from
        outer = (np.random.get_state(), random.getstate())  # noqa: NPY002
        np.random.set_state(self._legacy_state[0])  # noqa: NPY002
        random.setstate(self._legacy_state[1])
        try:
            yield
        finally:
            self._legacy_state = (np.random.get_state(), random.getstate())  # noqa: NPY002
            np.random.set_state(outer[0])  # noqa: NPY002
            random.setstate(outer[1])

    @contextlib.contextmanager
    def everything(self) -> Iterator[None]:
        with self.torch(), self.legacy():
            yield


class FrozenDriver:
    """Evaluate the policy of a trained model (``model.predict``)."""

    def __init__(self, model: Any, deterministic: bool):
        self.model = model
        self.deterministic = deterministic

    def act(self, observation: np.ndarray) -> np.ndarray:
        action, _ = self.model.predict(observation, deterministic=self.deterministic)
        return action

    def observe(self, reward: float, next_observation: np.ndarray, last_round: bool) -> bool:
        """A frozen policy learns nothing (returns whether the model was trained)."""
        return False


class OnPolicyDriver:
    """``OnPolicyAlgorithm.collect_rollouts`` + ``learn`` (PPO, A2C), one round at a time."""

    def __init__(self, model: Any, torch: ModuleType, random_state: PrivateRandomState):
        self.model = model
        self.torch = torch
        self.random_state = random_state
        self.steps_in_rollout = 0
        self._pending: tuple[Any, ...] = ()
        model.rollout_buffer.reset()

    def act(self, observation: np.ndarray) -> np.ndarray:
        model, policy = self.model, self.model.policy
        if self.steps_in_rollout == 0:
            policy.set_training_mode(False)
        sde_due = model.sde_sample_freq > 0 and self.steps_in_rollout % model.sde_sample_freq == 0
        if model.use_sde and (self.steps_in_rollout == 0 or sde_due):
            policy.reset_noise(1)
        observations = observation[np.newaxis]
        with self.torch.no_grad():
            tensor = self.torch.as_tensor(observations, device=model.device)
            actions, values, log_probs = policy(tensor)
        actions = actions.cpu().numpy()
        self._pending = (observations, actions, values, log_probs)
        if policy.squash_output:
            return policy.unscale_action(actions)[0]
        return np.clip(actions, model.action_space.low, model.action_space.high)[0]

    def observe(self, reward: float, next_observation: np.ndarray, last_round: bool) -> bool:
        model = self.model
        observations, actions, values, log_probs = self._pending
        model.num_timesteps += 1
        rewards = np.array([reward], dtype=np.float32)
        model.rollout_buffer.add(
            observations, actions, rewards, model._last_episode_starts, values, log_probs
        )
        model._last_episode_starts = np.zeros(1, dtype=bool)
        self.steps_in_rollout += 1
        if self.steps_in_rollout < model.n_steps or last_round:
            return False
        with self.torch.no_grad():
            tensor = self.torch.as_tensor(next_observation[np.newaxis], device=model.device)
            last_values = model.policy.predict_values(tensor)
        model.rollout_buffer.compute_returns_and_advantage(
            last_values=last_values, dones=np.zeros(1, dtype=bool)
        )
        model._update_current_progress_remaining(model.num_timesteps, model._total_timesteps)
        with self.random_state.legacy():  # minibatch shuffles
            model.train()
        model.rollout_buffer.reset()
        self.steps_in_rollout = 0
        return True


class OffPolicyDriver:
    """``OffPolicyAlgorithm.collect_rollouts`` + ``learn`` (SAC, TD3), one round at a time."""

    def __init__(self, model: Any, random_state: PrivateRandomState):
        self.model = model
        self.random_state = random_state
        self.steps_in_rollout = 0
        self._pending: tuple[Any, ...] = ()

    def act(self, observation: np.ndarray) -> np.ndarray:
        model = self.model
        if self.steps_in_rollout == 0:
            model.policy.set_training_mode(False)
        sde_due = model.sde_sample_freq > 0 and self.steps_in_rollout % model.sde_sample_freq == 0
        if model.use_sde and (self.steps_in_rollout == 0 or sde_due):
            model.actor.reset_noise(1)
        model._last_obs = observation[np.newaxis]
        noise = model.action_noise
        with self.random_state.legacy() if noise is not None else contextlib.nullcontext():
            actions, buffer_actions = model._sample_action(model.learning_starts, noise, 1)
        self._pending = (model._last_obs, buffer_actions)
        return actions[0]

    def observe(self, reward: float, next_observation: np.ndarray, last_round: bool) -> bool:
        model = self.model
        observations, buffer_actions = self._pending
        model.num_timesteps += 1
        self.steps_in_rollout += 1
        # the episode ends by truncation at T: SB3 marks it a timeout, not a terminal state
        infos = [{"TimeLimit.truncated": True}] if last_round else [{}]
        model.replay_buffer.add(
            observations,
            next_observation[np.newaxis],
            buffer_actions,
            np.array([reward], dtype=np.float32),
            np.array([last_round]),
            infos,
        )
        model._update_current_progress_remaining(model.num_timesteps, model._total_timesteps)
        model._on_step()
        if self.steps_in_rollout < model.train_freq.frequency:
            return False
        self.steps_in_rollout = 0
        frequency = model.train_freq.frequency
        gradient_steps = model.gradient_steps if model.gradient_steps >= 0 else frequency
        if last_round or model.num_timesteps <= model.learning_starts or gradient_steps == 0:
            return False
        with self.random_state.legacy():  # replay sampling
            model.train(batch_size=model.batch_size, gradient_steps=gradient_steps)
        return True
