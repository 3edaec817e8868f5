# %% [markdown]
# # Exercise 10 — How large a multiplier holds the needle's share?
#
# **Time.** About 10 minutes; going further: 5 more.
#
# [Lesson 10](../lessons/10_why_it_works.ipynb) found that Su's $\log_L n$ keeps the answer rows'
# attention on the needle nearly
# constant as the haystack grows. Here is the simplest model of why: a row whose logits depend
# only on *what* a key is, not where it is (as in a NoPE model's first layer, or a head that
# looks for the marker).

# %%
import math

import torch

from course.grader import grade_lambda_holding_share, grade_needle_share

# %% [markdown]
# ## Task 1: the needle's share of a row
#
# A row sees `n` keys: $\nu$ of them (the argument `needle_keys`) belong to the needle and have
# logit $S$ (the argument `needle_logit`), the other $n - \nu$ (filler) have logit 0. Every logit is
# multiplied by $\lambda$ (`lam`). Return the softmax weight on the needle, summed over its $\nu$
# keys:
#
# $$m = \frac{\nu\, e^{\lambda S}}{\nu\, e^{\lambda S} + (n - \nu)}.$$
#
# (`n`, `needle_keys`, `needle_logit`, `lam` are numbers; return a number or a 0-dim tensor.)

# %%
def needle_share(n, needle_keys, needle_logit, lam):
    ### BEGIN SOLUTION
    weight = needle_keys * math.exp(lam * needle_logit)
    return weight / (weight + (n - needle_keys))
    ### END SOLUTION


# %%
grade_needle_share(needle_share)

# %% [markdown]
# ## Task 2: the multiplier that holds the share
#
# Solve $m(\lambda) = $ `share` for $\lambda$: return the multiplier at which the needle's share
# of a row of `n` keys is exactly `share`. Then notice how it grows with $n$: by $\ln 2 / S$ every
# time the filler doubles, that is, like $\log n$.

# %%
def lambda_holding_share(n, needle_keys, needle_logit, share):
    ### BEGIN SOLUTION
    return math.log(share * (n - needle_keys) / ((1 - share) * needle_keys)) / needle_logit
    ### END SOLUTION


# %%
grade_lambda_holding_share(lambda_holding_share)

# %% [markdown]
# ## Going further
# - Write the multiplier that holds the share at $n$ as a multiple of the one that gives it at
#   $L$: $\lambda(n)/\lambda(L) = 1 + c \ln(\cdot)$. What is $c$? For which $S$ is it Su's $1/\ln L$?
#
#   <details><summary>Answer</summary>
#
#   $\lambda(n) = \ln\big((n - \nu)R\big)/S$ with $R = m/((1 - m)\nu)$, so
#   $\lambda(n) - \lambda(L) = \ln\frac{n-\nu}{L-\nu}/S$ and
#   $\lambda(n)/\lambda(L) = 1 + c \ln\frac{n-\nu}{L-\nu}$ with $c = 1/(S\, \lambda(L))$; for
#   $n, L \gg \nu$ the log is about $\ln(n/L)$. It is Su's $1/\ln L$ when
#   $S\,\lambda(L) = \ln L$: for
#   a model as trained ($\lambda(L) = 1$), $S = \ln L$ ($\approx 3.47$ for $L = 32$), a needle key
#   $e^{S} = L$ times as heavy as a filler key.
#
#   </details>
#
# - The share held, the row's entropy still grows: the filler's weight, $1 - m$, is spread over
#   more keys. Compute the entropy of the row at constant share for $n = L$ and $n = 8L$.
#
#   <details><summary>Answer</summary>
#
#   The needle's $\nu$ keys get $m/\nu$ each, the $n - \nu$ filler keys $(1 - m)/(n - \nu)$ each, so
#   $H = -m \ln\frac{m}{\nu} - (1 - m)\ln\frac{1-m}{n-\nu}$, which grows only through
#   $(1 - m)\ln(n - \nu)$. With $m = 0.6$, $\nu = 4$, $L = 32$: $H = 2.84$ nats at $n = L$ and 3.72 at
#   $n = 8L$, a rise of $(1 - m)\ln\frac{252}{28} = 0.4 \ln 9 \approx 0.88$ nats. (Lesson 10's
#   retrieval heads rose 0.48 under $\log_L n$: their filler weight is not spread evenly.)
#
#   </details>
