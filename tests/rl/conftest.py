"""Shared setup of the RL-baseline tests (the ``rl`` extra is part of the test
environment): one torch thread, which makes runs bit-reproducible on CPU and is the
fastest setting for these tiny networks."""

import torch

torch.set_num_threads(1)
