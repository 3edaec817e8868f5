# %% [markdown]
# # Exercise 1 — Pieces of the GAU
#
# **Time.** About 15 minutes; going further: 5 more.
#
# [Lesson 1](../lessons/01_gau.ipynb) built the Gated Attention Unit. Here you write three of its
# pieces yourself;
# each task ends with a check that compares your function with `minilm`'s on random
# inputs (several shapes, causal and not, edge cases) and tells you the first input where
# they differ.
#
# Write your code where it says `# YOUR CODE HERE` (delete the `raise`), then run the check.

# %%
import math

import torch
import torch.nn.functional as F

from course.grader import grade_gau_parameter_count, grade_relu2_attention, grade_rope

# %% [markdown]
# ## Task 1: relu² attention with fixed, length and row n
#
# $$A_{ij} = \frac{1}{n}\,\mathrm{relu}\!\left(\frac{q_i\cdot k_j}{\sqrt d}\right)^2,\qquad \text{out} = A\,v$$
#
# - `q`, `k`: `(B, H, T, d)`; `v`: `(B, H, T, e)`; return `(B, H, T, e)`.
# - `n` is a positive int (fixed), `"length"` ($n = T$) or `"row"` ($n = n_i$, the number of
#   keys query $i$ sees: $i + 1$ when causal, $T$ when not).
# - When `causal`, query $i$ must give weight exactly 0 to keys $j > i$.

# %%
def relu2_attention(q, k, v, n, causal):
    ### BEGIN SOLUTION
    T, d = q.shape[-2], q.shape[-1]
    scores = q @ k.transpose(-1, -2) / math.sqrt(d)
    visible = torch.ones(T, T).tril() if causal else torch.ones(T, T)
    if n == "length":
        n = T
    elif n == "row":
        n = visible.sum(dim=-1, keepdim=True)
    weights = F.relu(scores) ** 2 * visible / n
    return weights @ v
    ### END SOLUTION


# %%
grade_relu2_attention(relu2_attention)

# %% [markdown]
# ## Task 2: RoPE
#
# Rotate each pair of dimensions $(x_{2i}, x_{2i+1})$ at position $t$ by the angle
# $t\,\theta_i$, with $\theta_i = 10000^{-2i/\mathrm{dim}}$:
#
# $$\begin{pmatrix} x'_{2i} \\ x'_{2i+1} \end{pmatrix} = \begin{pmatrix} \cos t\theta_i & -\sin t\theta_i \\ \sin t\theta_i & \cos t\theta_i \end{pmatrix} \begin{pmatrix} x_{2i} \\ x_{2i+1} \end{pmatrix}$$
#
# `x` has shape `(..., T, dim)`; positions are $t = 0 \dots T-1$.

# %%
def rope(x):
    ### BEGIN SOLUTION
    T, dim = x.shape[-2:]
    theta = 10000.0 ** (-torch.arange(0, dim, 2) / dim)
    angle = torch.arange(T)[:, None] * theta
    x1, x2 = x[..., 0::2], x[..., 1::2]
    rotated = torch.stack((x1 * angle.cos() - x2 * angle.sin(),
                           x1 * angle.sin() + x2 * angle.cos()), dim=-1)
    return rotated.flatten(-2)
    ### END SOLUTION


# %%
grade_rope(rope)

# %% [markdown]
# ## Task 3: how many parameters has one GAU?
#
# Count every parameter of one GAU block as `minilm` builds it: the LayerNorm (a weight and
# a bias of width $d$), $W_u, W_v$ (one `Linear(d, 2e)` with bias), $W_z$ (`Linear(d, s)` with
# bias), $W_o$ (`Linear(e, d)` with bias), and $\gamma, \beta$, with $e = \text{expansion} \cdot d$.
# $\gamma$ and $\beta$ are each a `(2, s)` tensor (one row for $q$, one for $k$), so together
# they hold $4s$ numbers.

# %%
def gau_parameter_count(d, s, expansion):
    ### BEGIN SOLUTION
    e = expansion * d
    layer_norm = 2 * d
    uv = d * 2 * e + 2 * e
    z = d * s + s
    out = e * d + d
    gamma_beta = 2 * 2 * s
    return layer_norm + uv + z + out + gamma_beta
    ### END SOLUTION


# %%
grade_gau_parameter_count(gau_parameter_count)

# %% [markdown]
# **Going further:** with your count, how many GAU layers have as many parameters as one
# Transformer layer ($12d^2$ weights) at $d = 768$, $s = 128$? Lesson 1 says "about two".
#
# <details><summary>Answer</summary>
#
# Counting everything, one GAU at $d = 768$, $s = 128$, $e = 2d = 1536$ has: LayerNorm $2d$ = 1,536;
# $W_u, W_v$ with bias $2de + 2e$ = 2,362,368; $W_z$ with bias $ds + s$ = 98,432; $W_o$ with bias
# $ed + d$ = 1,180,416; $\gamma, \beta$: $4s$ = 512; in all 3,643,264 parameters. One Transformer
# layer's $12d^2 = 7{,}077{,}888$ weights are $7{,}077{,}888 / 3{,}643{,}264 \approx 1.94$ GAUs:
# "about two" holds, with two GAUs 3% larger (a bit less once the Transformer's own biases and
# LayerNorms are counted).
#
# </details>
