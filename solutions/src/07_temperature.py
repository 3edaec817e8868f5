# %% [markdown]
# # Exercise 7 — Temperatures: the fit and head-based scaling
#
# **Time.** About 10 minutes; going further: 5 more.
#
# [Lesson 7](../lessons/07_temperature.ipynb) searched a uniform temperature per length, fitted
# $\lambda = 1 + c \ln s$, and
# trained one temperature per head with a clamp. Write the fit and the training loop.

# %%
import math

import torch
import torch.nn.functional as F

from course.grader import grade_fit_c, grade_head_scale_training

# %% [markdown]
# ## Task 1: fit c
#
# Given length ratios $s$ and the best temperature $\lambda$ at each, return the least-squares
# $c$ of $\lambda = 1 + c \ln s$ (no intercept: $\lambda = 1$ at $s = 1$ by construction).

# %%
def fit_c(ratios, lambdas):
    ### BEGIN SOLUTION
    x = [math.log(s) for s in ratios]
    return sum(a * (lam - 1) for a, lam in zip(x, lambdas)) / sum(a * a for a in x)
    ### END SOLUTION


# %%
grade_fit_c(fit_c)

# %% [markdown]
# ## Task 2: head-based scaling
#
# Train `model.multiplier` (shape `(layers, heads)`) and nothing else:
# 1. freeze every parameter, then set the temperatures to `start` and let them train;
# 2. for `steps` batches from `batches` (an iterator of `(x, y)`), take an AdamW step on the
#    cross-entropy of `model(x)` against `y` (lr 0.05, no weight decay);
# 3. after **every** step, clamp the temperatures at $\ge 1$ (inside `torch.no_grad()`).

# %%
def train_head_scales(model, batches, steps, start):
    ### BEGIN SOLUTION
    for p in model.parameters():
        p.requires_grad_(False)
    with torch.no_grad():
        model.multiplier.fill_(start)
    model.multiplier.requires_grad_(True)
    optimizer = torch.optim.AdamW([model.multiplier], lr=0.05, weight_decay=0.0)
    for _ in range(steps):
        x, y = next(batches)
        loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        with torch.no_grad():
            model.multiplier.clamp_(min=1.0)
    ### END SOLUTION


# %%
grade_head_scale_training(train_head_scales)

# %% [markdown]
# **Going further** (needs lesson 6's trained models: run lesson 6 first, or this trains them,
# about 4 minutes on 2 CPU cores): run your loop on lesson 6's NoPE model at 4x its training
# length, once from $\lambda = 1$ and once from the best uniform $\lambda$. Lesson 7 found both end
# at the same temperatures; do you? Get the model, and its training length, with
#
# ```python
# import minilm
# P, corpus = minilm.profile(), minilm.default_corpus()
# model = minilm.experiments.nope_rope_models(P, corpus, positions=("nope",))["nope", P.seeds[0]]
# L = P.nope_rope_len
# ```
#
# <details><summary>Answer</summary>
#
# You should: in lesson 7 the same recipe ended at the same loss from both starts (seed 0: 1.851
# nats at $4L$ from 1.7 and from 1.0, $\lambda_h$ in [1.00, 1.82] both times). With 16 scales and a
# smooth loss Adam finds one minimum. If your two runs end far apart, check that only
# `model.multiplier` trains, that the clamp comes after each optimiser step, and the learning rate
# and schedule; small differences in the schedule move only the last digits.
#
# </details>
