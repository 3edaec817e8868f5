# %% [markdown]
# # Exercise 5 — The log n factor
#
# Lesson 5 derived the entropy-invariant factor $\log n_i / \log L$ on the logits. Write the
# factor, then attention that uses it.

# %%
import math

import torch
import torch.nn.functional as F

from minilm.checks import check_entropy_invariant_attention, check_logn_factor

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
# **Going further:** for random `q, k` of growing length $T$ (bidirectional), plot the mean
# row entropy of plain softmax and of your entropy-invariant version. Which grows like
# $\log T$? Does the other stay flat for random scores, or only for trained ones?
