# %% [markdown]
# # Exercise 15 — Your own design, on the scorecard
#
# **Time.** About 10 minutes; going further: 5 more.
#
# [Lesson 15](../lessons/15_after_the_answer.ipynb) put four designs through one scorecard. Now
# add one of your own, with no training: a *logit map* that turns each logit $S_{ij}$ of every
# layer into $a_{ij} S_{ij} + b_{ij}$. A multiplier is an $a$, a mask a $b$ of $-\infty$, a bias
# any other $b$. A design run on trained weights must keep two promises, which the grader checks
# in one line: it stays **causal** (row $i$ may not depend on how long the sequence is, only on
# $i$, $j$ and $L$), and it leaves the model **unchanged within $L$**, where it was trained.

# %%
import math

import torch

import minilm
from course.grader import grade_design
from minilm.experiments import controlled_models
from minilm.scorecard import card_table, designed, scorecard

P = minilm.profile()
corpus = minilm.default_corpus()
L = P.controlled_len

# %% [markdown]
# ## Task 1: a window of $L$ keys past $L$
#
# Past $L$ a NoPE row sees more keys than any row in training: distraction. One design never
# lets it: every layer sees only its last $L$ keys. Return `(a, b)`, each `(T, T)`, on `device`
# in `dtype`: $a = 1$ everywhere, $b_{ij} = -\infty$ where $i - j \ge L$ and $0$ elsewhere.

# %%
def window_of_L(T, device, dtype):
    ### BEGIN SOLUTION
    i = torch.arange(T, device=device).view(-1, 1)
    j = torch.arange(T, device=device).view(1, -1)
    a = torch.ones(T, T, device=device, dtype=dtype)
    b = torch.zeros(T, T, device=device, dtype=dtype).masked_fill(i - j >= L, float("-inf"))
    return a, b
    ### END SOLUTION


# %%
grade_design(window_of_L, L)

# %% [markdown]
# ## Task 2: on the scorecard
#
# Run lesson 9's five NoPE models (cached if you ran lessons 9 or 15) under your design, next to
# plain NoPE and NoPE with $\log_L n$. `designed(models, design)` runs every layer of the models
# with the design until the block ends. Store the scorecard of the NoPE models under your design
# in `yours`: a name of your choice, `measures=("retrieval",)`, `trials=20`.

# %%
nope = controlled_models(P, corpus, positions=("nope",), progress=False)
named = {name: {(name, seed): model for (_, seed), model in nope.items()}
         for name in ("NoPE", "NoPE + log_L n", "window of L")}
card = scorecard(named["NoPE"], corpus, L, measures=("retrieval",), trials=20)
card |= scorecard(named["NoPE + log_L n"], corpus, L, measures=("retrieval",), trials=20,
                  logn_base=L)
### BEGIN SOLUTION
with designed(named["window of L"], window_of_L):
    yours = scorecard(named["window of L"], corpus, L, measures=("retrieval",), trials=20)
### END SOLUTION
print(card_table(card | yours))

# %% [markdown]
# ## Going further
# - Your window scores about 0.2 from $4L$ on. Why that number?
#
#   <details><summary>Answer</summary>
#
#   The needle sits at five depths, 0 to 1; only at depth 1 (right before the `?`) is it within
#   $L$ keys of the rows that answer, in one layer's reach. Four windowed layers could relay it
#   further, up to $4(L - 1)$ keys, but these layers were trained with every key in view and
#   never learned to relay. The hybrid of [lesson 13](../lessons/13_design_that_holds.ipynb)
#   trains its windows in and keeps global NoPE layers between them.
#
#   </details>
# - Write ALiBi's bias, $b_{ij} = -0.1\,(i - j)$ with $a = 1$, and grade it. What does the
#   grader say, and why would the same bias be fine in a model *trained* with it?
#
#   <details><summary>Answer</summary>
#
#   "It changes the model in range": within $L$ the bias moves weight toward near keys, so the
#   trained model no longer computes what it learned. A model trained with ALiBi learned its
#   weights under the bias, so for it the bias *is* the model in range (Press et al. 2022).
#
#   </details>
# - Write $\log_L n$ with the sequence's length $T$ in place of $n_i$:
#   $a_{ij} = \max(1, \ln T / \ln L)$. What does the grader say?
#
#   <details><summary>Answer</summary>
#
#   "It breaks causality": at $T > L$ every row gets the same factor, set by how long the whole
#   sequence is, so position $i$'s output changes when tokens are added after it. The log n
#   factor must use $n_i$, the keys row $i$ sees ([lesson 5](../lessons/05_entropy_invariance.ipynb)),
#   as $n$ = length did for relu² in lesson 2.
#
#   </details>
