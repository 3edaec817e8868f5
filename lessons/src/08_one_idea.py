# %% [markdown]
# # Lesson 8 — One idea everywhere: logits × (1 + c ln s)
#
# **Model and length.** [Lesson 6](06_nope.ipynb)'s causal NoPE Transformers (d64, 4 layers, 4 heads; text,
# $L = 32$, 2400 steps), and the same trained with a learned per-head factor; seeds 0 and 1.
#
# **Time.** About 15 minutes to read; about 3 minutes to run on 2 CPU cores, with the models of the
# lessons before it cached.
#
# **Which failure, which fix.** Distraction (lesson 6): past $L$ a row spreads over more keys.
# Every length rule in use, Su's $\log_L n$ included, fixes it one way: the logits times about
# $\lambda = 1 + c \ln s$.
#
# *Numbers in the text are the stored run's; yours will differ a little
# ([how the course checks itself](checking.md)).*
#
# [Notation](README.md#notation) · [sources](README.md#sources) ·
# [exercise 8](../exercises/08_one_idea.ipynb)

# %% [markdown]
# **Why the same shape.** A row's entropy grows like $\ln n$ as it spreads over more keys (lesson
# 5), and multiplying the logits by $\lambda$ lowers it about in proportion. Holding the entropy
# then needs $\lambda$ to grow like $\ln n$: a convention that works, not a law (Gaussian scores
# give $\sqrt{\ln n}$). With $s = n / L$, $\log_L n = 1 + \ln s / \ln L$.

# %%
import math

import matplotlib.pyplot as plt
import torch

import minilm
from minilm import at_lambda, train_head_scales, uniform_multiplier_search
from minilm.experiments import nope_rope_recipe, nope_rope_transformer
from minilm.plots import course_style
from minilm.scaling import NOPE_FIT_C, mean_loss

course_style()

P = minilm.profile()
corpus = minilm.default_corpus()
tok = corpus.tokenizer
L = P.nope_rope_len
print(f"profile {P.name}: NoPE Transformers d{P.d_model} x {P.nope_rope_layers} x {P.n_head} heads "
      f"at L = {L}, {P.nope_rope_steps} steps, seeds {P.seeds}")

# %% [markdown]
# ## The rules, side by side
#
# | rule | multiplier on the logits | $c$ |
# |---|---|---|
# | Su, entropy invariance | $\log_L n$, $L = 512$ | $1/\ln 512 \approx 0.16$ |
# | NoPE fit (Wang et al. 2024) | $1 + 0.397 \ln(i/L)$ at position $i$ | 0.397 |
# | Qwen-7B "logn attention" | $\log_N n$ past $N = 2048$ | $1/\ln 2048 \approx 0.13$ |
# | Llama 4, NoPE layers | $1 + 0.1 \ln(1 + \lfloor (pos+1)/8192 \rfloor)$ | 0.1, in steps |
# | YaRN (Peng et al. 2023) | $(0.1 \ln s + 1)^2 \approx 1 + 0.2 \ln s$ | about 0.2 |
# | Scalable-Softmax (Nakanishi 2025) | $c_h \ln n$, learned per head | learned |
#
# Scalable-Softmax's slope $c_h$ is what its paper calls $s$.
#
# <details><summary>Where the rules come from, and Llama 4's curve in the plot</summary>
#
# Su: his 2021 post on entropy invariance (kexue.fm/archives/8823), used again in the 2022 post
# with $L = 512$, the training length. The NoPE fit is measured (the best $\lambda$ per position),
# in the paper's code, AntNLP/nope_head_scale. Qwen-7B: its `modeling_qwen.py`, at inference only;
# $N$ is the config's `seq_length`, 2048 in the first release and 8192 now
# ($1/\ln 8192 \approx 0.11$). Llama 4: its reference code, config `floor_scale` = 8192 and
# `attn_scale` = 0.1, in its position-free layers. YaRN multiplies each query and key by
# $0.1 \ln s + 1$, as part of its RoPE stretch. Scalable-Softmax: arXiv 2501.19399.
#
# Llama 4's 8192 is a constant of its rule, not a training length, so its curve is not a function
# of $s$: it is 1 up to position 8190 and already $1 + 0.1 \ln 2 \approx 1.069$ at $pos + 1 = 8192$.
# The plot gives it its own panel, against the position.
#
# </details>

# %% mystnb={"image": {"alt": "Left: the multiplier on the logits against s = length over training length (1 to 16, log scale) for Su's log_512 n, the NoPE fit 1 + c ln s, Qwen's logn and YaRN: each starts at 1 and grows like 1 + c ln s, each with its own c. Right: Llama 4's rule against the position, 1 up to 8192 tokens, then rising in steps."}}
s = torch.linspace(1, 16, 300)

def rule(name, scale=1):
    return torch.tensor([minilm.length_rule(name, v * scale, scale) for v in s.tolist()])


rules = {
    "Su, log_512 n": rule("su", 512),
    f"NoPE fit, 1 + {NOPE_FIT_C} ln s": rule("nope_fit"),
    "Qwen logn, log_2048 n (first release)": rule("qwen", 2048),
    "YaRN, (0.1 ln s + 1)^2": rule("yarn"),
}
fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), gridspec_kw={"width_ratios": [3, 2]})
for (label, value), style in zip(rules.items(), ["-", "-", "--", ":"]):
    axes[0].plot(s, value, style, label=label)
axes[0].set(xlabel="s = length / training length", ylabel="multiplier on the logits",
            xscale="log", xticks=[1, 2, 4, 8, 16], xticklabels=[1, 2, 4, 8, 16],
            title="Every length rule is about 1 + c ln s")
axes[0].legend()
# Llama 4's rule is a function of the position alone, with no training length in it
positions = torch.logspace(0, math.log10(16 * 8192), 400)       # pos + 1, in tokens
axes[1].plot(positions, 1 + 0.1 * torch.log1p(torch.floor(positions / 8192)), color="tab:red",
             label="1 + 0.1 ln(1 + floor((pos+1) / 8192))")
axes[1].set(xlabel="position pos + 1 (tokens)", xscale="log", ylim=axes[0].get_ylim(),
            title="Llama 4's NoPE layers: a rule of the position")
axes[1].legend(loc="upper left")
for ax in axes:
    ax.minorticks_off()
plt.show()

# %% [markdown]
# ## Learning the factor: a Scalable-Softmax-style model
#
# `logn_base=L` multiplies row $i$'s logits by $\log_L n_i$; `learn_multiplier=True` trains
# `model.multiplier` ($t_h$, per layer and head) with everything else. Each head's logits are then
# multiplied by $c_h \ln n_i$, with a learned $c_h = t_h / \ln L$. Causal training rows see
# $n_i = 1 \dots L$ keys, so the model learns to use the factor. Steps, data and seeds are lesson
# 6's.

# %%
def nope(**extra):
    # lesson 6's NoPE (minilm.experiments)
    return nope_rope_transformer(P, tok.vocab_size, "nope", **extra)


recipe = {seed: nope_rope_recipe(P, seed) for seed in P.seeds}
configs = (("plain", nope()), ("learned", nope(logn_base=L, learn_multiplier=True)))
trained = minilm.pretrained_many({(kind, seed): (config, recipe[seed]) for seed in P.seeds
                                  for kind, config in configs})
plain = {seed: trained["plain", seed][0] for seed in P.seeds}
learned = {seed: trained["learned", seed][0] for seed in P.seeds}
for seed in P.seeds:
    slopes = learned[seed].multiplier.detach().cpu() / math.log(L)
    print(f"seed {seed}: learned c_h per layer (rows) and head:\n{slopes.numpy().round(3)}")

# %% [markdown]
# ## Extrapolation: fixed rules, searched $\lambda$, learned factor
#
# Mean loss over all positions, at 1x to 8x:
# - **plain**: no factor;
# - **Su's rule at evaluation**: `logn_base=L` on the plain model;
# - **NoPE fit**: the paper's rule at the last position: $\lambda = 1 + 0.397 \ln s$;
# - **best uniform**: the best $\lambda$ of a grid, per length ([lesson 7](07_temperature.ipynb));
# - **head scaling**: lesson 7's, trained at $4L$;
# - **learned $c_h \ln n$**: the model above.

# %%
lengths = [L, 2 * L, 4 * L, 8 * L]
grid = [round(1 + 0.1 * i, 1) for i in range(11)]
results = {}
for seed in P.seeds:
    model = plain[seed]
    results["plain", seed] = {T: mean_loss(model, corpus, T) for T in lengths}
    results["Su's rule at evaluation", seed] = {
        T: mean_loss(model, corpus, T, logn_base=L) for T in lengths}
    fit, searched, chosen = {}, {}, {}
    for T in lengths:
        lam = minilm.length_rule("nope_fit", T, L)
        with at_lambda(model, lam):
            fit[T] = mean_loss(model, corpus, T)
        # chosen on the search batches, scored on the evaluation batches like every other row
        search = uniform_multiplier_search(model, corpus, T, grid)
        chosen[T] = min(grid, key=search.get)
        with at_lambda(model, chosen[T]):
            searched[T] = mean_loss(model, corpus, T)
    results["NoPE fit, 1 + 0.397 ln s", seed] = fit
    results["best uniform lambda", seed] = searched
    best_4x = chosen[4 * L]
    scaled = minilm.pretrained(nope(), recipe[seed], progress=False)[0]
    train_head_scales(scaled, corpus, length=4 * L, start=best_4x, seed=100 + seed)
    results["head scaling (trained at 4L)", seed] = {
        T: mean_loss(scaled, corpus, T) for T in lengths}
    results["learned c_h ln n (from scratch)", seed] = {
        T: mean_loss(learned[seed], corpus, T) for T in lengths}

methods = list(dict.fromkeys(label for label, _ in results))
print(f"{'loss (nats), seeds ' + '/'.join(map(str, P.seeds)):<36}"
      + "".join(f"{f'{T // L}x':>14}" for T in lengths))
for label in methods:
    print(f"{label:<36}" + "".join(
        f"{'/'.join(f'{results[label, s][T]:.3f}' for s in P.seeds):>14}" for T in lengths))

# %% mystnb={"image": {"alt": "Line plot of NoPE's loss (mean of seeds) against evaluation length (1x to 8x L) for six ways to apply the factor: plain, Su's rule at evaluation, the NoPE fit, the best uniform lambda, head scaling trained at 4L, a learned c_h ln n. Plain rises most; the NoPE fit lies on the best lambda; head scaling is lowest at 4L."}}
fig, ax = plt.subplots()
markers = ["o-", "s--", "^-", "v:", "D-", "x--"]
for label, marker in zip(methods, markers):
    mean = [sum(results[label, s][T] for s in P.seeds) / len(P.seeds) for T in lengths]
    # the NoPE fit lies within 0.04 nats of the best uniform lambda: drawn wide and pale
    # underneath, so that the best lambda's dotted line does not hide it
    wide = dict(lw=5, ms=9, alpha=0.5, zorder=1) if label.startswith("NoPE fit") else {}
    ax.plot([T // L for T in lengths], mean, marker, label=label, **wide)
ax.set(xscale="log", xticks=[1, 2, 4, 8], xticklabels=["1x", "2x", "4x", "8x"],
       xlabel="evaluation length / L", ylabel="loss (nats, mean of seeds)",
       title="NoPE past its training length: one idea, six ways")
ax.minorticks_off()
ax.legend()
plt.show()

# %% [markdown]
# - **The paper's slope works here per length:** one $\lambda = 1 + 0.397 \ln s$ per length is
#   within 0.005 nats of our best $\lambda$ at 4x-8x (per position, [lesson 12](12_distraction.ipynb) finds a steeper one).
# - **Head scaling is the best of the six at its target length** $4L$.
# - **Su's rule hurts a model trained without it** in range (by 0.04 and 0.09 nats): early rows
#   see few keys, and $\log_L n_i < 1$ flattens them.

# %% [markdown]
# **The learned factor showed no gain two seeds resolve**, and stays 0.165 and 0.263 nats behind
# a searched $\lambda$ at 4x. Its growth past $L$ is fixed at $c = 1/\ln 32 \approx 0.29$ (each
# head learns only its level, $c_h$ 0.21 to 0.45), less than the best $\lambda$ wants (0.407,
# [lesson 7](07_temperature.ipynb)). Scalable-Softmax was made for long training contexts, not $L = 32$.
#
# <details><summary>What the assert checks</summary>
#
# On every seed: at 4x and 8x the NoPE rule is within 0.04 nats of the best $\lambda$ (at most
# 0.005; $\lambda = 1$, 0.10-0.34 away, fails); head scaling has the lowest loss at $4L$ (control:
# its own start, which ties); Su's rule raises the in-range loss by over 0.01 nats (0.04, 0.09;
# control: the model without it).
#
# </details>
#
# <details><summary>What two seeds cannot resolve</summary>
#
# Printed, not asserted: the learned factor minus plain NoPE is $-0.016$ and $-0.043$ nats in
# range, $+0.067$ and $+0.065$ at 4x, $+0.230$ and $-0.040$ at 8x; two seeds of plain NoPE differ
# by 0.049 nats in range and 0.155 at 4x. At 2x the NoPE rule ties the best $\lambda$, but there
# even $\lambda = 1$ is only 0.02 and 0.04 nats from it, so that is not asserted. Head scaling's
# lead over the best uniform $\lambda$ and the NoPE rule is 0.035-0.077 nats, over the others 0.13
# or more. Su's effect is only a direction: the seeds differ by as much as the smaller effect.
#
# </details>

# %%
for seed in P.seeds:
    r = {label: results[label, seed] for label in methods}
    learned_minus_plain = {T: r["learned c_h ln n (from scratch)"][T] - r["plain"][T]
                           for T in lengths}
    print(f"seed {seed}: learned c_h ln n minus plain NoPE: "
          + "  ".join(f"{T // L}x {v:+.3f}" for T, v in learned_minus_plain.items()))
    # a bound; control: lambda = 1 (plain), 0.10-0.34 nats from the best
    for T in (4 * L, 8 * L):
        assert abs(r["NoPE fit, 1 + 0.397 ln s"][T] - r["best uniform lambda"][T]) < 0.04, (seed, T)
    # control: its own start
    others = [label for label in methods if label != "head scaling (trained at 4L)"]
    assert r["head scaling (trained at 4L)"][4 * L] < min(r[label][4 * L] for label in others), seed
    assert r["Su's rule at evaluation"][L] > r["plain"][L] + 0.01, seed   # control: plain itself, 0

# %% [markdown]
# ## Takeaways
#
# - Every length rule in use multiplies the logits by about $1 + c \ln s$: Su's $c = 1/\ln L$,
#   Qwen's about 0.13, YaRN's about 0.2, the NoPE fit's 0.397, Llama 4's stepped 0.1.
# - On [lesson 6](06_nope.ipynb)'s NoPE model, the NoPE rule used per length matches a searched $\lambda$, head
#   scaling is the best at $4L$, and Su's rule hurts a model trained without it in range.
# - A learned per-head $c_h \ln n$ (Scalable-Softmax style) showed no difference from plain NoPE
#   that two seeds can resolve.

# %% [markdown]
# ## Check your understanding
#
# 1. Show that $\log_L n = 1 + \ln s / \ln L$. What is $c$ for $L = 32$, against the NoPE fit?
#
#    <details><summary>Answer</summary>
#
#    $\log_L n = \ln n/\ln L = \ln(sL)/\ln L = (\ln s + \ln L)/\ln L = 1 + \ln s/\ln L$, so
#    $c = 1/\ln L$; for $L = 32$, $c = 1/\ln 32 \approx 0.29$. That is smaller than the NoPE fit
#    (0.397) and [lesson 7](07_temperature.ipynb)'s per-length fit (0.407): Su's rule sharpens less than this NoPE model
#    wants for its text loss (at 8x it gives $1 + 0.29 \ln 8 \approx 1.60$, where the best
#    $\lambda$ was 1.8-1.9). And because $c = 1/\ln L$, the longer the training length, the gentler
#    Su's rule.
#
#    </details>
#
# 2. Su's rule multiplies a causal model's first rows by less than 1. Why does that not hurt the
#    learned model?
#
#    <details><summary>Answer</summary>
#
#    It was trained with the factor on. Every training sequence has rows with $n_i = 1 \dots L$, so
#    its weights (and its $t_h$) learned to give those early rows the sharpness they need *under*
#    the factor; nothing about them is new at evaluation. In range it was 0.016 and 0.043 nats
#    below plain NoPE, where Su's rule applied to a model trained without it was 0.04 and 0.09
#    above.
#
#    </details>
#
# 3. Why might Llama 4's steps of 8192 tokens be preferable to a smooth $\ln$ in production?
#
#    <details><summary>Answer</summary>
#
#    Possible reasons (Llama 4's code does not say, and we did not measure): the factor is exactly
#    1 for every position below 8192, so the model's behaviour at short contexts, most of its
#    training and use, is untouched; it changes rarely, so all queries within a block of 8192
#    positions use the same scale and behave alike; and it is cheap and easy to reason about (an
#    integer division and a lookup).
#
#    </details>
#
# 4. YaRN's $c$ is about half the NoPE fit's. Why might RoPE need less sharpening than NoPE?
#
#    <details><summary>Answer</summary>
#
#    A RoPE model's failure past $L$ is mostly unseen rotations, not distraction (lessons [5](05_entropy_invariance.ipynb) and [9](09_fix_isolated.ipynb):
#    a multiplier $\lambda$ does little for RoPE), and YaRN first remaps the frequencies so that
#    distances stay in the range the model knows. RoPE also has a distance decay ([lesson 3](03_why_normaliser.ipynb)) that
#    damps far keys, so a RoPE row's normaliser grows less with length. A NoPE row has no such
#    decay: every added key competes like a near one, so it needs more sharpening.
#
#    </details>
#
# 5. Which of the six methods need no training at the new length? Which need more than ordinary
#    pretraining?
#
#    <details><summary>Answer</summary>
#
#    No training at the new length: plain, Su's rule at evaluation, the NoPE fit, and the learned
#    $c_h \ln n$ (trained only at $L$). The best uniform $\lambda$ needs no gradient step but a
#    search on data at the new length. Training beyond ordinary pretraining: head scaling (16
#    numbers at $4L$) and the learned $c_h \ln n$ (pretrained from scratch with its factor).
#
#    </details>
#
# **Exercise:** [exercise 8](../exercises/08_one_idea.ipynb) — implement each rule's multiplier and
# a learned
# per-head log n factor, and check them against `minilm`.
#
# Next, [lesson 9](09_fix_isolated.ipynb): retrieval, where distraction is the only way to fail.
