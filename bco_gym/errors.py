"""Exceptions of bco_gym."""


class InfeasibleActionError(ValueError):
    """An action outside the feasible set, non-finite, or of the wrong shape."""
