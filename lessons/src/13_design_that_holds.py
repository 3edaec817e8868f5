# %% [markdown]
# # Lesson 13 — The design that holds: windowed RoPE layers and global NoPE layers
#
# **Model and length.** [Lesson 6](06_nope.ipynb)'s text Transformers (d64, 4 layers, 4 heads; two seeds) and
# [lesson 9](09_fix_isolated.ipynb)'s retrieval Transformers (d32, 4 layers, 4 heads; five seeds), trained at $L = 32$,
# next to a *hybrid* of each, trained the same way: RoPE layers that see only their last 8 keys,
# interleaved with NoPE layers that see every key.
#
# **Time.** About 15 minutes to read; about 6 minutes to run on 2 CPU cores, with the models of
# lessons 6 and 9 cached (it trains seven hybrids).
#
# **Which failure, which fix.** NoPE fails past $L$ in two ways: *distraction*, which the
# multiplier $\lambda$ of lessons [7](07_temperature.ipynb)-[12](12_distraction.ipynb) fixes, and *counts never seen* (failure 4 of the
# [course map](README.md#the-course-in-one-picture)), which it cannot. A sliding window removes
# the second: the design of Su's HWFA, Llama 4 and Command A.
#
# *Numbers in the text are the stored run's; yours will differ a little
# ([how the course checks itself](checking.md)).*
#
# [Notation](README.md#notation) · [sources](README.md#sources) ·
# [exercise 13](../exercises/13_design_that_holds.ipynb)

# %%
import math

import matplotlib.pyplot as plt
import torch

import minilm
from minilm import (
    RopeScaling, at_lambda, loss_by_length, over_seeds, retrieval_accuracy, seed_interval,
)
from minilm.experiments import controlled_models, nope_rope_models
from minilm.measure import eval_batches, layer_writes
from minilm.plots import course_style, draw_layer_keys, interval_bars
from minilm.scaling import uniform_temperature_search

course_style()

P = minilm.profile()
corpus = minilm.default_corpus()
L = P.nope_rope_len
assert L == P.controlled_len   # one L for both tasks, so one set of lengths
lengths = [L, 2 * L, 4 * L, 8 * L, 16 * L]
print(f"profile {P.name}: L = {L}, hybrid window {P.hybrid_window}; text seeds {P.seeds}, "
      f"retrieval seeds {P.controlled_seeds}")

# %% [markdown]
# ## Two ways NoPE fails
#
# Lessons [7](07_temperature.ipynb) and [9](09_fix_isolated.ipynb) multiplied NoPE's logits by a $\lambda$ past $L$. What share of the damage does
# each fix undo? NoPE's *excess* at length $n$ is its loss at $n$ minus its loss at $L$; a fix
# *takes back* the part of the excess it removes. Two fixes: the best uniform $\lambda$ (searched
# on other batches) and $\log_L n$ past $L$ (row $i$'s logits times $\log_L n_i$ where $n_i > L$:
# `position_scale=(1 / ln L, L)`, which changes nothing in range).

# %%
text = nope_rope_models(P, corpus, positions=("nope", "rope", "hybrid"))   # trains the hybrids
LOG_RULE = dict(position_scale=(1 / math.log(L), L))
grid = [1.0, 1.2, 1.4, 1.6, 1.8, 2.0]


def text_loss(model, T, fix="none"):
    """Validation loss at length T (the evaluation batches), under a fix."""
    if fix == "log_L n":
        return loss_by_length(model, corpus, [T], **LOG_RULE)[T]
    if fix == "YaRN":
        return loss_by_length(model, corpus, [T], rope_scaling=RopeScaling("yarn", T / L, L))[T]
    return loss_by_length(model, corpus, [T])[T]


nope_loss, taken_back = {}, {}
for seed in P.seeds:
    model = text["nope", seed]
    nope_loss[seed, L] = text_loss(model, L)
    for T in lengths[2:]:
        search = uniform_temperature_search(model, corpus, T, grid)
        with at_lambda(model, min(search, key=search.get)):
            best = text_loss(model, T)
        plain, logn = text_loss(model, T), text_loss(model, T, "log_L n")
        excess = plain - nope_loss[seed, L]
        nope_loss[seed, T] = plain
        taken_back[seed, T] = {"best lambda": (plain - best) / excess,
                               "log_L n": (plain - logn) / excess}
print("text: NoPE's excess loss past L, and the share of it each fix takes back")
for seed in P.seeds:
    print(f"seed {seed}: " + ";  ".join(
        f"{T // L}L excess {nope_loss[seed, T] - nope_loss[seed, L]:.2f} nats, taken back "
        + ", ".join(f"{fix} {share:.0%}" for fix, share in taken_back[seed, T].items())
        for T in lengths[2:]))

# %% [markdown]
# On text the best $\lambda$ takes back 15-31% of the excess at $4L$ to $16L$ (about a fifth),
# $\log_L n$ only 5-8%. Retrieval, on [lesson 9](09_fix_isolated.ipynb)'s five NoPE models, tells another story:

# %%
controlled = controlled_models(P, corpus, positions=("nope", "rope", "hybrid"))
SEEDS = P.controlled_seeds
depths = [0.0, 0.25, 0.5, 0.75, 1.0]


def exact(model, T, fix="none"):
    """Exact match at length T: 20 prompts at each of five depths, lesson 9's."""
    overrides = {"log_L n": LOG_RULE, "YaRN": dict(rope_scaling=RopeScaling("yarn", T / L, L))}
    accuracy = retrieval_accuracy(model, corpus, [T], depths, trials=20, filler="random",
                                  **overrides.get(fix, {}))
    return accuracy.mean().item()


found = {(pos, fix, seed, T): exact(controlled[pos, seed], T, fix)
         for pos, fixes in (("nope", ("none", "log_L n")), ("rope", ("none", "YaRN")),
                            ("hybrid", ("none", "log_L n")))
         for fix in fixes for seed in SEEDS for T in lengths}
retrieval_back = {T: [(found["nope", "log_L n", s, T] - found["nope", "none", s, T])
                      / (found["nope", "none", s, L] - found["nope", "none", s, T]) for s in SEEDS]
                  for T in (8 * L, 16 * L)}
for T, shares in retrieval_back.items():
    print(f"retrieval at {T // L}L: share of NoPE's lost exact match that log_L n takes back "
          f"{over_seeds(shares)}")

# %% [markdown]
# At $8L$, $\log_L n$ gives back about two thirds of the lost retrieval (0.69, mean of five
# seeds; 0.65 at $16L$). A multiplier repairs *retrieval*, one key's share of a softmax row
# (lessons [9](09_fix_isolated.ipynb)-[10](10_why_it_works.ipynb)), far better than *text*, where every prediction leans on the whole stack of
# layers. Something else is broken there.
#
# <details><summary>How the shares are computed</summary>
#
# On the same prompts and batches for every setting: share $= (\text{fixed} - \text{plain}) /
# (\text{in range} - \text{plain})$ per seed, then the mean and its 90% interval
# ([reading a result over seeds](09_fix_isolated.ipynb#reading-a-result-over-seeds)). Read, not
# asserted: the claims come below.
#
# </details>

# %% [markdown]
# ## The second failure: counts never seen
#
# [Lesson 6](06_nope.ipynb) found that NoPE counts positions through the causal mask: a query at position $i$
# averages over $i + 1$ keys. Past $L$ the counts are as new to NoPE as RoPE's angles past $L$
# are to RoPE, and no multiplier changes a count.
#
# To see it, measure what each layer *writes* into the residual stream at each position,
# $\lVert x_{\text{out}} - x_{\text{in}} \rVert / \sqrt d$ (`minilm.measure.layer_writes`), on 64
# validation windows of $16L$. Within $L$ each layer writes within a band; outside it, the state
# is one training never made.

# %%
windows = torch.cat([batch for batch, _ in eval_batches(corpus, task="causal", length=16 * L,
                                                        batch_size=16, n_batches=4)])
writes = {key: layer_writes(model, windows) for key, model in text.items()}


def drift(write):
    """Each layer's mean write over positions 8L..16L, divided by its mean over L/2..L."""
    return write[:, 8 * L:].mean(1) / write[:, L // 2:L].mean(1)


for key in sorted(writes):
    print(f"{key[0]:>6} seed {key[1]}: drift of layers 1-4 "
          + " ".join(f"{v:.2f}" for v in drift(writes[key]).tolist()))

# %% mystnb={"image": {"alt": "Two panels, NoPE and the hybrid (seed 0): what each of the four layers writes into the residual stream, the norm of x_out minus x_in over sqrt(d), against position on a log scale up to 16L, L marked. Past L one NoPE layer writes far more than in its in-range band; the hybrid's layers stay level."}}
fig, axes = plt.subplots(1, 2, figsize=(9, 3.6), sharey=True)
positions = torch.arange(1, 16 * L + 1)
for ax, pos in zip(axes, ("nope", "hybrid")):
    for layer, style in enumerate(["-", "--", "-.", ":"]):
        ax.plot(positions, writes[pos, P.seeds[0]][layer], style, label=f"layer {layer + 1}")
    ax.axvline(L, color="gray", lw=1)
    ax.text(L * 1.05, 0.1, "L", color="gray")
    ax.set(xscale="log", xlabel="position (log scale)", title=f"{pos}, seed {P.seeds[0]}")
axes[0].set_ylabel("what a layer writes, |x_out - x_in| / sqrt(d)")
axes[1].legend(loc="lower right")
plt.show()

# %% [markdown]
# At $8L$-$16L$ one of NoPE's layers writes 2.4 to 3.3 times as much as within $L$ (left): a
# state training never produced, which the layers above read anyway. The hybrid's layers (right;
# the design comes next) stay in their band at every position.
#
# <details><summary>What is asserted, and what would fail it</summary>
#
# On each seed, NoPE's largest drift over its layers is above 1.5 (measured 3.27, 2.36) and the
# hybrid's below 1.3 (1.02, 1.04). Control: the same ratio within $L$ ($L/4..L/2$ against
# $L/2..L$) is 1.01 and 1.04 for NoPE: the drift belongs to positions past $L$.
#
# </details>

# %%
nope_drift = [drift(writes["nope", s]).max().item() for s in P.seeds]
hybrid_drift = [drift(writes["hybrid", s]).max().item() for s in P.seeds]
within = [(writes["nope", s][:, L // 4:L // 2].mean(1)
           / writes["nope", s][:, L // 2:L].mean(1)).max().item() for s in P.seeds]
print("largest drift, each seed: NoPE", " / ".join(f"{v:.2f}" for v in nope_drift),
      "| hybrid", " / ".join(f"{v:.2f}" for v in hybrid_drift),
      "| control, NoPE within L", " / ".join(f"{v:.2f}" for v in within))
assert min(nope_drift) > 1.5 and max(hybrid_drift) < 1.3, (nope_drift, hybrid_drift)
assert max(within) < 1.5   # the control: no drift within L

# %% [markdown]
# ## The design: a window to count, a global layer to read
#
# So stop the layers from counting past $L$. A RoPE layer with a **sliding window** of
# $w \le L$ keys sees, at any position, the last $w$ keys at distances $0..w-1$: exactly what
# it saw in training. Windows cannot read far back, so every other layer
# is **global and NoPE**: it sees every key, has no angle to leave its range, and reads states
# that look as they did within $L$. What is left for it is distraction, which $\lambda$ fixes.
#
# Su proposed this as HWFA (*Hybrid Window-Full Attention*, kexue.fm/archives/9603): windowed
# RoPE layers under one last global NoPE layer with $\log n$ scaling. Llama 4 makes every fourth
# layer global NoPE; Cohere's Command A has three sliding-window RoPE layers per global NoPE layer
# (arXiv 2501.18795). Our four layers alternate (`minilm.experiments.layer_setting`):

# %% mystnb={"image": {"alt": "Diagram of the keys the last query sees in each of the hybrid's four layers: a row of cells per layer across key positions, the training length L dashed. The RoPE layers (1 and 3) color only a short window of the most recent keys; the NoPE layers (2 and 4) color every key, past L too."}}
hybrid_config = text["hybrid", P.seeds[0]].config
print(hybrid_config.layers)
draw_layer_keys(hybrid_config.layers, length=3 * L // 2, train_len=L)
plt.show()

# %% [markdown]
# `Config(pos=("rope", "nope", "rope", "nope"), window=8)`: `minilm.model.visible` builds the
# mask, $i - w < j \le i$, for the same attention path. Two windowed layers stacked reach
# $2(w - 1) = 14$ keys back; only the NoPE layers read further.
#
# ## On text: loss from $L$ to $16L$
#
# The hybrid is trained as [lesson 6](06_nope.ipynb) trained NoPE and RoPE (2400 steps at $L$, two seeds), and
# compared with NoPE (with and without $\log_L n$), RoPE, and RoPE with YaRN zero-shot.

# %% mystnb={"image": {"alt": "Line plot of text loss (mean of two seeds) against length over L (1 to 16, log scale) for NoPE, NoPE with log_L n, RoPE, RoPE with YaRN, the hybrid and the hybrid with log_L n. NoPE and RoPE rise steeply past L; log_L n barely lowers NoPE's curve, YaRN lowers RoPE's; both hybrids stay flat, level with RoPE in range."}}
rows = {"NoPE": ("nope", "none"), "NoPE + log_L n": ("nope", "log_L n"), "RoPE": ("rope", "none"),
        "RoPE + YaRN": ("rope", "YaRN"), "hybrid": ("hybrid", "none"),
        "hybrid + log_L n": ("hybrid", "log_L n")}
losses = {(name, seed, T): text_loss(text[pos, seed], T, fix)
          for name, (pos, fix) in rows.items() for seed in P.seeds for T in lengths}
print("loss (nats), mean of the seeds" + "".join(f"{T // L:>8}L" for T in lengths))
for name in rows:
    print(f"{name:<30}" + "".join(
        f"{sum(losses[name, s, T] for s in P.seeds) / len(P.seeds):>9.3f}" for T in lengths))

fig, ax = plt.subplots()
for (name, style) in zip(rows, ["o-", "o--", "s-", "s--", "^-", "^--"]):
    ax.plot([T // L for T in lengths],
            [sum(losses[name, s, T] for s in P.seeds) / len(P.seeds) for T in lengths], style,
            label=name)
ax.set(xscale="log", xlabel="length / L", ylabel="loss (nats), mean of 2 seeds",
       title="Text loss past the training length")
ax.set_xticks([1, 2, 4, 8, 16], ["1", "2", "4", "8", "16"])
ax.minorticks_off()
ax.legend(ncol=2)
plt.show()

# %% [markdown]
# The hybrid's loss does not rise: 1.32 at $L$ and 1.33 at $16L$ (means of two seeds), where
# NoPE reaches 3.19 and RoPE 4.30. In range it equals RoPE (1.32): the window cost nothing. Past
# $L$ its loss first *falls*, since most positions of a long window have a full window of
# context. $\log_L n$ on its NoPE layers changes little on text.
#
# <details><summary>What is asserted, and what would fail it</summary>
#
# On each seed the hybrid's loss at $16L$ is within 0.1 of its loss at $L$ (measured +0.005,
# +0.024) and more than 1 nat below NoPE with $\log_L n$ (1.52, 2.01). Control: NoPE itself
# rises 1.45 and 1.95 nats, failing the first check.
#
# </details>

# %%
for s in P.seeds:
    rise = losses["hybrid", s, 16 * L] - losses["hybrid", s, L]
    lead = losses["NoPE + log_L n", s, 16 * L] - losses["hybrid", s, 16 * L]
    nope_rise = losses["NoPE", s, 16 * L] - losses["NoPE", s, L]
    print(f"seed {s}: hybrid 16L - L {rise:+.3f}; NoPE + log_L n minus hybrid at 16L {lead:.2f}; "
          f"control, NoPE 16L - L {nope_rise:+.2f}")
    assert abs(rise) < 0.1 and lead > 1.0
    assert nope_rise > 0.1   # the control fails the first check

# %% [markdown]
# ## On retrieval: exact match from $L$ to $16L$
#
# The same layout, trained on [lesson 9](09_fix_isolated.ipynb)'s task with its recipe (1000 steps, five seeds). Every
# seed must first learn the task in range, or an average would hide which seeds did.

# %% mystnb={"image": {"alt": "Exact match against length over L (1 to 16, log scale) for the same six models on the retrieval task, mean of five seeds with 90% intervals. All retrieve in range; plain NoPE and RoPE fall to near zero past L, log_L n and YaRN keep part of it; both hybrids stay near the top out to 16L."}}
table = {"NoPE": ("nope", "none"), "NoPE + log_L n": ("nope", "log_L n"), "RoPE": ("rope", "none"),
         "RoPE + YaRN": ("rope", "YaRN"), "hybrid": ("hybrid", "none"),
         "hybrid + log_L n": ("hybrid", "log_L n")}
print("exact match, mean over seeds [90% interval]" + "".join(f"{T // L:>17}L" for T in lengths))
for name, (pos, fix) in table.items():
    print(f"{name:<17}" + "".join(
        f"{over_seeds([found[pos, fix, s, T] for s in SEEDS], each=False, proportion=True):>18}"
        for T in lengths))
print("hybrid, each seed at L: " + " ".join(f"{found['hybrid', 'none', s, L]:.2f}" for s in SEEDS))

fig, ax = plt.subplots()
ratios = [T // L for T in lengths]
for k, (name, style) in enumerate(zip(table, ["o-", "o--", "s-", "s--", "^-", "^--"])):
    pos, fix = table[name]
    intervals = [seed_interval([found[pos, fix, s, T] for s in SEEDS]) for T in lengths]
    interval_bars(ax, [r * 1.04 ** (k - 2.5) for r in ratios],   # side by side, none hidden
                  [(m, max(lo, 0), min(hi, 1)) for m, lo, hi in intervals], fmt=style, label=name)
ax.set(xscale="log", xlabel="length / L", ylabel="exact match (5 seeds, 90% interval)",
       title="Retrieval past the training length", ylim=(-0.02, 1.05))
ax.set_xticks(ratios, [str(r) for r in ratios])
ax.minorticks_off()
ax.legend(ncol=2, loc="lower left")
plt.show()

# %% [markdown]
# Every hybrid seed learns the task, and keeps it: at $16L$ it reads the key back 0.94 of the
# time, 0.98 with $\log_L n$ on its NoPE layers, where NoPE keeps 0.01 (0.64 with $\log_L n$),
# RoPE 0.01 and RoPE with YaRN 0.55. (Plain NoPE and RoPE are [lesson 9](09_fix_isolated.ipynb)'s models; lesson 9
# was last built on another machine, so its numbers differ a little.)
#
# <details><summary>What is asserted, and what would fail it</summary>
#
# Each hybrid seed is above 0.8 at $L$ (it learned the task). At $16L$ the hybrid with
# $\log_L n$ has its interval above 0.8, which NoPE with $\log_L n$ fails (lower end 0.39). The
# hybrid's lead over plain NoPE at $16L$, paired by seed, has its interval above 0.5; the same
# lead at $L$, the control, is near 0.
#
# </details>

# %%
assert all(found["hybrid", "none", s, L] > 0.8 for s in SEEDS)
hybrid_16 = seed_interval([found["hybrid", "log_L n", s, 16 * L] for s in SEEDS])
nope_16 = seed_interval([found["nope", "log_L n", s, 16 * L] for s in SEEDS])
lead = {T: seed_interval([found["hybrid", "none", s, T] - found["nope", "none", s, T]
                         for s in SEEDS])
        for T in (L, 16 * L)}
print("at 16L with log_L n: hybrid {:.2f} [{:.2f}, {:.2f}], NoPE {:.2f} [{:.2f}, {:.2f}]".format(
    *hybrid_16, *nope_16))
print("hybrid minus NoPE, no rule: at 16L {:.2f} [{:.2f}, {:.2f}]; "
      "at L {:.2f} [{:.2f}, {:.2f}]".format(*lead[16 * L], *lead[L]))
assert hybrid_16[1] > 0.8 and lead[16 * L][1] > 0.5

# %% [markdown]
# ## Takeaways
#
# - NoPE fails past $L$ in two ways. Distraction a multiplier repairs (two thirds of the lost
#   retrieval at $8L$); counts never seen it cannot: its layers' states leave the band of
#   training, and on text it takes back only about a fifth of the excess loss.
# - A sliding window of $w \le L$ keys keeps the RoPE layers inside what they saw in training at
#   any length; global NoPE layers between the windows read far back. This hybrid kept its text
#   loss flat and its retrieval near perfect to $16L$, at no cost in range.
# - It is production's design (Su's HWFA, Llama 4, Command A); $\log n$ on its global layers
#   handles what is left: distraction.
#
# ## Check your understanding
#
# 1. A multiplier gave back most of the lost retrieval at $8L$ but a fifth of the excess text
#    loss. What is different about the two tasks?
#
#    <details><summary>Answer</summary>
#
#    Retrieval fails through one quantity, the needle's share of one softmax row, which a larger
#    $\lambda$ restores ([lesson 10](10_why_it_works.ipynb)). Text prediction uses every layer's state at every position, and
#    past $L$ those states are new to the layers that read them (the drift of this lesson's probe):
#    no multiplier on the logits brings them back into range.
#
#    </details>
#
# 2. A model with a window of 8 keys on all four layers keeps its loss flat too. Why is it
#    not the answer?
#
#    <details><summary>Answer</summary>
#
#    It cannot read anything more than $4 \times 7 = 28$ keys back: at $16L$ a needle at depth 0 is
#    about 500 keys back. Its flat loss is a model that has given up long context. The global layers
#    are what make the hybrid a long-context model.
#
#    </details>
#
# 3. Why do the hybrid's windowed layers show no drift, when a window is still causal?
#
#    <details><summary>Answer</summary>
#
#    A window counts up to $w$ and no further: at every position past $w$ a query averages over
#    exactly $w$ keys, as at position $w$ in training, so whatever the layer "knows" of position
#    stops growing.
#
#    </details>
#
# ## Exercise
#
# [exercise 13](../exercises/13_design_that_holds.ipynb): the sliding-window causal mask from
# scratch, and how
# far back a stack of windows reaches, checked against `minilm`.
#
# Next, [lesson 14](14_the_answer.ipynb): how large a window may be, and the answer to the course's question in one
# place.
