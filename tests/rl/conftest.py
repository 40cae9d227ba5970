"""Shared setup of the RL-baseline tests (the ``rl`` extra is part of the test
environment): one torch thread, which makes runs bit-reproducible on CPU and is the
fastest setting for these tiny networks."""

import pytest
import torch

torch.set_num_threads(1)


@pytest.fixture(scope="session", autouse=True)
def sb3_logs_under_pytests_temporary_folder(tmp_path_factory):
    """SB3's ``model.learn()`` on a model without a logger of its own makes a folder
    ``SB3-<date-time>`` in the system's temporary directory, one per call, never removed
    (the tests that compare against ``learn`` call it directly; bco_gym's agents give their
    models a logger that writes nothing). ``SB3_LOGDIR`` sends them under pytest's
    temporary folder, which pytest cleans."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SB3_LOGDIR", str(tmp_path_factory.mktemp("sb3-logs")))
        yield
