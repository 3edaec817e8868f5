# %% [markdown]
# # Lesson 10 — Why retrieval is lost, and what head scaling needs
#
# **What you will learn**
# - whether *attention distraction* explains lesson 9's losses: how much of the question's
#   attention lands on the needle as the haystack grows, and what a temperature does to it;
# - when head-based scaling needs its clamp and its starting value;
# - how the paper's numbers are measured: the per-position fit of its code, and extension
#   ratios with error bars.
#
# **The source.** Wang et al. (2024) explain NoPE's failure past the training length by
# *distraction*: the attention of a long row spreads over ever more keys, its entropy grows,
# and a temperature on the logits sharpens it again. Their head-based scaling learns one
# temperature per head; in their ablations, without its clamp at $\lambda \ge 1$ or without
# its start at the searched uniform value, passkey accuracy fell from 81 to 53 and to 26.
#
# We take lesson 9's NoPE models as they are: lesson 6's NoPE Transformers after 1000 steps
# of the retrieval mixture (the cache returns them if lesson 9 ran), the same prompts, the same
# temperature search and the same head scaling (`minilm.best_uniform_for_retrieval`,
# `minilm.retrieval_head_scaled`), so every number below that lesson 9 also printed is the
# same number. Distraction and the ablations use the retrieval-trained NoPE models; the
# per-position fit and the extension ratios go back to lesson 6's text-only models, where the
# paper measured them (on text loss).

# %%
import matplotlib.pyplot as plt
import torch

import minilm
from minilm import (
    NOPE_FIT_C, best_uniform_for_retrieval, mean_loss, needle_attention, retrieval_accuracy, retrieval_head_scaled,
    temperature,
)

P = minilm.profile()
corpus = minilm.default_corpus()
tok = corpus.tokenizer
L = P.nope_rope_len
print(f"profile {P.name}: lesson 6's Transformers (d{P.d_model} x {P.nope_rope_layers} x {P.n_head} heads), "
      f"trained at L = {L}, then lesson 9's retrieval mixture; seeds {P.seeds}")


text_models = minilm.nope_rope_models(P, corpus, progress=False)                      # lesson 6's
models = minilm.retrieval_models(P, corpus, positions=("nope",), progress=False)   # lesson 9's NoPE

# %% [markdown]
# ## Lesson 9's fixes, at $8L$
#
# The three NoPE settings whose attention we read below: $\lambda = 1$, the best uniform
# $\lambda$ at each length (searched on separate prompts), and head scaling trained at $4L$
# (the paper's recipe: 200 steps of 8 sequences, learning rate 0.05, clamp at 1, start at the
# best uniform $\lambda$ for $4L$). Their exact match at $8L$, 100 prompts at each of five
# depths, as in lesson 9's table:

# %%
lengths = [L, 2 * L, 4 * L, 8 * L]
depths = [0.0, 0.25, 0.5, 0.75, 1.0]
TRIALS = 100
target = 4 * L
best = {(seed, T): best_uniform_for_retrieval(models["nope", seed], corpus, T) for seed in P.seeds for T in lengths[1:]}
head_runs = {}   # (seed, start, clamp, steps) -> the head-scaled model; the ablations below reuse these
for seed in P.seeds:
    recipe_run = (seed, best[seed, target], True, 200)   # the paper's recipe
    head_runs[recipe_run] = retrieval_head_scaled(P, corpus, seed, start=best[seed, target])
    models["NoPE, head scaling at 4L", seed] = head_runs[recipe_run]
    nope, heads = models["nope", seed], models["NoPE, head scaling at 4L", seed]
    with temperature(nope, best[seed, 8 * L]):
        tempered = retrieval_accuracy(nope, corpus, [8 * L], depths, trials=TRIALS).mean().item()
    print(f"seed {seed}: best uniform lambda at 2L/4L/8L " + "/".join(str(best[seed, T]) for T in lengths[1:])
          + f";  exact match at 8L: lambda = 1 {retrieval_accuracy(nope, corpus, [8 * L], depths, trials=TRIALS).mean():.2f}, "
          f"best uniform lambda {tempered:.2f}, head scaling {retrieval_accuracy(heads, corpus, [8 * L], depths, trials=TRIALS).mean():.2f}")

# %% [markdown]
# ## Distraction: where the question looks
#
# In these models the question `?` is the query that must find the needle: the character it
# predicts is the key's first digit. For every layer and head we measure its attention row:
# the **mass on the needle** (the weights on `@` and the key's digits) and the row's
# **entropy**, averaged over 32 prompts at each of the five depths
# (`minilm.needle_attention`). Uniform attention over the $k$ positions the question sees
# would put $4/k$ on the needle, with entropy $\ln k$: we divide the entropy by $\ln k$ to
# compare lengths, and show the mass as it is, next to uniform attention's $4/k$ (the control row).
#
# The heads that do the retrieval are those with the most needle mass at $L$. If distraction
# is the cause, their mass on the needle should fall as the haystack grows, in step with
# exact match, and a temperature should give it back.

# %%
def needle_profile(model, lam_by_length=None):
    out = {}
    for T in lengths:
        with temperature(model, (lam_by_length or {}).get(T)):
            out[T] = needle_attention(model, corpus, T)
    return out


attention = {}
for seed in P.seeds:
    nope = models["nope", seed]
    attention["lambda = 1", seed] = needle_profile(nope)
    attention["best uniform lambda", seed] = needle_profile(nope, {T: best[seed, T] for T in lengths[1:]})
    attention["head scaling at 4L", seed] = needle_profile(models["NoPE, head scaling at 4L", seed])
    with temperature(nope, 0.0):   # the control: every logit 0, so every row is uniform
        attention["uniform attention (control)", seed] = needle_profile(nope)

retrieval_head = {}
for seed in P.seeds:
    mass_at_L = attention["lambda = 1", seed][L]["mass"]
    layer, head = divmod(int(mass_at_L.argmax()), mass_at_L.shape[1])
    retrieval_head[seed] = (layer, head)
    print(f"seed {seed}: the head with the most needle mass at L is layer {layer}, head {head}")
    for label in dict.fromkeys(label for label, _ in attention):
        row = attention[label, seed]
        print(f"  {label:<28} mass " + " ".join(f"{row[T]['mass'][layer, head]:.2f}" for T in lengths)
              + "   entropy / ln k " + " ".join(f"{row[T]['entropy'][layer, head] / torch.log(torch.tensor(row[T]['keys'])):.2f}"
                                                for T in lengths))

# %%
fig, axes = plt.subplots(1, 2 * len(P.seeds), figsize=(13, 3.2), dpi=85)
styles = {"lambda = 1": "tab:blue", "best uniform lambda": "tab:green", "head scaling at 4L": "tab:red",
          "uniform attention (control)": "gray"}
for s, seed in enumerate(P.seeds):
    layer, head = retrieval_head[seed]
    for label, color in styles.items():
        row = attention[label, seed]
        axes[2 * s].plot([T // L for T in lengths], [row[T]["mass"][layer, head] for T in lengths], "o-", color=color,
                         label=label)
        axes[2 * s + 1].plot([T // L for T in lengths],
                             [row[T]["entropy"][layer, head] for T in lengths], "o-", color=color)
    axes[2 * s].set(title=f"seed {seed}: needle mass (layer {layer}, head {head})", xscale="log", xlabel="length / L")
    axes[2 * s + 1].set(title=f"seed {seed}: entropy of the row (nats)", xscale="log", xlabel="length / L")
for ax in axes:
    ax.set_xticks([1, 2, 4, 8], ["1", "2", "4", "8"])
    ax.minorticks_off()
axes[0].legend(fontsize=7)
plt.tight_layout()
plt.show()

# %% [markdown]
# The head that finds the needle is sharp in range: at $L$ it puts 0.98 and 0.99 of the
# question's attention on the needle (seeds 0 and 1), with an entropy of 0.19 and 0.04 of
# uniform's $\ln k$. As the haystack grows, at $\lambda = 1$, it **is distracted**, much more
# on seed 0 than on seed 1: at $8L$ its needle mass falls to 0.70 and 0.93, and its entropy
# rises to 0.38 and 0.13 of $\ln k$. This is not what any long row does: uniform attention
# keeps its entropy at exactly $\ln k$ (1.00 of it) at every length. The temperature
# **undoes most of the distraction**: with the best uniform $\lambda$ the mass at $8L$ is back
# to 0.88 and 0.96 and the entropy to 0.18 and 0.04; head scaling gets 0.78 and 0.96.
#
# But the head's mass does not follow exact match. On seed 0 the temperature raises the
# mass at $8L$ from 0.70 to 0.88 while exact match goes only from 0.48 to 0.50; on seed 1
# the mass moves only from 0.93 to 0.96 while exact match goes from 0.27 to 0.49. And the
# seed whose head keeps more of its focus at $8L$ (seed 1, 0.93 against 0.70) is the one
# that retrieves less (0.27 against 0.48). So at this size the distraction of this one head
# explains little of the lost retrieval. On seed 0 the model finds the needle again at $8L$
# and still fails, so the loss presumably happens later, in reading the key out; on seed 1
# the temperature's gain presumably comes through other heads or the read-out (neither
# measured here; see question 1).
#
# Asserted on every seed: at $\lambda = 1$ the head's entropy, as a fraction of $\ln k$,
# rises from $L$ to $8L$ by more than 0.05 (0.19 and 0.09), which uniform attention fails
# (0.00). Asserted on the mean of the two seeds only: the best uniform $\lambda$ raises the
# needle mass at $8L$ above $\lambda = 1$'s by more than 0.05 (printed below: +0.18 on seed
# 0, +0.04 on seed 1, mean +0.11), which it cannot do to uniform attention (a row of equal
# logits stays uniform at any temperature). Per seed it would fail on seed 1, whose head has
# little mass to give back.

# %%
def normalised_entropy(label, seed, T):
    layer, head = retrieval_head[seed]
    row = attention[label, seed][T]
    return (row["entropy"][layer, head] / torch.log(torch.tensor(float(row["keys"])))).item()


def mass(label, seed, T):
    layer, head = retrieval_head[seed]
    return attention[label, seed][T]["mass"][layer, head].item()


mass_gain = {seed: mass("best uniform lambda", seed, 8 * L) - mass("lambda = 1", seed, 8 * L) for seed in P.seeds}
print("needle mass at 8L, best uniform lambda minus lambda = 1: "
      + ", ".join(f"seed {seed} {gain:+.2f}" for seed, gain in mass_gain.items())
      + f";  mean {sum(mass_gain.values()) / len(mass_gain):+.2f}")
for seed in P.seeds:
    assert normalised_entropy("lambda = 1", seed, 8 * L) > normalised_entropy("lambda = 1", seed, L) + 0.05, seed
    control_rise = (normalised_entropy("uniform attention (control)", seed, 8 * L)
                    - normalised_entropy("uniform attention (control)", seed, L))
    assert abs(control_rise) < 0.05, control_rise   # the control does not rise
assert sum(mass_gain.values()) / len(mass_gain) > 0.05, mass_gain

# %% [markdown]
# ## Clamp and start: when do they matter?
#
# Head scaling from the paper's start (the best uniform $\lambda$ for $4L$) with its clamp, then
# two ablations: no clamp, and a start at $\lambda = 1$; each with budgets of 10, 25, 50 and
# 200 steps (learning rate 0.05 with cosine decay at every budget). Scored at $4L$ on retrieval
# (500 prompts) and on text loss.

# %%
budgets = [10, 25, 50, 200]
variants = {"clamp, start at best": dict(clamp=True, start=None), "no clamp": dict(clamp=False, start=None),
            "start at 1": dict(clamp=True, start=1.0)}
run_of = {(label, steps, seed): (seed, best[seed, target] if v["start"] is None else v["start"], v["clamp"], steps)
          for seed in P.seeds for label, v in variants.items() for steps in budgets}
scores = {}
for run in dict.fromkeys(run_of.values()):   # each distinct run once: a start at 1 can be the recipe itself
    seed, start, clamp, steps = run
    if run not in head_runs:
        head_runs[run] = retrieval_head_scaled(P, corpus, seed, start=start, clamp=clamp, steps=steps)
    model = head_runs[run]
    scores[run] = (retrieval_accuracy(model, corpus, [target], depths, trials=TRIALS).mean().item(),
                   mean_loss(model, corpus, target), model.temperature.min().item())
ablation = {key: scores[run] for key, run in run_of.items()}
print(f"{'at 4L: exact match / text loss / lowest lambda':<48}" + "".join(f"{f'{b} steps':>22}" for b in budgets))
for seed in P.seeds:
    for label in variants:
        print(f"{f'seed {seed}, {label}':<48}" + "".join(
            f"{ablation[label, b, seed][0]:.2f} / {ablation[label, b, seed][1]:.3f} / {ablation[label, b, seed][2]:.2f}".rjust(22)
            for b in budgets))

# %% [markdown]
# **Here neither the clamp nor the start matters for retrieval, at any budget.** Every
# variant retrieves 0.71-0.73 at $4L$ on seed 0 and 0.67-0.70 on seed 1. On seed 0 the start
# is not tested at all: its best uniform $\lambda$ at $4L$ is 1.0, so "start at 1" is the
# paper's recipe, the same run. Without the clamp some heads drop below 1 (to 0.54 on seed 0
# after 25 steps) at no cost in retrieval, which suggests those heads matter little for it.
# In text loss, dropping the clamp costs seed 0 0.005-0.041 nats and seed 1 (lowest
# $\lambda$ 0.86) at most 0.001. The start shows only on seed 1, after 10 steps:
# starting at 1 costs 0.02 in retrieval and 0.021 nats in text against starting at the best
# uniform $\lambda$; from 25 steps on the two starts agree within 0.01 and 0.007 nats.
#
# Why not the paper's large effect (81 to 53 and 26)? Likely because here the best uniform
# $\lambda$ at $4L$ is small, 1.0 on seed 0 and 1.4 on seed 1, so "start at 1" is no step or a
# small step away from it, which a learning rate of 0.05 covers in a few steps; the start in
# the paper's code (`scripts/run_hs.sh`, lesson 7) was 1.6, in a model of about a billion
# parameters. We assert the absence of a difference as a bound: every ablation is within
# 0.05 of the paper's recipe at the same budget, on every seed; a bound that the gap
# between head scaling and $\lambda = 1$ at $8L$ on seed 1 (0.46 against 0.27, printed at the
# top: 0.19) would fail.

# %%
for seed in P.seeds:
    for steps in budgets:
        paper = ablation["clamp, start at best", steps, seed][0]
        for label in ("no clamp", "start at 1"):
            assert abs(ablation[label, steps, seed][0] - paper) <= 0.05, (seed, label, steps)

# %% [markdown]
# ## The fit per position, as the paper's code does it
#
# Lesson 7 fitted $\lambda(s) = 1 + c\ln s$ to the best uniform $\lambda$ *per evaluation
# length*. The paper's code fits it per *position*: the best uniform $\lambda$ for the loss at
# position $i$, then $\lambda(i) = 1 + a \ln(i/L)$. Both can be read off one table: the loss
# at every position of $8L$-long sequences under each uniform $\lambda$
# (`minilm.scaling.uniform_temperature_by_position`, 64 sequences). In a causal model the
# first $sL$ positions of a long sequence are exactly a sequence of length $sL$, so the
# per-length fit takes the mean of the first $sL$ positions; the per-position fit
# (`minilm.scaling.fit_per_position`) takes buckets of $L/4$ positions past $L$. We fit the
# text-only NoPE models of lessons 6-8, on which lesson 7 fitted $c = 0.42$ and lesson 8
# tested the paper's rule.

# %%
fine_grid = [round(1 + 0.1 * k, 1) for k in range(15)]
fits = {}
for seed in P.seeds:
    table = minilm.uniform_temperature_by_position(text_models["nope", seed], corpus, 8 * L, fine_grid)
    per_position = minilm.fit_per_position(table, fine_grid, L, bucket=L // 4)
    best_by_length = [fine_grid[int(table[:, : s * L].mean(1).argmin())] for s in (2, 4, 8)]
    fits[seed] = {"a": per_position["a"], "c": minilm.fit_log_slope([2, 4, 8], best_by_length),
                  "per_position": per_position, "per_length": best_by_length}
    print(f"seed {seed}: per position a = {fits[seed]['a']:.3f};  per length c = {fits[seed]['c']:.3f} "
          f"(best lambda at 2L/4L/8L {best_by_length});  the paper's a = {NOPE_FIT_C}")

# %%
fig, ax = plt.subplots(figsize=(7, 3.5), dpi=90)
for seed, color in zip(P.seeds, ("tab:blue", "tab:orange")):
    fit = fits[seed]["per_position"]
    ax.plot(fit["ratios"], fit["best"], ".", color=color, alpha=0.6, label=f"seed {seed}: best lambda per bucket")
    s = torch.linspace(1, 8, 50)
    ax.plot(s, 1 + fits[seed]["a"] * torch.log(s), color=color, label=f"seed {seed}: 1 + {fits[seed]['a']:.2f} ln(i/L)")
ax.plot(s, 1 + NOPE_FIT_C * torch.log(s), "k--", label="1 + 0.397 ln(i/L) (paper)")
ax.set(xlabel="position i / L", ylabel="best uniform lambda", title="The per-position fit")
ax.legend(fontsize=7)
plt.show()

# %% [markdown]
# The two fits disagree. Per length, $c$ = 0.453 and 0.423 (the best $\lambda$ at
# $2L/4L/8L$ is 1.3/1.7/1.9 and 1.2/1.6/1.9), within 0.06 of the paper's 0.397 and close to
# lesson 7's $c = 0.42$ (lesson 7 scored other sequences, and its best $\lambda$ differ from
# these by one step of 0.1, at $2L$ on seed 0 and at $4L$ on seed 1). Per position, $a$ = 0.712 and 0.672: positions far
# past $L$ want much more temperature than a per-length average says, because the mean loss
# of a sequence of length $sL$ also counts its first $L$ positions, which are best near
# $\lambda = 1$. The paper's 0.397 comes from the per-position fit of a billion-parameter
# model; ours, per position, is about 0.3 steeper. (Several of seed 0's buckets sit at the
# top of the grid, 2.4, so its $a$ is if anything too low.)
#
# Asserted on every seed, each fit the other's control: the per-length $c$ is within 0.1 of
# 0.397 (the per-position $a$ fails that), and the per-position $a$ is above 0.397 + 0.15
# (the per-length $c$ fails that).

# %%
for seed in P.seeds:
    assert abs(fits[seed]["c"] - NOPE_FIT_C) < 0.1, fits[seed]
    assert fits[seed]["a"] > NOPE_FIT_C + 0.15, fits[seed]
    assert not abs(fits[seed]["a"] - NOPE_FIT_C) < 0.1 and not fits[seed]["c"] > NOPE_FIT_C + 0.15   # the controls

# %% [markdown]
# ## Extension ratios, with error bars
#
# Lesson 6 read extension ratios off 64 sequences and found them all at 1.0, the measure's
# floor. Here 256 sequences of $8L$ for each text-only model of lesson 6, and a bootstrap
# over sequences (`minilm.bootstrap_interval`: 1000 resamples, a 90% interval) for two
# statistics: the extension ratio (margin 0.1 nats, buckets of $L/8$) and the rise of the
# loss over $L..2L$ above its in-range level.

# %%
intervals = {}
for (pos, seed), model in text_models.items():
    losses, _ = minilm.measure.token_losses(model, corpus, task="causal", length=8 * L, batch_size=32, n_batches=8)
    ratio = minilm.extension_ratio(losses.mean(0), L)
    ratio_ci = minilm.bootstrap_interval(losses, lambda rows: minilm.extension_ratio(rows.mean(0), L))

    def rise(rows):
        curve = rows.mean(0)
        return (curve[L:2 * L].mean() - curve[L // 2:L].mean()).item()

    intervals[pos, seed] = {"ratio": ratio, "ratio_ci": ratio_ci, "rise": rise(losses),
                            "rise_ci": minilm.bootstrap_interval(losses, rise)}
    r = intervals[pos, seed]
    print(f"{pos} seed {seed}: extension ratio {r['ratio']:.3f} [{r['ratio_ci'][0]:.3f}, {r['ratio_ci'][1]:.3f}];  "
          f"rise over L..2L {r['rise']:+.2f} [{r['rise_ci'][0]:+.2f}, {r['rise_ci'][1]:+.2f}] nats")

# %% [markdown]
# With 256 sequences the extension ratio is still 1.000 for all four models, and its
# interval says how little that tells: [1.000, 1.375] for NoPE and [1.000, 1.125] for RoPE,
# on both seeds. The intervals overlap, so at this size the ratio cannot separate NoPE from
# RoPE, let alone confirm the paper's +20% and +10% (Wang et al. 2024): at $L = 32$ one bucket
# of $L/8$ is 4 positions, and the first bucket past $L$ is already above the margin.
#
# The rise of the loss just past $L$ separates them without overlap: +0.29 [+0.21, +0.37] and
# +0.34 [+0.25, +0.42] nats for NoPE against +1.52 [+1.43, +1.61] and +1.40 [+1.32, +1.49]
# for RoPE. Asserted on every seed: RoPE's interval lies above NoPE's. The control is the
# extension ratio, whose intervals overlap.

# %%
for seed in P.seeds:
    nope, rope = intervals["nope", seed], intervals["rope", seed]
    assert rope["rise_ci"][0] > nope["rise_ci"][1], seed
    assert not rope["ratio_ci"][0] > nope["ratio_ci"][1]   # the control: the ratios' intervals overlap

# %% [markdown]
# ## Our numbers next to the paper's
#
# | | Wang et al. (2024) | here (CPU profile, seeds 0 and 1) |
# |---|---|---|
# | without clamp / start | passkey 81 to 53 / 26 (paper) | no difference in retrieval (at most 0.02 apart at 10-200 steps; bound asserted 0.05); on seed 0 the two starts are the same run (best $\lambda$ at 4L is 1.0); on seed 1 start at 1 costs 0.021 nats of text after 10 steps; no clamp costs seed 0 up to 0.041 nats of text |
# | distraction | entropy grows with length; temperature restores it (paper) | the needle-finding head's mass 0.98 / 0.99 to 0.70 / 0.93 at 8L, back to 0.88 / 0.96 with $\lambda$; retrieval gains the other way round (+0.02 / +0.22), so the head's mass explains little of the loss |
# | $\lambda$ fit | per position, $a = 0.397$ (paper; fit in `fig/fig_fit.ipynb` of its code) | per position $a$ = 0.71 / 0.67; per length $c$ = 0.45 / 0.42 |
# | extension ratio | NoPE about +20%, RoPE about +10% (paper) | 1.0 for all, intervals overlap; the rise past $L$ separates them (0.3 against 1.4-1.5 nats) |
#
# ## Check your understanding
#
# 1. On seed 0 the temperature gives the needle-finding head its focus back at $8L$ but not the
#    retrieval. Design a measurement that finds where the answer is lost instead (hint:
#    `needle_attention` reads the row of the question `?`; the rows of the answer's digits can
#    be read the same way, and the key has three digits).
# 2. Without the clamp, some temperatures fall below 1 with no cost in retrieval. What does
#    that say about those heads? How would you check it?
# 3. The per-position $a$ is about 0.25 steeper than the per-length $c$ on the same table.
#    Which one would you use to set a temperature at inference, and why?
# 4. The extension ratio of all four models is 1.000, yet their losses past $L$ differ by more
#    than a nat. What does the ratio measure, and what would make it informative here?
# 5. Exercise 10 asks you to write the needle mass and the per-position fit.
