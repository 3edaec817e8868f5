# %% [markdown]
# # Exercise 4 — Two of the fixes
#
# **Time.** About 10 minutes; going further: 5 more.
#
# Fix 3 of lesson 4 divides relu² by its own row sum, the way softmax divides by $Z_i$;
# fix 2 pretrains on batches of mixed lengths. Write both.
#
# The lesson: [lesson 4](../lessons/04_three_fixes.ipynb).

# %%
import math
import random

import torch
import torch.nn.functional as F

from course.grader import grade_mixed_length_batches, grade_relu2_norm_attention

# %% [markdown]
# ## Task 1: relu² normalised by the row sum
#
# $$a_{ij} = \frac{\mathrm{relu}(S_{ij})^2}{\sum_{j'} \mathrm{relu}(S_{ij'})^2},\qquad S = \frac{q k^\top}{\sqrt d},\qquad \text{out} = a\, v$$
#
# over the keys each query sees (when `causal`, $j \le i$). A row whose scores are all
# $\le 0$ has a zero sum: give it zero weights, never NaN.

# %%
def relu2_norm_attention(q, k, v, causal):
    ### BEGIN SOLUTION
    T = q.shape[-2]
    r = F.relu(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])) ** 2
    if causal:
        r = r * torch.ones(T, T).tril()
    z = r.sum(-1, keepdim=True)
    return (r / torch.where(z > 0, z, torch.ones_like(z))) @ v
    ### END SOLUTION


# %%
grade_relu2_norm_attention(relu2_norm_attention)

# %% [markdown]
# ## Task 2: batches of mixed lengths
#
# Fix 2 pretrains on mixed lengths with $n$ = the sample length. Write the data side: an
# endless iterator of causal-LM batches `(x, y)`, each of `batch_size` random windows of
# `ids`, all of one length drawn (with `random.Random(seed)`) from `lengths`, and `y` the
# next character of every position of `x`.

# %%
def mixed_length_batches(ids, batch_size, lengths, seed):
    ### BEGIN SOLUTION
    pick = random.Random(seed)
    generator = torch.Generator().manual_seed(seed)
    while True:
        T = pick.choice(lengths)
        starts = torch.randint(0, len(ids) - T, (batch_size,), generator=generator)
        windows = torch.stack([ids[s : s + T + 1] for s in starts.tolist()])
        yield windows[:, :-1], windows[:, 1:]
    ### END SOLUTION


# %%
grade_mixed_length_batches(mixed_length_batches)

# %% [markdown]
# **Going further:** with your `relu2_norm_attention`, show that multiplying `q` by 0.5, 2
# or 5 leaves the output unchanged, while it changes softmax attention
# (`torch.nn.functional.scaled_dot_product_attention`). Lesson 5 explains why.
#
# <details><summary>Answer</summary>
#
# Scaling $q$ by $c > 0$ scales every score by $c$, and
# $\mathrm{relu}(cs)^2 = c^2\,\mathrm{relu}(s)^2$; the $c^2$ cancels when each row is divided by its
# sum, so your output is the same for $c$ = 0.5, 2 and 5 up to float rounding. Softmax is not
# homogeneous: $c < 1$ flattens each row towards uniform, $c > 1$ sharpens it towards its largest
# score, and the output changes. Lesson 5's table shows the same on random inputs: softmax weights
# moved by up to 0.272 at 0.5 and 0.402 at 2, relu²/row sum by 0.
#
# </details>
