"""Exceptions of bco_gym."""


class InfeasibleActionError(ValueError):
    """An action outside the feasible set, non-finite, or of the wrong shape."""


class InvalidLossError(ValueError):
    """A loss sequence returned a value that is not a finite number (NaN, inf, empty).

    The message names the loss sequence and the round (and, for a batch, the row).
    """


class LossCheckError(ValueError):
    """User losses failed a check of :func:`~bco_gym.losses.from_function`: convexity (the
    first-order condition) or the gradient (finite differences) on sampled rounds and
    points. The message names the round, the points and the amounts."""


class LossFunctionError(RuntimeError):
    """A user's ``loss`` or ``gradient`` callable (:func:`~bco_gym.losses.from_function`)
    raised. The message names the callable, the round and the point (and, for batched
    callables, the form they are called in); the user's exception is the ``__cause__``."""


class UnsupportedSetError(ValueError):
    """An agent was given a feasible set it cannot work on (e.g. one without the
    self-concordant barrier a barrier method needs). The message names the set and lists
    the supported ones."""


class AgentError(RuntimeError):
    """An agent's own code raised while it was built or played (its ``__init__``,
    ``act``, ``update``, or a play outside K). The message names the agent, and where a
    run was under way the seed and the round; the original exception is its
    ``__cause__``."""
