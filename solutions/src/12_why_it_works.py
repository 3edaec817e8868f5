# %% [markdown]
# # Exercise 12 — How much temperature holds the needle's share?
#
# Lesson 12 found that Su's $\log_L n$ keeps the answer rows' attention on the needle nearly
# constant as the haystack grows. Here is the simplest model of why: a row whose logits depend
# only on *what* a key is, not where it is (as in a NoPE model's first layer, or a head that
# looks for the marker).

# %%
import math

import torch

from minilm.checks import check_lambda_holding_share, check_needle_share

# %% [markdown]
# ## Task 1: the needle's share of a row
#
# A row sees `n` keys: `k` of them belong to the needle and have logit `s`, the other `n - k`
# (filler) have logit 0. Every logit is multiplied by the temperature `lam`. Return the softmax
# weight on the needle, summed over its `k` keys:
#
# $$m = \frac{k\, e^{\lambda s}}{k\, e^{\lambda s} + (n - k)}.$$
#
# (`n`, `k`, `s`, `lam` are numbers; return a number or a 0-dim tensor.)

# %%
def needle_share(n, k, s, lam):
    ### BEGIN SOLUTION
    return k * math.exp(lam * s) / (k * math.exp(lam * s) + (n - k))
    ### END SOLUTION


# %%
check_needle_share(needle_share)

# %% [markdown]
# ## Task 2: the temperature that holds the share
#
# Solve $m(\lambda) = $ `share` for $\lambda$: return the temperature at which the needle's share
# of a row of `n` keys is exactly `share`. Then notice how it grows with $n$: by $\ln 2 / s$ every
# time the filler doubles, that is, like $\log n$.

# %%
def lambda_holding_share(n, k, s, share):
    ### BEGIN SOLUTION
    return math.log(share * (n - k) / ((1 - share) * k)) / s
    ### END SOLUTION


# %%
check_lambda_holding_share(lambda_holding_share)

# %% [markdown]
# ## Going further
# - Write the temperature that holds the share at $n$ as a multiple of the one that gives it at
#   $L$: $\lambda(n)/\lambda(L) = 1 + c \ln(\cdot)$. What is $c$? For which $s$ is it Su's $1/\ln L$?
# - The share held, the row's entropy still grows: the filler's weight, $1 - m$, is spread over
#   more keys. Compute the entropy of the row at constant share for $n = L$ and $n = 8L$.
