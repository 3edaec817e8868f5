# %% [markdown]
# # Exercise 13 — A sliding window, and how far a stack of layers reads
#
# **Time.** About 10 minutes; going further: 5 more.
#
# [Lesson 13](../lessons/13_design_that_holds.ipynb) built a hybrid: RoPE layers that see only
# their last $w$ keys, and global NoPE layers.
# Write the window's mask, then find which input tokens can reach an output through a stack of
# such layers: the reason the hybrid needs its global layers.

# %%
import torch

from course.grader import grade_reach, grade_sliding_window_mask

# %% [markdown]
# ## Task 1: the sliding-window causal mask
#
# Return a `(T, T)` boolean tensor whose entry $(i, j)$ is `True` when query $i$ sees key $j$: a
# causal model sees $j \le i$; with a window of $w$ keys (the query itself included) only
# $i - w < j \le i$. `window=None` means no window: every $j \le i$.

# %%
def sliding_window_mask(T, window):
    ### BEGIN SOLUTION
    i = torch.arange(T).view(-1, 1)
    j = torch.arange(T).view(1, -1)
    seen = j <= i
    return seen if window is None else seen & (i - j < window)
    ### END SOLUTION


# %%
grade_sliding_window_mask(sliding_window_mask)

# %% [markdown]
# ## Task 2: the reach of a stack of layers
#
# `layers` lists each layer as `(pos, window)`, first layer first, as `Config.layers` gives them
# (`window` is `None` for a global layer). Return a `(T, T)` boolean tensor whose entry $(i, j)$
# is `True` when the input token at $j$ can change the output at $i$. Each layer's output at $i$
# depends on its own input at $i$ (the residual path) and on the inputs at the keys it sees.
#
# *Hint:* a layer with mask $M$ turns "depends on" $R$ into $M R$, a boolean matrix product.

# %%
def reach(layers, T):
    ### BEGIN SOLUTION
    depends = torch.eye(T, dtype=torch.bool)
    for _, window in layers:
        mask = sliding_window_mask(T, window)
        depends = (mask.float() @ depends.float()) > 0
    return depends
    ### END SOLUTION


# %%
grade_reach(reach)

# %% [markdown]
# ## Going further
# - Use `reach` to find how far back three windowed layers of $w = 8$ read, and compare with
#   $3(w - 1)$. Then put one global layer anywhere in the stack: what changes?
#
#   <details><summary>Answer</summary>
#
#   Three windows of 8 reach exactly $3 \times 7 = 21$ keys back: each layer adds $w - 1$. One
#   global layer anywhere makes every earlier input reachable from every later output, whatever
#   the windows: the global layer carries it, and the windows after it only add to the reach.
#
#   </details>
# - Su's rule for HWFA keeps the windows' total reach, $(w - 1)$ times the number of windowed
#   layers, below about $3/4$ of $L$. With `reach`, find the largest $w$ that HWFA's layout (three
#   windowed layers, then one global layer) allows at $L = 32$, and at Su's $L = 512$. No
#   training: [lesson 14](../lessons/14_the_answer.ipynb) trains HWFA's layout and sweeps $w$.
#
#   <details><summary>Answer</summary>
#
#   The windowed layers alone reach $3(w - 1)$ keys back (the global layer, last, reaches
#   everything). $3(w - 1) < 24$ gives $w \le 8$ at $L = 32$ (the course's $w$); $3(w - 1) < 384$
#   gives $w \le 128$ at $L = 512$.
#
#   </details>
