# %% [markdown]
# # Exercise 5 — The log n factor
#
# Lesson 5 derived the entropy-invariant factor $\log n_i / \log L$ on the logits. Write the
# factor, then attention that uses it; then derive the self-weight of the simplex model from the
# lesson's last section, where the $\log n$ is exact.

# %%
import math

import torch
import torch.nn.functional as F

from minilm.checks import check_entropy_invariant_attention, check_logn_factor, check_simplex_self_weight

# %% [markdown]
# ## Task 1: the factor of every row
#
# Return a `(T,)` tensor with $\log(n_i) / \log(L)$, where $n_i$ is the number of keys
# query $i$ sees: $i + 1$ when `causal`, $T$ when not.

# %%
def logn_factor(T, L, causal):
    ### BEGIN SOLUTION
    n = torch.arange(1, T + 1, dtype=torch.float) if causal else torch.full((T,), float(T))
    return n.log() / math.log(L)
    ### END SOLUTION


# %%
check_logn_factor(logn_factor)

# %% [markdown]
# ## Task 2: entropy-invariant softmax attention
#
# $$\text{out} = \mathrm{softmax}\!\left(\log_L(n_i)\,\frac{q k^\top}{\sqrt d}\right) v$$
#
# row by row, with the causal mask when `causal`. (Hint: multiplying row $i$ of the logits by a
# factor is the same as multiplying $q_i$ by it.)

# %%
def entropy_invariant_attention(q, k, v, L, causal):
    ### BEGIN SOLUTION
    factor = logn_factor(q.shape[-2], L, causal).view(-1, 1)
    return F.scaled_dot_product_attention(q * factor, k, v, is_causal=causal)
    ### END SOLUTION


# %%
check_entropy_invariant_attention(entropy_invariant_attention)

# %% [markdown]
# ## Task 3: the self-weight of a regular simplex
#
# $n$ unit vectors $y_1, \dots, y_n$ form a regular simplex: $\langle y_i, y_j\rangle = \rho$ for every
# $i \ne j$ (and $\langle y_i, y_i\rangle = 1$). Each token attends to all $n$ tokens, itself included,
# with scores $\beta\,\langle y_i, y_j\rangle$ and a softmax over $j$. On paper first: how many
# different scores does row $i$ hold, and how many tokens get each? Then write the weight
# $A_{ii}$ that token $i$ keeps on itself as a function of $n$, $\rho$ and $\beta$, and code it
# (plain Python floats are fine). The check builds such a simplex explicitly and compares your
# formula with the softmax attention computes on it.

# %%
def simplex_self_weight(n, rho, beta):
    ### BEGIN SOLUTION
    return 1 / (1 + (n - 1) * math.exp(-beta * (1 - rho)))
    ### END SOLUTION


# %%
check_simplex_self_weight(simplex_self_weight)

# %% [markdown]
# **Going further:**
# - For random `q, k` of growing length $T$ (bidirectional), plot the mean row entropy of plain
#   softmax and of your entropy-invariant version. Which grows like $\log T$? Does the other stay
#   flat for random scores, or only for trained ones?
# - Put $\beta = \gamma \log n$ into your `simplex_self_weight` and plot it against $\gamma$ for
#   $n = 64, 1024, 16384$ (with $\rho = 0.5$). Where do the curves cross, and why there? Solve your
#   formula for the $\beta$ that keeps $A_{ii} = 0.9$ at every $n$: how does it grow with $n$?
