# %% [markdown]
# # Exercise 12 — Reading attention, and the per-position fit
#
# **Time.** About 10 minutes; going further: 5 more.
#
# [Lesson 12](../lessons/12_distraction.ipynb) measured how much of the question's attention lands
# on the needle, and fitted the
# best multiplier per position as the paper's code does. Write the two measurements.

# %%
import math

import torch

from course.grader import grade_needle_mass, grade_per_position_fit

# %% [markdown]
# ## Task 1: attention mass on the needle
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
grade_needle_mass(needle_mass)

# %% [markdown]
# ## Task 2: the per-position fit
#
# `table[g, t]` is the loss at position `t` (0-based) with every multiplier set to `grid[g]`.
# Past the training length `L`, average the positions `L, L+1, ...` in buckets of `bucket`
# (a shorter last bucket is kept), take each bucket's best $\lambda$ (lowest loss) and its mean
# position $i$ counted from 1 (position `t` is $i = t + 1$), and return the least-squares slope $c$
# of $\lambda = 1 + c \ln(i / L)$ with no intercept: $c = \sum x(\lambda - 1) / \sum x^2$, $x = \ln(i/L)$
# (the library's `fit_per_position` returns it under the key `"c"`).

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
grade_per_position_fit(per_position_fit)

# %% [markdown]
# ## Going further
# - `needle_mass` counts the `@` as part of the needle. Does the mass on the digits alone tell
#   a different story? (Try it on lesson 11's models: `minilm.experiments.retrieval_models(minilm.profile(),
#   minilm.default_corpus())` returns them from the cache once lesson 11 has run.)
#
#   <details><summary>Answer</summary>
#
#   We did not measure it in the course, so here is what each outcome would mean. In a causal model
#   the `@` cannot see the digits after it, so weight on the `@` alone carries no key: it says the
#   needle was *found*, not that the key was *read*. Measure the mass on positions `needle + 1` to
#   `needle + 3` beside the full mass. If the digit mass falls with length while the full mass
#   holds, the head still finds the marker but reads less of the key, a failure the full mass hides;
#   if the two move together, counting the `@` changed nothing and lesson 12's reading stands.
#
#   </details>
