# %% [markdown]
# # Exercise 5 — The log n factor
#
# **Time.** About 15 minutes; going further: 5 more.
#
# [Lesson 5](../lessons/05_entropy_invariance.ipynb) derived the entropy-invariant factor $\log n_i
# / \log L$ on the logits. Write the
# factor, then attention that uses it; then derive the self-weight of the simplex model from the
# lesson's last section, where the $\log n$ is exact.

# %%
import math

import torch
import torch.nn.functional as F

from course.grader import (grade_entropy_invariant_attention, grade_logn_factor,
                           grade_simplex_self_weight)

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
grade_logn_factor(logn_factor)

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
grade_entropy_invariant_attention(entropy_invariant_attention)

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
grade_simplex_self_weight(simplex_self_weight)

# %% [markdown]
# **Going further:**
# - For random `q, k` of growing length $T$ (bidirectional), plot the mean row entropy of plain
#   softmax and of your entropy-invariant version. Which grows like $\log T$? Does the other stay
#   flat for random scores, or only for trained ones?
#
#   <details><summary>Answer</summary>
#
#   Plain softmax grows like $\log T$ (minus a constant set by the spread of the scores): random
#   rows are close to uniform. The entropy-invariant one grows too, more slowly, but does not stay
#   flat: for Gaussian scores of variance $\sigma^2$ the aside in lesson 5 gives
#   $H \approx \log T - \lambda^2\sigma^2/2$ with $\lambda = \log_L T$, which still rises over
#   moderate $T$. Flat entropy needs rows dominated by a few large scores, which is what training
#   produces: lesson 5's trained model rose by only 0.70-0.75 nats from $L$ to $16L$ under the
#   factor.
#
#   </details>
#
# - Put $\beta = \kappa \ln n$ into your `simplex_self_weight` and plot it against $\kappa$ for
#   $n = 64, 1024, 16384$ (with $\rho = 0.5$). Where do the curves cross, and why there? Solve your
#   formula for the $\beta$ that keeps $A_{ii} = 0.9$ at every $n$: how does it grow with $n$?
#
#   <details><summary>Answer</summary>
#
#   The curves cross at $\kappa = 1/(1-\rho) = 2$, where
#   $A_{ii} = 1/(1 + (n-1)/n) = n/(2n-1) \approx 1/2$ for every $n$ (0.504 at $n = 64$, 0.500 from
#   1024 on in lesson 5). There $(n-1)\,n^{-\kappa(1-\rho)} \approx n^{1-\kappa(1-\rho)} = n^0$ does
#   not depend on $n$. Solving $A_{ii} = 0.9$:
#   $\beta(n) = (\log(n-1) + \log 9)/(1-\rho) = 2(\log(n-1) + \log 9)$, linear in $\log n$: it grows
#   by $2\log 2 \approx 1.39$ per doubling, from 12.68 at $n = 64$ to 23.80 at 16384, a ratio of
#   1.877 (lesson 5's table: 1.8771).
#
#   </details>
