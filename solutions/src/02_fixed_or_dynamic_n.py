# %% [markdown]
# # Exercise 2 — Fixed n, dynamic n, and the prefix argument
#
# **Time.** About 10 minutes; going further: 5 more.
#
# [Lesson 2](../lessons/02_fixed_or_dynamic_n.ipynb) compared three divisors for relu² attention
# and showed that, in a causal model
# with n fixed, a short sequence computes exactly what the first positions of a long one
# computed. Write both pieces yourself; each check compares with `minilm` on several inputs.

# %%
import torch

from course.grader import grade_prefix_gap, grade_row_divisor

# %% [markdown]
# ## Task 1: the divisor of every row
#
# Return a `(T, 1)` tensor: what row $i$ of relu² attention is divided by, for
# - `n` a positive int: $n$ for every row;
# - `n = "length"`: $T$ for every row;
# - `n = "row"`: $n_i$, the number of keys query $i$ sees ($i + 1$ when `causal`, $T$ when not).

# %%
def row_divisor(T, n, causal):
    ### BEGIN SOLUTION
    if n == "row":
        visible = (torch.arange(1, T + 1, dtype=torch.float) if causal
                   else torch.full((T,), float(T)))
        return visible.view(T, 1)
    return torch.full((T, 1), float(T if n == "length" else n))
    ### END SOLUTION


# %%
grade_row_divisor(row_divisor)

# %% [markdown]
# ## Task 2: the prefix gap
#
# Return the largest absolute difference between the logits of the short sequence
# `idx[:, :T]` and the first `T` logits of the full sequence `idx`, both computed with the
# same attention overrides (for example `n="length"`). For a causal model with n fixed it
# is 0 (up to float rounding); with `n="length"` it is not. Use `torch.no_grad()`.

# %%
def prefix_gap(model, idx, T, **overrides):
    ### BEGIN SOLUTION
    with torch.no_grad():
        short = model(idx[:, :T], **overrides)
        long = model(idx, **overrides)[:, :T]
    return (short - long).abs().max().item()
    ### END SOLUTION


# %%
grade_prefix_gap(prefix_gap)

# %% [markdown]
# **Going further:** in a *bidirectional* model (`causal=False` in the config), is the prefix
# gap zero for n fixed? Try it with `minilm.LM` and explain the answer.
#
# <details><summary>Answer</summary>
#
# No. In a bidirectional model, row $i$ of the short sequence sees only its $T$ keys, while row $i$
# of the long one also sees keys $T+1..L$. Even with $n$ fixed, each short row misses the relu²
# terms of those later keys, so its output differs, and through the layers so does everything after
# it. With `causal=False`, compare `model(x[:, :T])` with `model(x)[:, :T]`: the gap is not 0 for
# any choice of $n$. The prefix argument needs the causal mask.
#
# </details>
