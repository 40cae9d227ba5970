"""What an agent may see of a round: the feedback its declared model entitles it to.

An agent declares its feedback model (``Agent.feedback``); the engine's loops hand its
``update`` only what that model promises, whatever the env's ``info`` holds:

* ``"bandit"``: the loss f_t(x_t) and the round count ``t``;
* ``"full"``: also ``info["gradient"]``, a (sub)gradient of f_t at x_t;
* ``"two-point"``: also ``info["losses"]``, f_t at both points of the pair (``"loss"`` is
  their mean).

Nothing else reaches an agent from the library's loops (:func:`~bco_gym.engine.runner.run`
in every loop, :func:`~bco_gym.engine.many.run_many`, sweeps, ``bco-gym bench``, the
isolated process of :mod:`~bco_gym.engine.isolation`): not the regret, the comparator's
point or loss that the :class:`~bco_gym.wrappers.RegretRecorder` adds to the last round's
``info``, and not a full-feedback env's gradient for an agent declaring bandit feedback
(it is scored as a bandit agent, so it must play as one). A loop a user writes around
the env (DESIGN.md's public contract, ``agent.update(info["loss"], info)``) hands the
agent whatever it chooses.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The keys of a round's ``info`` each feedback model entitles an agent to.
ENTITLED: dict[str, tuple[str, ...]] = {
    "bandit": ("loss", "t"),
    "full": ("loss", "t", "gradient"),
    "two-point": ("loss", "t", "losses"),
}


def feedback_of(agent: Any) -> str:
    """The feedback model ``agent`` declares; an unknown value counts as ``"bandit"`` (the
    least information)."""
    declared = getattr(agent, "feedback", "bandit")
    return declared if isinstance(declared, str) and declared in ENTITLED else "bandit"


def entitled_info(info: Mapping[str, Any], feedback: str) -> dict[str, Any]:
    """The part of a round's ``info`` an agent declaring ``feedback`` may see (a new
    dict; the values themselves are not copied)."""
    return {key: info[key] for key in ENTITLED.get(feedback, ENTITLED["bandit"]) if key in info}


def sees_gradients(agent: Any) -> bool:
    """Whether ``agent`` is entitled to the round's gradient (full information)."""
    return feedback_of(agent) == "full"
