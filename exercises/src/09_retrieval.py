# %% [markdown]
# # Exercise 9 — Scoring retrieval and reading attention
#
# Lesson 9 scored retrieval by exact match from one forward pass, measured how much of the
# question's attention lands on the needle, and fitted the best temperature per position.
# Write the three measurements.

# %%
import math

import torch

from minilm.checks import check_exact_match, check_needle_mass, check_per_position_fit

# %% [markdown]
# ## Task 1: exact match from one forward pass
#
# `logits` has shape `(B, T, V)`: the model's output on `B` retrieval windows, and `y` `(B, T)`
# the targets, whose last 3 entries are the key's digits (the rest are -100 and do not count).
# Return a `(B,)` boolean tensor: `True` where the argmax of the logits equals the target at
# **each** of the last 3 positions. (With the true digits fed back, that is exactly when
# greedy decoding writes the whole key.)

# %%
def exact_match(logits, y):
    ### BEGIN SOLUTION
    return (logits[:, -3:].argmax(-1) == y[:, -3:]).all(-1)
    ### END SOLUTION


# %%
check_exact_match(exact_match)

# %% [markdown]
# ## Task 2: attention mass on the needle
#
# `rows` holds attention rows, shape `(B, ..., T)` (each row sums to 1 over its last
# dimension), and `needle` `(B,)` the position of the `@` in each sequence. The needle is the
# `@` and the key's 3 digits after it: positions `needle[b]` to `needle[b] + 3`. Return the
# weight on those positions, shape `(B, ...)`.

# %%
def needle_mass(rows, needle):
    ### BEGIN SOLUTION
    span = torch.arange(rows.shape[-1])
    start = needle.view(-1, *[1] * (rows.ndim - 1))
    return (rows * ((span >= start) & (span <= start + 3))).sum(-1)
    ### END SOLUTION


# %%
check_needle_mass(needle_mass)

# %% [markdown]
# ## Task 3: the per-position fit
#
# `table[g, t]` is the loss at position `t` (0-based) with every temperature set to `grid[g]`.
# Past the training length `L`, average the positions `L, L+1, ...` in buckets of `bucket`
# (a shorter last bucket is kept), take each bucket's best $\lambda$ (lowest loss) and its mean
# position $i$ counted from 1 (position `t` is $i = t + 1$), and return the least-squares $a$
# of $\lambda = 1 + a \ln(i / L)$ with no intercept: $a = \sum x(\lambda - 1) / \sum x^2$, $x = \ln(i/L)$.

# %%
def per_position_fit(table, grid, L, bucket):
    ### BEGIN SOLUTION
    T = table.shape[1]
    xs, lams = [], []
    for start in range(L, T, bucket):
        losses = table[:, start : start + bucket].mean(1)
        position = (torch.arange(start, min(start + bucket, T)) + 1).float().mean().item()
        xs.append(math.log(position / L))
        lams.append(grid[int(losses.argmin())])
    return sum(x * (lam - 1) for x, lam in zip(xs, lams)) / sum(x * x for x in xs)
    ### END SOLUTION


# %%
check_per_position_fit(per_position_fit)

# %% [markdown]
# ## Going further
# - Change `exact_match` to score each digit separately. In the lesson's models, which digit
#   is lost first past the training length?
# - `needle_mass` counts the `@` as part of the needle. Does the mass on the digits alone tell
#   a different story?
