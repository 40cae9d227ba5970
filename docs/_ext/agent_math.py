"""The update rules of the agents in LaTeX, for their pages.

The agent's docstring is the authority (it is shown in full on the same page, under
"Class documentation"); this file only typesets its update rule. An agent without an
entry here still gets a page (its docstring carries the rule in plain text), and
``tests/test_docs.py`` checks that every entry names a registered agent.
"""

from __future__ import annotations

UPDATE_RULES: dict[str, str] = {
    "bbcg": r"""
Blocks of :math:`K_b` rounds, :math:`x_0 = x_1 = c`. In block :math:`m`, for each of its
rounds :math:`t`, with a fresh :math:`u_t` uniform on the unit sphere of :math:`V`:

.. math::

   y_t = x_{m-1} + \delta u_t \quad\text{(played)}, \qquad
   g_t = \frac{d}{\delta} f_t(y_t)\, u_t, \qquad
   \hat g_m = \sum_{t \in \text{block } m} g_t .

For :math:`m > 1`, :math:`x_m` is the point returned by the conditional-gradient routine
(one LMO call per iteration, exact line search, stopped once the Frank-Wolfe gap is at
most :math:`\epsilon`) on

.. math::

   F_m(x) = \eta \Big\langle \sum_{i=1}^{m-1} \hat g_i,\ x \Big\rangle + \|x - x_1\|^2
   \quad\text{over}\quad K_\delta = c + (1 - \delta/r)(K - c),

warm-started at :math:`x_{m-1}`. :math:`x_m` is first played in block :math:`m+1`: the
one-block delay.
""",
    "fkm": r"""
With :math:`x_1 = c` and :math:`u_t` uniform on the unit sphere of :math:`V`:

.. math::

   y_t = x_t + \delta u_t \quad\text{(played)}, \qquad
   g_t = \frac{d}{\delta} f_t(y_t)\, u_t, \qquad
   x_{t+1} = \Pi_{K_\delta}\big(x_t - \eta\, g_t\big)
   \quad\text{(one projection)}.
""",
    "bfw": r"""
With :math:`x_1 = c` and :math:`u_t` uniform on the unit sphere of :math:`V`:

.. math::

   y_t &= x_t + \delta u_t \quad\text{(played)}, \qquad
   g_t = \frac{d}{\delta} f_t(y_t)\, u_t, \\
   F_t(x) &= \eta \Big\langle \sum_{s \le t} g_s,\ x \Big\rangle + \|x - x_1\|^2, \qquad
   v_t = \operatorname*{arg\,min}_{v \in K_\delta} \langle \nabla F_t(x_t), v \rangle
   \quad\text{(one LMO call)}, \\
   x_{t+1} &= x_t + \sigma_t (v_t - x_t), \qquad \sigma_t = \min(1, 2 t^{-2/5}).
""",
    "ofw": r"""
With :math:`x_1 = c` and :math:`\nabla_t = \nabla f_t(x_t)` (full information):

.. math::

   F_t(x) &= \eta \Big\langle \sum_{s \le t} \nabla_s,\ x \Big\rangle + \|x - x_1\|^2,
   \qquad v_t = \operatorname*{arg\,min}_{v \in K} \langle \nabla F_t(x_t), v \rangle
   \quad\text{(one LMO call)}, \\
   x_{t+1} &= x_t + \sigma_t (v_t - x_t), \qquad \sigma_t = \min(1, 2 t^{-1/2}).
""",
    "ogd": r"""
With :math:`x_1 = c` and :math:`\nabla_t = \nabla f_t(x_t)` (full information):

.. math::

   x_{t+1} = \Pi_K\big(x_t - \eta \nabla_t\big) \quad\text{(one projection)}.
""",
    "fejer-bgd": r"""
With :math:`x_1 = c`, :math:`u_t` uniform on the unit sphere of :math:`V` and only the
separation oracle of :math:`K` (no projection, no LMO):

.. math::

   y_t = x_t + \delta u_t \quad\text{(played)}, \qquad
   g_t = \frac{d}{\delta} f_t(y_t)\, u_t, \qquad z = x_t - \eta\, g_t,

then, while the oracle of :math:`K_\delta` separates :math:`z` with a normal :math:`a`,
:math:`z \leftarrow z - \delta\, P_V a / \|P_V a\|` (each step brings :math:`z` closer
to every point of :math:`K_{2\delta}` by :math:`\delta^2` in squared distance), and
:math:`x_{t+1} = z`. For every interval :math:`I`,
:math:`\mathbb{E}[\mathcal{R}(I)] \le 2R^2/\eta + \eta |I| (dM/\delta)^2/2 +
(3 + 2R/r)\,\delta G |I|` (our derivation, in the class docstring).
""",
    "loo-bbgd": r"""
Blocks of :math:`K` rounds, :math:`x_0 = x_1 = \tilde y_0 = \tilde y_1 = c`. In block
:math:`m`, with a fresh :math:`u_t` uniform on the unit sphere of :math:`V`:

.. math::

   z_t = x_{m-1} + \delta u_t \quad\text{(played)}, \qquad
   g_t = \frac{d}{\delta} f_t(z_t)\, u_t, \qquad
   y_{mK+1} = \tilde y_{m-1} - \eta \sum_{t \in \text{block } m} g_t .

For :math:`m \ge 2`, :math:`(x_m, \tilde y_m)` is the output of Algorithm 3 (repeated
Frank-Wolfe separating hyperplanes, Algorithm 2, one LOO call per iteration) on
:math:`K_{\delta/r} = c + (1 - \delta/r)(K - c)` from the feasible point :math:`x_{m-2}`
and the initial vector :math:`y_{(m-1)K+1}`, tolerance :math:`\delta^2/3`:
:math:`\tilde y_m` is an infeasible projection with :math:`\|x_m - \tilde y_m\| \le
\delta`, and :math:`x_m` is played in block :math:`m+1` (Garber & Kretzu 2022,
Algorithm 9, Theorem 11).
""",
    "saha-tewari": r"""
With :math:`\mathcal{R}` a :math:`\nu`-self-concordant barrier of :math:`K` (ball, box,
simplex, Birkhoff, flow polytope), :math:`x_1 = \arg\min_K \mathcal{R}`,
:math:`A_t = (\nabla^2 \mathcal{R}(x_t))^{-1/2}` and :math:`u_t` uniform on the unit
sphere of :math:`V` (Algorithm 1 of Saha & Tewari 2011; no projection, no LMO):

.. math::

   y_t = x_t + \delta A_t u_t \quad\text{(played, in the Dikin ellipsoid)}, \qquad
   g_t = \frac{d}{\delta} f_t(y_t)\, A_t^{-1} u_t,

   x_{t+1} = \arg\min_{x \in K}\ \eta \sum_{s \le t} \langle g_s, x \rangle
   + \mathcal{R}(x) \quad\text{(damped Newton from } x_t\text{)}.
""",
    "so-bgd": r"""
With :math:`\tilde y_1 = c`, :math:`u_t` uniform on the unit sphere of :math:`V`, a
squeeze :math:`\delta \in (0, 1]` and a smoothing radius :math:`\delta' \le r/2`:

.. math::

   z_t = \tilde y_t + \delta' u_t \quad\text{(played)}, \qquad
   g_t = \frac{d}{\delta'} f_t(z_t)\, u_t, \qquad
   y_{t+1} = \tilde y_t - \eta\, g_t ,

and :math:`\tilde y_{t+1}` is the output of Algorithm 6: project :math:`y_{t+1}` onto
:math:`R B(c)`, then while the separation oracle of :math:`K` separates
:math:`c + (y - c)/(1 - \delta'/r)` with a normal :math:`g`, step
:math:`y \leftarrow y - \delta (r - \delta') g / \|g\|`. Then :math:`\tilde y_{t+1}
\in K_{\delta'/r}` is an infeasible projection of :math:`y_{t+1}` onto
:math:`K_{\delta,\delta'/r}` (Garber & Kretzu 2022, Algorithm 10, Theorem 15).
""",
    "bandit-newton": r"""
With :math:`\mathcal{R}` a :math:`\nu`-self-concordant barrier of :math:`K`,
:math:`x_1 = \arg\min_K \mathcal{R}`, :math:`F_1 = K_\xi = \xi x_1 + (1 - \xi) K`,
:math:`\xi = T^{-4}`, and :math:`v_{1,t}, v_{2,t}` uniform on the unit sphere of
:math:`V` (Algorithm 1 of Suggala, Ravikumar & Netrapalli 2021):

.. math::

   M_t = \nabla^2 \mathcal{R}(x_t) + \sum_{s<t} \eta_s \hat H_s, \qquad
   y_t = x_t + \lambda M_t^{-1/2} (v_{1,t} + v_{2,t}) \quad\text{(played if in } K\text{)},

   \hat g_t = \frac{d}{\lambda} f_t(y_t) M_t^{1/2} v_{1,t}, \qquad
   \hat H_t = \frac{d^2}{2\lambda^2} f_t(y_t) M_t^{1/2}
   (v_{1,t} v_{2,t}^\top + v_{2,t} v_{1,t}^\top) M_t^{1/2},

   x_{t+1} = \arg\min_{x \in F_t}\ \eta_t \langle \hat g_t, x \rangle
   + \Phi_{\mathcal{R}_{t+1}}(x, x_t), \qquad
   \mathcal{R}_{t+1}(x) = \mathcal{R}(x) + \sum_{s \le t} \frac{\eta_s}{2}
   (x - x_s)^\top \hat H_s (x - x_s),

a restart when :math:`\sum_s \hat f_s(x_s) - \min_{F_t} \sum_s \hat f_s \le -\beta/\eta_1`
(:math:`\hat f_s` the quadratic model of :math:`f_s` at :math:`x_s`), and
:math:`F_{t+1} = F_t \cap \{y : \|y - x_{t+1}\|_{M_{t+1}} \le \alpha\}`,
:math:`\eta_{t+1} = (1 + \gamma)\eta_t` when that ellipsoid holds at most half of
:math:`F_t`'s volume.
""",
    "pbgd": r"""
Experts :math:`i = 1, \dots, N` run projected gradient descent with step sizes
:math:`\eta_i = \eta_{\min} 2^{i-1}` on :math:`K_\delta = c + (1 - \delta/r)(K - c)`,
all from :math:`x_{1,i} = c`; Hedge with prior :math:`w_i = \frac{N+1}{N i (i+1)}` and a
fixed rate :math:`\varepsilon` combines them. With :math:`u_t` uniform on the unit
sphere of :math:`V`:

.. math::

   x_t = \sum_i p_{t,i}\, x_{t,i}, \qquad
   y_t = x_t + \delta u_t \quad\text{(played)}, \qquad
   g_t = \frac{d}{\delta} f_t(y_t)\, u_t,

   p_{t+1,i} \propto w_i \exp\Big(-\varepsilon \sum_{s \le t}
   \langle g_s, x_{s,i} - x_s \rangle\Big), \qquad
   x_{t+1,i} = \Pi_{K_\delta}(x_{t,i} - \eta_i g_t)

(Zhao, Wang, Zhang & Zhou 2021; dynamic regret against every comparator path, whose
length the agent does not know).
""",
    "pbgd2": r"""
As ``pbgd``, playing the pair :math:`x_t \pm \delta u_t` and estimating

.. math::

   g_t = \frac{d}{2\delta} \big(f_t(x_t + \delta u_t) - f_t(x_t - \delta u_t)\big)\, u_t,
   \qquad \|g_t\| \le d G .
""",
    "random": r"""
.. math::

   x_t \sim \texttt{set.sample}(\text{rng}) \quad\text{independently of all feedback}.
""",
}
