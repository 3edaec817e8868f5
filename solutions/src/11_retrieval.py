# %% [markdown]
# # Exercise 11 — Scoring retrieval
#
# **Time.** About 5 minutes; going further: 5 more.
#
# [Lesson 11](../lessons/11_retrieval.ipynb) scored retrieval by exact match from one forward pass.
# Write that measurement.

# %%
import torch

from course.grader import grade_exact_match

# %% [markdown]
# ## Task 1: exact match from one forward pass
#
# `logits` has shape `(B, T, V)`: the model's output on `B` retrieval windows, and `y` `(B, T)`
# the targets, whose last 3 entries are the key's digits (the rest are -100 and do not count).
# Return a `(B,)` boolean tensor: `True` where the argmax of the logits equals the target at
# **each** of the last 3 positions. (With the true digits fed back, that is exactly when
# greedy decoding writes the whole key.)

# %%
def exact_match(logits, y):
    ### BEGIN SOLUTION
    return (logits[:, -3:].argmax(-1) == y[:, -3:]).all(-1)
    ### END SOLUTION


# %%
grade_exact_match(exact_match)

# %% [markdown]
# ## Going further
# - Change `exact_match` to score each digit separately. In the lesson's models, which digit
#   is lost first past the training length? (They are lesson 11's: run it first, or
#   `minilm.experiments.retrieval_models(minilm.profile(), minilm.default_corpus())` trains them, about 6
#   minutes on 2 CPU cores with lesson 6's.)
#
#   <details><summary>Answer</summary>
#
#   Score digit $d$ with `logits[:, -3 + d].argmax(-1) == y[:, -3 + d]` and average per length. We
#   did not run this in the course, so here is what to expect and what each outcome would mean. The
#   first digit is predicted at the `?`, whose row must find the needle in the whole haystack; the
#   second and third can copy the digit that follows the one just written, a short-range match next
#   to the key. So we expect the first digit to go first past $L$: the needle is lost. If instead
#   the later digits fail while the first holds, the needle is found and the read-out fails (lesson
#   12 meets a hint of that on seed 0).
#
#   </details>
