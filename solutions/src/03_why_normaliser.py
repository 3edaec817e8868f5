# %% [markdown]
# # Exercise 3 — Entropy, the normaliser, and how it grows
#
# **Time.** About 15 minutes; going further: 5 more.
#
# [Lesson 3](../lessons/03_why_normaliser.ipynb) measured how the softmax normaliser $Z_i$ and the
# effective number of keys
# $e^{H_i}$ grow with $n$. Write the three measurements yourself.

# %%
import torch
import torch.nn.functional as F

from course.grader import grade_entropy, grade_growth_exponent, grade_log_normaliser

# %% [markdown]
# ## Task 1: attention entropy of every row
#
# $H_i = -\sum_j p_{ij}\log p_{ij}$ with $p$ the row normalised to sum 1 (relu² rows need not
# sum to 1), $0 \log 0 = 0$, and a row of zeros has entropy 0. Reduce over the last dimension.

# %%
def entropy(weights):
    ### BEGIN SOLUTION
    total = weights.sum(-1, keepdim=True)
    p = weights / torch.where(total > 0, total, torch.ones_like(total))
    return -torch.where(p > 0, p * p.log(), torch.zeros_like(p)).sum(-1)
    ### END SOLUTION


# %%
grade_entropy(entropy)

# %% [markdown]
# ## Task 2: log of the normaliser
#
# Given scores $S$ (masked entries are `-inf`), return $\log Z_i$ per row:
# $\log \sum_j e^{S_{ij}}$ for `norm="softmax"` (without overflowing for large scores) and
# $\log \sum_j \mathrm{relu}(S_{ij})^2$ for `norm="relu2"`.

# %%
def log_normaliser(scores, norm):
    ### BEGIN SOLUTION
    if norm == "softmax":
        return torch.logsumexp(scores, dim=-1)
    return (F.relu(scores) ** 2).sum(-1).log()
    ### END SOLUTION


# %%
grade_log_normaliser(log_normaliser)

# %% [markdown]
# ## Task 3: the growth exponent
#
# Fit $\log(\text{value}) = a + b \log n$ by least squares and return $b$ (1 means $O(n)$,
# 0 means $O(1)$).

# %%
def growth_exponent(ns, values):
    ### BEGIN SOLUTION
    x = torch.tensor(ns, dtype=torch.float64).log()
    y = torch.tensor(values, dtype=torch.float64).log()
    x, y = x - x.mean(), y - y.mean()
    return float((x * y).sum() / (x * x).sum())
    ### END SOLUTION


# %%
grade_growth_exponent(growth_exponent)

# %% [markdown]
# **Going further:** apply your three functions to an untrained `minilm.LM` at lengths
# 16-128 (`model(idx, returns="weights")`); you should find exponents near 1.
#
# <details><summary>Answer</summary>
#
# An untrained model has nearly uniform attention: every score is small, so every key gets about
# $1/n$. Then $Z_i \approx n\,e^{\bar s}$ and $e^{H_i} \approx n$, and both exponents come out
# near 1. Lesson 3 measured the same on its untrained softmax GAU: $Z$ exponents 0.93-0.95,
# effective-key exponents 1.00-1.01 (15.5 to 126.2 effective keys at $n = 16$ to 128). If yours
# are far below 1, check that your entropy uses the weights of each row (summing to 1) and that
# $Z$ is the sum over the keys the row sees.
#
# </details>
