"""The comparators' running sums of theta_t at the checkpoints, compiled: one call per span.

:class:`~bco_gym.engine.metrics.ThetaSums` cuts each span of a chunk at the checkpoints
and adds each cut piece's ``theta[a:b].sum(0)`` to the running total, as
``LossSequence.prefix_sums`` does. With kernels on, :func:`checkpoint_sums` does the
cutting's arithmetic for a whole span in one call: each piece summed as
:func:`~bco_gym.agents.kernels.sums.column_sums` sums it (NumPy's order), the running
total the first piece itself, then the total plus each piece (NumPy's elementwise add),
and a copy of the total written out at each checkpoint. The same floats in the same
order; about 35 pieces per run fall in its first chunk (the checkpoints are log-spaced),
each of which cost a few NumPy calls.
"""

from __future__ import annotations

from bco_gym.agents.kernels.oracles import jit
from bco_gym.agents.kernels.sums import column_sums


@jit
def checkpoint_sums(
    values, first, counts, marks, total, started, out, piece
):  # pragma: no cover - compiled
    """Pieces of ``counts[p]`` consecutive rows of ``values`` from row ``first``: the
    running ``total`` (n,) becomes the first piece's sum unless ``started``, then adds each
    piece's; after each piece with ``marks[p]`` the total is copied to the next row of
    ``out``. ``piece`` (n,) is scratch. Returns the rows written."""
    n = values.shape[1]
    row = first
    written = 0
    for p in range(counts.size):
        column_sums(values, row, counts[p], piece)
        row += counts[p]
        if started:
            for i in range(n):
                total[i] = total[i] + piece[i]
        else:
            for i in range(n):
                total[i] = piece[i]
            started = True
        if marks[p]:
            for i in range(n):
                out[written, i] = total[i]
            written += 1
    return written
