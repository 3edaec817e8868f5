# %% [markdown]
# # Lesson 8 — One idea everywhere: logits × (1 + c ln s)
#
# **What you will learn**
# - that the length rules of this course, and of several production models, are one idea:
#   multiply the attention logits by a factor that grows like the log of the length;
# - how they differ (the constant $c$, where they switch on, whether they are learned);
# - how a model that *learns* its own per-head $s \cdot \log n$ factor from the start
#   (Scalable-Softmax style) extrapolates, next to the fixed rules and head-based scaling;
# - the course in one table.
#
# **Why the same shape keeps appearing.** Lesson 5 derived it: attention entropy grows like
# $\log n$ when a row spreads over more keys, and a temperature $\lambda$ lowers entropy about
# in proportion to $\lambda$. Holding entropy needs $\lambda$ to grow like $\log n$. Writing
# $s = n / L$ for the ratio to the training length, $\log_L n = 1 + \ln s / \ln L$: every rule
# below is $1 + c \ln s$ for some $c$, or close to it.

# %%
import math

import matplotlib.pyplot as plt
import torch

import minilm
from minilm.profiles import long_recipe, long_transformer
from minilm.scaling import mean_loss, train_head_scales, uniform_temperature_search

P = minilm.profile()
corpus = minilm.default_corpus()
tok = corpus.tokenizer
L = P.nope_len
print(f"profile {P.name}: NoPE Transformers d{P.d_model} x {P.nope_layers} x {P.n_head} heads at L = {L}, "
      f"{P.long_steps} steps, seeds {P.seeds}")

# %% [markdown]
# ## The rules, side by side
#
# | rule | multiplier on the logits | $c$ |
# |---|---|---|
# | Su, entropy invariance (2022) | $\log_{L} n$, $L = 512$ | $1/\ln 512 \approx 0.16$ |
# | Wang et al., NoPE uniform scale (2024) | $1 + 0.397 \ln s$ (fitted) | 0.397 |
# | Qwen-7B "logn attention" | $\log_{2048} n$, only past 2048 | $1/\ln 2048 \approx 0.13$ |
# | Llama 4, NoPE layers | $1 + 0.1 \ln(1 + \lfloor (pos+1)/8192 \rfloor)$ | 0.1, in steps |
# | YaRN (2023) | $(0.1 \ln s + 1)^2 \approx 1 + 0.2 \ln s$ | about 0.2 |
# | Scalable-Softmax (2025) | $s_h \log n$, $s_h$ learned per head | learned |
#
# Su's and Qwen's rule are "keep entropy constant" with the model's training length as
# base. The NoPE fit is measured: the best uniform temperature at each length. Llama 4
# applies a gentle stepped version in its position-free layers. YaRN multiplies the logits
# as part of its RoPE stretch. Scalable-Softmax lets every head learn its own slope.

# %%
s = torch.linspace(1, 16, 300)
rules = {
    "Su, log_512 n": 1 + s.log() / math.log(512),
    "NoPE fit, 1 + 0.397 ln s": 1 + 0.397 * s.log(),
    "Qwen logn, log_2048 n": 1 + s.log() / math.log(2048),
    "Llama 4 NoPE layers": 1 + 0.1 * torch.log1p(torch.floor(s)),
    "YaRN, (0.1 ln s + 1)^2": (0.1 * s.log() + 1) ** 2,
}
fig, ax = plt.subplots(figsize=(7, 4), dpi=90)
for label, value in rules.items():
    ax.plot(s, value, label=label)
ax.set(xlabel="s = length / training length", ylabel="multiplier on the logits", xscale="log",
       xticks=[1, 2, 4, 8, 16], xticklabels=[1, 2, 4, 8, 16], title="Every length rule is about 1 + c ln s")
ax.minorticks_off()
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# ## Learning the factor: a Scalable-Softmax-style model
#
# In `minilm` this needs no new code. `logn_base=L` multiplies row $i$'s logits by
# $\log n_i / \log L$, and `learn_temperature=True` trains `model.temperature` (one value per
# layer and head) with everything else, so each head's logits are multiplied by
# $t_h \log n_i / \log L = s_h \log n_i$ with a learned $s_h = t_h / \log L$. In a causal model
# every training sequence contains rows with $n_i = 1 \dots L$, so the factor varies in
# training and the model learns to use it. We train it from scratch exactly like lesson 6's
# NoPE model (same steps, data, seeds).

# %%
def nope(**extra):
    return long_transformer(P, tok.vocab_size, "nope", **extra)   # lesson 6's NoPE (minilm.profiles)


recipe = {seed: long_recipe(P, seed) for seed in P.seeds}
plain = {seed: minilm.pretrained(nope(), recipe[seed])[0] for seed in P.seeds}
learned = {seed: minilm.pretrained(nope(logn_base=L, learn_temperature=True), recipe[seed])[0] for seed in P.seeds}
for seed in P.seeds:
    slopes = learned[seed].temperature.detach() / math.log(L)
    print(f"seed {seed}: learned s_h per layer (rows) and head:\n{slopes.numpy().round(3)}")

# %% [markdown]
# ## Extrapolation: fixed rules, searched temperatures, learned factor
#
# All on the same NoPE architecture, at 1x to 8x the training length (mean loss over all
# positions, 2 seeds):
# - **plain**: no factor;
# - **Su's rule at evaluation**: `logn_base=L` on the plain model;
# - **NoPE fit**: a uniform $\lambda = 1 + 0.397 \ln s$ for each length;
# - **best uniform**: the best $\lambda$ from a grid, per length (lesson 7);
# - **head scaling**: lesson 7's per-head temperatures, trained at $4L$;
# - **learned $s_h \log n$**: the model above, as trained.

# %%
lengths = [L, 2 * L, 4 * L, 8 * L]
grid = [round(1 + 0.1 * i, 1) for i in range(11)]
results = {}
for seed in P.seeds:
    model = plain[seed]
    results["plain", seed] = {T: mean_loss(model, corpus, T) for T in lengths}
    results["Su's rule at evaluation", seed] = {T: mean_loss(model, corpus, T, logn_base=L) for T in lengths}
    fit, searched = {}, {}
    for T in lengths:
        lam = 1 + 0.397 * math.log(T / L)
        fit[T] = uniform_temperature_search(model, corpus, T, [lam])[lam]
        searched[T] = min(uniform_temperature_search(model, corpus, T, grid).values()) if T > L else results["plain", seed][T]
    results["NoPE fit, 1 + 0.397 ln s", seed] = fit
    results["best uniform lambda", seed] = searched
    best_4x = min(grid, key=uniform_temperature_search(model, corpus, 4 * L, grid).get)
    scaled = minilm.pretrained(nope(), recipe[seed], progress=False)[0]
    train_head_scales(scaled, corpus, length=4 * L, start=best_4x, seed=100 + seed)
    results["head scaling (trained at 4L)", seed] = {T: mean_loss(scaled, corpus, T) for T in lengths}
    results["learned s_h log n (from scratch)", seed] = {T: mean_loss(learned[seed], corpus, T) for T in lengths}

methods = list(dict.fromkeys(label for label, _ in results))
print(f"{'loss (nats), seeds ' + '/'.join(map(str, P.seeds)):<36}" + "".join(f"{f'{T // L}x':>14}" for T in lengths))
for label in methods:
    print(f"{label:<36}" + "".join(f"{'/'.join(f'{results[label, s][T]:.3f}' for s in P.seeds):>14}" for T in lengths))

# %%
fig, ax = plt.subplots(figsize=(7.5, 4), dpi=90)
for label in methods:
    mean = [sum(results[label, s][T] for s in P.seeds) / len(P.seeds) for T in lengths]
    ax.plot([T // L for T in lengths], mean, "o-", label=label)
ax.set(xscale="log", xticks=[1, 2, 4, 8], xticklabels=["1x", "2x", "4x", "8x"], xlabel="evaluation length / L",
       ylabel="loss (nats, mean of seeds)", title="NoPE past its training length: one idea, six ways")
ax.minorticks_off()
ax.legend(fontsize=8)
plt.show()

# %% [markdown]
# What we measured, asserted below on every seed:
# - **The paper's fit transfers.** $\lambda = 1 + 0.397 \ln s$, fitted on a 1B-parameter model,
#   is within 0.02 nats of the best $\lambda$ from our grid at 2x, 4x and 8x.
# - **Head scaling is the best at its target length** ($4L$) of all six.
# - **Su's rule applied to a model trained without it** hurts in range: the first rows of a
#   causal model see few keys, and $\log n_i / \log L < 1$ flattens their attention.
# - **The learned factor** (trained with it from scratch) is *better in range* than plain
#   NoPE, and *worse at 4x* on both seeds. In this form the factor's growth past $L$ is fixed
#   at $1 + \ln s / \ln L$ ($c = 1/\ln 32 \approx 0.29$ here); each head learns only its level.
#   That is less sharpening than the best uniform $\lambda$ wants ($c \approx 0.4$), and the model
#   never saw $n_i > L$ in training to learn otherwise. Scalable-Softmax was introduced for
#   models trained on long contexts; at $L = 32$ we see its in-range benefit, not its
#   extrapolation benefit.

# %%
for seed in P.seeds:
    r = {label: results[label, seed] for label in methods}
    for T in lengths[1:]:
        assert abs(r["NoPE fit, 1 + 0.397 ln s"][T] - r["best uniform lambda"][T]) < 0.02, (seed, T)
    assert r["head scaling (trained at 4L)"][4 * L] == min(r[label][4 * L] for label in methods), seed
    assert r["Su's rule at evaluation"][L] > r["plain"][L], seed
    assert r["learned s_h log n (from scratch)"][L] < r["plain"][L], seed
    assert r["learned s_h log n (from scratch)"][4 * L] > r["plain"][4 * L], seed

# %% [markdown]
# ## The course in one table
#
# Every number below was measured by a lesson of this course in the CPU profile, and is
# asserted in that lesson's cells (so CI fails if it stops holding).
#
# | lesson | claim (source) | the source's number | ours (2 seeds) |
# |---|---|---|---|
# | 1 | single-head relu² GAU as good as a Transformer (FLASH) | "as good or better" | GAU 0.06-0.07 nats lower, 17% more parameters |
# | 2 | keep n fixed, not n = length (Su) | fixed "significantly better" after fine-tuning | zero-shot 11-16 points better; after 50 steps 0.05-0.08 nats; after 300 steps under 0.01 |
# | 3 | $Z_i$ is $O(k)$, not $O(n)$ (Su) | argued | growth exponent 0.05-0.17 trained, about 1 untrained |
# | 4 | three fixes, softmax about equal (Su, FLASH) | "basically identical" | every fix 11-28 points above no fix at $L/8$-$L/4$; softmax and relu² within 0.1 nats |
# | 5 | entropy invariance helps extrapolation (Su) | +4.6 to +11 points at 2x-4x | about +0 at 2x, +1.2 to +1.9 at 4x-8x; entropy held nearly flat |
# | 6 | NoPE extends further than RoPE (Wang et al.) | +20% vs +10% | +12.5% vs +0%; NoPE degrades far more gently |
# | 6 | failure goes with attention distraction | entropy grows with length | entropy rises in every layer; correlation with loss 0.9 |
# | 7 | uniform $\lambda$, $c = 0.397$ | 1.2 / 1.5 / 1.8 at 2x/4x/8x | 1.2 / 1.5-1.7 / 1.9, $c$ within 0.15 |
# | 7 | head scaling beats uniform; clamp and init matter | passkey 81 vs 53 / 26 | head scaling better at its target; clamp and init made no difference |
# | 8 | one rule, $1 + c \ln s$, everywhere | $c$ = 0.1 to 0.4 across papers and models | the NoPE fit is within 0.02 nats of the searched optimum; a learned $s_h \log n$ helps in range, not at 4x |

# %% [markdown]
# ## Check your understanding
#
# 1. Show that $\log_L n = 1 + \ln s / \ln L$. What is $c$ for $L = 32$, our training length?
#    Is that larger or smaller than the NoPE fit, and what does the difference mean?
# 2. Su's rule at evaluation multiplies the first rows of a causal model by less than 1.
#    How does the learned model avoid being hurt by that?
# 3. Llama 4 applies its factor in steps of 8192 tokens. Why might a step function be
#    preferable to a smooth $\log$ in a production model?
# 4. YaRN's factor is about $1 + 0.2 \ln s$, half the NoPE fit. Why might a RoPE model need
#    less sharpening than a NoPE model?
# 5. Which of the six methods in the plot need no training at the new length? Which need
#    any training at all?
#
# **Exercise:** `exercises/08_one_idea.ipynb` — implement each rule's multiplier and a
# learned per-head log n factor, and check them against `minilm`.
