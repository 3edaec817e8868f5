# %% [markdown]
# # Exercise 6 — Probing and measuring a NoPE model
#
# **Time.** About 10 minutes; going further: 5 more.
#
# [Lesson 6](../lessons/06_nope.ipynb) read the position out of a NoPE model's hidden state with a
# linear probe, and
# measured how far past its training length a model goes. Write both measurements.

# %%
import torch

from course.grader import grade_extension_ratio, grade_position_probe

# %% [markdown]
# ## Task 1: a linear position probe
#
# `hidden` has shape `(N, T, d)`: the hidden states of `N` sequences. Fit a least-squares
# line *with a bias* from the hidden state at each position to the position $0 \dots T-1$,
# using sequences `0 .. n_train - 1`, and return $R^2 = 1 - \sum (\hat y - y)^2 / \sum (y - \bar y)^2$
# on the other sequences (`torch.linalg.lstsq` solves the fit).

# %%
def position_probe_r2(hidden, n_train):
    ### BEGIN SOLUTION
    N, T, d = hidden.shape
    features = torch.cat([hidden, torch.ones(N, T, 1)], dim=-1)
    position = torch.arange(T, dtype=torch.float).expand(N, T)
    w = torch.linalg.lstsq(features[:n_train].reshape(-1, d + 1),
                           position[:n_train].reshape(-1, 1)).solution
    predicted = features[n_train:].reshape(-1, d + 1) @ w
    truth = position[n_train:].reshape(-1, 1)
    return 1 - ((predicted - truth) ** 2).sum().item() / ((truth - truth.mean()) ** 2).sum().item()
    ### END SOLUTION


# %%
grade_position_probe(position_probe_r2)

# %% [markdown]
# ## Task 2: the extension ratio
#
# `position_loss` holds the mean loss at every position of long sequences. The reference
# level is the mean over positions $L/2 \dots L-1$. From position $L$ on, average the loss in
# consecutive buckets of `bucket` positions; return where the first bucket above
# reference + `margin` starts, divided by $L$ (or `len(position_loss) / L` if none is).

# %%
def extension_ratio(position_loss, L, margin, bucket):
    ### BEGIN SOLUTION
    reference = position_loss[L // 2 : L].mean()
    for start in range(L, len(position_loss), bucket):
        if position_loss[start : start + bucket].mean() > reference + margin:
            return start / L
    return len(position_loss) / L
    ### END SOLUTION


# %%
grade_extension_ratio(extension_ratio)

# %% [markdown]
# **Going further:** use your probe on the hidden states of an untrained causal and an
# untrained bidirectional `minilm.LM` with `pos="nope"` (capture them with a forward hook on
# `model.blocks[i]`). Which one can the probe read, and why?
#
# <details><summary>Answer</summary>
#
# The causal one. Lesson 6 measured it on the same two kinds of untrained model: probe $R^2$ up to
# 0.27 for the causal NoPE model (after its first layer), at most $-0.06$ for the bidirectional one.
# In the causal model row $i$ averages over $i + 1$ values, and the spread of that average shrinks
# with $i$, so the hidden state carries the position even before training. In the bidirectional
# model every row averages the same $T$ values, and without a position encoding the model is
# permutation-equivariant: no linear read-out can find a position that nothing in the computation
# marks.
#
# </details>
