# %% [markdown]
# # Exercise 8 — One rule, four spellings
#
# **Time.** About 10 minutes; going further: 5 more.
#
# [Lesson 8](../lessons/08_one_idea.ipynb) put the length rules of several papers and models on one
# plot. Write them.

# %%
import math

from course.grader import grade_length_rules, grade_rule_slopes

# %% [markdown]
# ## Task 1: the multiplier on the logits
#
# For a model trained at length $L$, reading $n$ keys ($s = n / L$), return the multiplier of
# - `"su"`: $\log_L n$;
# - `"nope_fit"`: $1 + 0.397 \ln s$;
# - `"qwen"`: $\log_L n$, but never below 1;
# - `"yarn"`: $(0.1 \ln s + 1)^2$.

# %%
def length_rule(rule, n, L):
    ### BEGIN SOLUTION
    s = n / L
    if rule == "su":
        return math.log(n) / math.log(L)
    if rule == "nope_fit":
        return 1 + 0.397 * math.log(s)
    if rule == "qwen":
        return max(1.0, math.log(n) / math.log(L))
    if rule == "yarn":
        return (0.1 * math.log(s) + 1) ** 2
    raise ValueError(f"unknown rule {rule!r}")
    ### END SOLUTION


# %%
grade_length_rules(length_rule)

# %% [markdown]
# ## Task 2: the c of each rule
#
# Near $s = 1$ every rule is $1 + c \ln s$ to first order: $c$ is the derivative of the
# multiplier with respect to $\ln s$ at $s = 1$. Return it for each rule and training length
# $L$ (for `"qwen"`, take the side $s > 1$).

# %%
def rule_slope(rule, L):
    ### BEGIN SOLUTION
    return {"su": 1 / math.log(L), "qwen": 1 / math.log(L), "nope_fit": 0.397, "yarn": 0.2}[rule]
    ### END SOLUTION


# %%
grade_rule_slopes(rule_slope)

# %% [markdown]
# **Going further:** plot the four rules for $L = 512$ and $n$ from 512 to 8192 on one
# figure with a log x axis, with your $1 + c \ln s$ lines beside them. Where does each
# first-order line stop being a good description?
#
# <details><summary>Answer</summary>
#
# With $s = n/512$ from 1 to 16: Su's $\log_{512} n = 1 + \ln s/\ln 512$, the NoPE fit and Qwen's
# rule (Su's, floored at 1, which changes nothing for $s \ge 1$) are exactly $1 + c \ln s$, straight
# lines on a log axis: their first-order lines are exact everywhere. Only YaRN departs:
# $(0.1 \ln s + 1)^2 = 1 + 0.2 \ln s + 0.01 (\ln s)^2$, so the line is low by $0.01 (\ln s)^2$:
# 0.005 at $s = 2$, 0.019 at $s = 4$ (1.30 against 1.28) and 0.077 at $s = 16$ (1.63 against 1.55,
# about 5%). It is a good description up to a few times $L$ and drifts beyond.
#
# </details>
