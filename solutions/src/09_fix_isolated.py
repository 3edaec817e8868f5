# %% [markdown]
# # Exercise 9 — The per-position rule, and a result over seeds
#
# **Time.** About 10 minutes; going further: 5 more.
#
# [Lesson 9](../lessons/09_fix_isolated.ipynb) applied the NoPE paper's temperature (our multiplier λ) per position,
# and stated every claim as the
# mean over five seeds with an interval. Write both.

# %%
import math

import torch

from course.grader import grade_position_rule, grade_seed_interval

# %% [markdown]
# ## Task 1: the per-position multiplier
#
# Return a `(T,)` tensor: row $i$ of a causal model sees $n_i = i + 1$ keys, and its logits are
# multiplied by $\lambda_i = 1 + c \ln(n_i / L)$ where $n_i > L$, and by 1 where $n_i \le L$. In
# a bidirectional model (`causal=False`) every row sees $n_i = T$ keys.

# %%
def position_rule(T, c, L, causal):
    ### BEGIN SOLUTION
    n = torch.arange(1, T + 1, dtype=torch.float) if causal else torch.full((T,), float(T))
    return torch.where(n > L, 1 + c * torch.log(n / L), torch.ones(T))
    ### END SOLUTION


# %%
grade_position_rule(position_rule)

# %% [markdown]
# ## Task 2: the mean over seeds and its interval
#
# `values` holds one number per seed. Return `(mean, low, high)`: the mean and
# $\text{mean} \mp t \cdot \mathrm{sd} / \sqrt n$, with sd the sample standard deviation (divide by
# $n - 1$) and $t$ = `t_quantile((1 + level) / 2, n - 1)`, the quantile of Student's $t$ with
# $n - 1$ degrees of freedom (passed in: `t_quantile(0.95, 4)` is 2.132).

# %%
def seed_interval(values, level, t_quantile):
    ### BEGIN SOLUTION
    x = torch.as_tensor(values, dtype=torch.float64)
    n = len(x)
    half = t_quantile((1 + level) / 2, n - 1) * x.std().item() / math.sqrt(n)
    return x.mean().item(), x.mean().item() - half, x.mean().item() + half
    ### END SOLUTION


# %%
grade_seed_interval(seed_interval)

# %% [markdown]
# ## Going further
# - With five seeds, $t_{0.95, 4} = 2.13$; with two, $t_{0.95, 1} = 6.31$. How many seeds would
#   lesson 9 need for its intervals to be half as wide, if the seeds' spread stayed the same?
#
#   <details><summary>Answer</summary>
#
#   The half-width is proportional to $t_{0.95,n-1}/\sqrt n$: 0.953 at five seeds ($2.132/2.236$).
#   Half of that is 0.477. At $n = 13$, $1.782/3.606 = 0.494$, still above; at $n = 14$,
#   $1.771/3.742 = 0.473$. So 14 seeds: almost three times as many, because the $t$ factor has
#   little left to shrink at five and $\sqrt n$ must do the rest.
#
#   </details>
#
# - Lesson 9's intervals are over seeds, not prompts. Which of the two is the larger source of
#   spread in its tables? (Hint: the binomial standard error of 100 prompts at 0.7 is 0.046.)
#
#   <details><summary>Answer</summary>
#
#   The seeds, by far. At $8L$ with the best uniform $\lambda$ the five seeds give 0.61, 0.83, 0.88,
#   0.79 and 0.39 in lesson 9's stored run: a standard deviation of about 0.20, where 100 prompts
#   at 0.70 have a binomial standard error of $\sqrt{0.70 \cdot 0.30/100} \approx 0.046$. At
#   $\lambda = 1$ (0.10, 0.05, 0.24, 0.17, 0.08) it is about 0.08 against 0.033. The seed-to-seed spread even contains the prompt
#   noise (each seed's value has it), and most of it is left after taking that out: the models
#   differ, and more prompts would not narrow the intervals much.
#
#   </details>
