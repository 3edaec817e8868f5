# %% [markdown]
# # Lesson 12 — Why retrieval is lost, and how the paper measures its rule
#
# **Model and length.** [Lesson 6](06_nope.ipynb)'s causal Transformers (d64, 4 layers, 4 heads), trained at
# $L = 32$, two seeds: the NoPE ones after [lesson 11](11_retrieval.ipynb)'s retrieval mixture; in the appendices, the
# text-only ones.
#
# **Time.** About 15 minutes to read; about 2 minutes to run on 2 CPU cores, with lessons 1-11
# cached. Optional appendices: 5 minutes more.
#
# **Which failure, which fix.** *Distraction*: the needle's share of a softmax row shrinks as the
# haystack grows. Does it explain lesson 11's lost retrieval, and does the multiplier $\lambda$
# (lessons [7](07_temperature.ipynb)-11) undo it?
#
# *Numbers in the text are the stored run's; yours will differ a little
# ([how the course checks itself](checking.md)).*
#
# [Notation](README.md#notation) · [sources](README.md#sources) ·
# [exercise 12](../exercises/12_distraction.ipynb)

# %% [markdown]
# **The source.** Wang et al. (2024) blame NoPE's failure past $L$ on distraction: a long row's
# attention spreads over ever more keys; what the paper calls a temperature, our $\lambda$,
# sharpens it again. [Lesson 11](11_retrieval.ipynb)'s models, prompts and fixes are reused; its numbers reappear unchanged.

# %%
import math

import matplotlib.pyplot as plt
import torch

import minilm
from minilm import at_lambda, retrieval_accuracy
from minilm.experiments import (
    best_uniform_for_retrieval, nope_rope_models, retrieval_head_scaled, retrieval_models,
)
from minilm.measure import bootstrap_interval, extension_ratio, needle_attention
from minilm.plots import course_style
from minilm.scaling import (
    NOPE_FIT_C, fit_log_slope, fit_per_position, uniform_multiplier_by_position,
)

course_style()

P = minilm.profile()
corpus = minilm.default_corpus()
tok = corpus.tokenizer
L = P.nope_rope_len
print(f"profile {P.name}: lesson 6's Transformers "
      f"(d{P.d_model} x {P.nope_rope_layers} x {P.n_head} heads), "
      f"trained at L = {L}, then lesson 11's retrieval mixture; seeds {P.seeds}")


text_models = nope_rope_models(P, corpus, progress=False)                   # lesson 6's
models = retrieval_models(P, corpus, positions=("nope",), progress=False)   # lesson 11's NoPE

# %% [markdown]
# ## Lesson 11's fixes, at $8L$
#
# [Lesson 11](11_retrieval.ipynb)'s exact match at $8L$, for the three NoPE settings read below.

# %%
lengths = [L, 2 * L, 4 * L, 8 * L]
depths = [0.0, 0.25, 0.5, 0.75, 1.0]
TRIALS = 100
target = 4 * L
best = {(seed, T): best_uniform_for_retrieval(models["nope", seed], corpus, T)
        for seed in P.seeds for T in lengths[1:]}
for seed in P.seeds:
    models["NoPE, head scaling at 4L", seed] = retrieval_head_scaled(P, corpus, seed,
                                                                     start=best[seed, target])
    nope, heads = models["nope", seed], models["NoPE, head scaling at 4L", seed]
    with at_lambda(nope, best[seed, 8 * L]):
        tempered = retrieval_accuracy(nope, corpus, [8 * L], depths, trials=TRIALS).mean().item()
    plain_8L = retrieval_accuracy(nope, corpus, [8 * L], depths, trials=TRIALS).mean()
    heads_8L = retrieval_accuracy(heads, corpus, [8 * L], depths, trials=TRIALS).mean()
    print(f"seed {seed}: best uniform lambda at 2L/4L/8L "
          + "/".join(str(best[seed, T]) for T in lengths[1:])
          + f";  exact match at 8L: lambda = 1 {plain_8L:.2f}, "
          f"best uniform lambda {tempered:.2f}, head scaling {heads_8L:.2f}")

# %% [markdown]
# ## Distraction: where the question looks
#
# The question `?` predicts the key's first digit, so it must find the needle. For every head we
# read the question's row (`minilm.measure.needle_attention`): its **mass on the
# needle** (the `@` and the digits) and its **entropy**, divided by $\ln n_i$ ($n_i$: the keys
# the question sees). Uniform attention ($\lambda = 0$, the control) puts $4/n_i$ on
# the needle, with entropy $\ln n_i$.
#
# If distraction is the cause, the head that finds the needle (the most mass at $L$) should lose
# mass with length, in step with exact match, and $\lambda$ should give it back.

# %%
def needle_profile(model, lam_by_length=None):
    out = {}
    for T in lengths:
        with at_lambda(model, (lam_by_length or {}).get(T)):
            out[T] = needle_attention(model, corpus, T)
    return out


attention = {}
for seed in P.seeds:
    nope = models["nope", seed]
    attention["lambda = 1", seed] = needle_profile(nope)
    attention["best uniform lambda", seed] = needle_profile(
        nope, {T: best[seed, T] for T in lengths[1:]})
    attention["head scaling at 4L", seed] = needle_profile(models["NoPE, head scaling at 4L", seed])
    with at_lambda(nope, 0.0):   # the control: every logit 0, so every row is uniform
        attention["uniform attention (control)", seed] = needle_profile(nope)

retrieval_head = {}
for seed in P.seeds:
    mass_at_L = attention["lambda = 1", seed][L]["mass"]
    layer, head = divmod(int(mass_at_L.argmax()), mass_at_L.shape[1])
    retrieval_head[seed] = (layer, head)
    print(f"seed {seed}: the head with the most needle mass at L is layer {layer}, head {head}")
    for label in dict.fromkeys(label for label, _ in attention):
        row = attention[label, seed]
        ln_n = {T: torch.log(torch.tensor(row[T]['keys'])) for T in lengths}   # ln n_i
        print(f"  {label:<28} mass "
              + " ".join(f"{row[T]['mass'][layer, head]:.2f}" for T in lengths)
              + "   entropy / ln n_i "
              + " ".join(f"{row[T]['entropy'][layer, head] / ln_n[T]:.2f}" for T in lengths))

# %% mystnb={"image": {"alt": "Per seed, two panels against length over L for the head that finds the needle, at lambda = 1, the best uniform lambda and head scaling. Left: the question's attention mass on the needle, high at L, falling with length at lambda = 1, partly kept by the fixes. Right: entropy over ln n_i, rising at lambda = 1, held down by the best uniform lambda."}}
fig, axes = plt.subplots(len(P.seeds), 2, figsize=(10, 3.2 * len(P.seeds)), squeeze=False)
# the uniform control (mass 1 / n_i, entropy ln n_i) is in the table above, not drawn: on these
# axes it would squash the lines that matter, which differ by hundredths
styles = {"lambda = 1": ("tab:blue", "o-"), "best uniform lambda": ("tab:green", "s--"),
          "head scaling at 4L": ("tab:red", "^-.")}
for s, seed in enumerate(P.seeds):
    layer, head = retrieval_head[seed]
    for label, (color, style) in styles.items():
        row = attention[label, seed]
        axes[s, 0].plot([T // L for T in lengths], [row[T]["mass"][layer, head] for T in lengths],
                        style, color=color, label=label)
        axes[s, 1].plot([T // L for T in lengths],
                        [row[T]["entropy"][layer, head] / math.log(row[T]["keys"])
                         for T in lengths], style, color=color)
    axes[s, 0].set(title=f"seed {seed}: needle mass (layer {layer}, head {head})", xscale="log",
                   xlabel="length / L", ylabel="needle mass")
    axes[s, 1].set(title=f"seed {seed}: the row's entropy / ln n_i", xscale="log",
                   xlabel="length / L", ylabel="entropy / ln n_i (uniform: 1)")
for ax in axes.flat:
    ax.set_xticks([1, 2, 4, 8], ["1", "2", "4", "8"])
    ax.minorticks_off()
axes[0, 0].legend()
plt.show()

# %% [markdown]
# The head that finds the needle is sharp in range: 0.99 and 0.99 of the question's attention on
# the needle at $L$ (seeds 0 and 1). At $\lambda = 1$ it **is distracted**: at $8L$ its mass falls
# to 0.88 and 0.86, its entropy rises from 0.13 and 0.06 to 0.18 and 0.21 of $\ln n_i$.
# $\lambda$ **undoes much of it**: with the best uniform $\lambda$ the mass at $8L$ is back to 0.95
# and 0.95. Head scaling keeps a little less on both seeds (0.91 and 0.94).

# %% [markdown]
# **But the head's focus does not size exact match.** With that focus largely back, exact match at
# $8L$ stays near one half: 0.48 and 0.49 with the best uniform $\lambda$ (0.90 and 0.94 in
# range). So this head explains only part of the lost retrieval; the rest (not measured; see
# question 1) presumably lies in reading the key out, or in other heads.
#
# <details><summary>Seed by seed, and why nothing here is asserted</summary>
#
# With the best uniform $\lambda$ the head's entropy at $8L$ falls to 0.08 and 0.06 of
# $\ln n_i$, at or below its level at $L$ (0.13 and 0.06). On seed 0 the head puts 0.95 on the
# needle at $8L$ again and the model still fails half the time (exact match 0.48). Mass and exact
# match do not move in step: the two heads keep nearly the same mass at $8L$ (0.88 and 0.86), yet
# seed 0 retrieves more (0.47 against 0.28); $\lambda$ gives both about as much mass back (+0.07
# and +0.09) but very different gains in exact match (0.47 to 0.48, against 0.28 to 0.49 on seed
# 1). Head scaling, too, keeps less mass than the best uniform $\lambda$ on seed 0 (0.91 against
# 0.95) yet matches more (0.54 against 0.48).
#
# Two seeds of this messy task differ too much to size the rise of the head's entropy or
# $\lambda$'s gain in needle mass at $8L$ (both printed below), or even to promise their
# direction on every seed: they are read, not asserted. [Lesson 10](10_why_it_works.ipynb) measured the needle's share and
# the entropy over five seeds and every retrieval head, on a task where nothing but distraction is
# left to fail, and asserted them there.
#
# </details>

# %%
def normalised_entropy(label, seed, T):
    layer, head = retrieval_head[seed]
    row = attention[label, seed][T]
    return (row["entropy"][layer, head] / torch.log(torch.tensor(float(row["keys"])))).item()


def mass(label, seed, T):
    layer, head = retrieval_head[seed]
    return attention[label, seed][T]["mass"][layer, head].item()


mass_gain = {seed: mass("best uniform lambda", seed, 8 * L) - mass("lambda = 1", seed, 8 * L)
             for seed in P.seeds}
print("needle mass at 8L, best uniform lambda minus lambda = 1: "
      + ", ".join(f"seed {seed} {gain:+.2f}" for seed, gain in mass_gain.items())
      + f";  mean {sum(mass_gain.values()) / len(mass_gain):+.2f}")
print("the head's entropy / ln n_i, from L to 8L at lambda = 1: "
      + ", ".join(f"seed {seed} {normalised_entropy('lambda = 1', seed, L):.2f} -> "
                  f"{normalised_entropy('lambda = 1', seed, 8 * L):.2f}" for seed in P.seeds))

# %% [markdown]
# ## Appendix A — The fit per position, as the paper's code does it
#
# *Optional: how the paper's fit is measured. Nothing later depends on it; skip to "Our numbers
# next to the paper's".*
#
# The paper fits $\lambda_i = 1 + c \ln(n_i/L)$ per *position* (its appendix B): at each position
# $i$, the uniform $\lambda$ with the lowest loss. [Lesson 7](07_temperature.ipynb) fitted $c$ per *length*. We fit both
# on one table of [lesson 6](06_nope.ipynb)'s text-only NoPE models.
#
# ![At 8L one rule applied two ways: per length, every row gets 1 + c ln 8; per row, row i gets 1 + c ln(n_i / L), 1 within L](figures/per_position_rule.svg)
#
# <details><summary>The table, and how the two fits read it</summary>
#
# The loss at every position of 64 sequences of $8L$ from the *search* batches (`SEARCH_SEED`),
# under each uniform $\lambda$ of a grid (`minilm.scaling.uniform_multiplier_by_position`). In a
# causal model the first $sL$ positions of a long sequence are a sequence of length $sL$, so the
# per-length fit averages them; the per-position fit (`minilm.scaling.fit_per_position`) takes
# buckets of $L/4$ positions past $L$.
#
# </details>

# %%
fine_grid = [round(1 + 0.1 * k, 1) for k in range(15)]
fits = {}
for seed in P.seeds:
    table = uniform_multiplier_by_position(text_models["nope", seed], corpus, 8 * L, fine_grid)
    per_position = fit_per_position(table, fine_grid, L, bucket=L // 4)
    best_by_length = [fine_grid[int(table[:, : s * L].mean(1).argmin())] for s in (2, 4, 8)]
    fits[seed] = {"c per position": per_position["c"],
                  "c per length": fit_log_slope([2, 4, 8], best_by_length),
                  "per_position": per_position, "per_length": best_by_length}
    print(f"seed {seed}: per position c = {fits[seed]['c per position']:.3f};  "
          f"per length c = {fits[seed]['c per length']:.3f} "
          f"(best lambda at 2L/4L/8L {best_by_length});  the paper's c = {NOPE_FIT_C}")

# %% mystnb={"image": {"alt": "Scatter of the best uniform lambda per bucket of positions against position i over L (1 to 8), two seeds, with each seed's fit 1 + c ln(i/L), the paper's curve dashed and the top of the lambda grid dotted. The best lambda grows with the position; the fitted per-position curves rise more steeply than the paper's."}}
fig, ax = plt.subplots(figsize=(10, 3.8))
for seed, color in zip(P.seeds, ("tab:blue", "tab:orange")):
    fit = fits[seed]["per_position"]
    ax.plot(fit["ratios"], fit["best"], ".", color=color, alpha=0.6,
            label=f"seed {seed}: best lambda per bucket")
    s = torch.linspace(1, 8, 50)
    ax.plot(s, 1 + fits[seed]["c per position"] * torch.log(s), color=color,
            label=f"seed {seed}: 1 + {fits[seed]['c per position']:.2f} ln(i/L)")
ax.plot(s, 1 + NOPE_FIT_C * torch.log(s), "k--", label=f"1 + {NOPE_FIT_C} ln(i/L) (paper)")
# the search stops here: a best lambda on this line may want a larger one
ax.axhline(fine_grid[-1], color="gray", ls=":", label=f"top of the grid ({fine_grid[-1]})")
ax.set(xlabel="position i / L", ylabel="best uniform lambda", title="The per-position fit")
ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5))   # outside: the points fill the axes
plt.show()

# %% [markdown]
# **The two fits disagree.** Per length $c$ = 0.443 and 0.371, close to the paper's 0.397; per
# position 0.704 and 0.600. Positions far past $L$ want a larger $\lambda$ than a per-length
# average says: that average also counts the first $L$ positions, best near $\lambda = 1$.
#
# <details><summary>Seed by seed</summary>
#
# The per-length fits rest on the best $\lambda$ at $2L/4L/8L$: 1.2/1.7/1.9 and 1.2/1.5/1.8, as
# [lesson 7](07_temperature.ipynb)'s search found. Both fits move with the seed (per position 0.704 and 0.600, per length
# 0.443 and 0.371) more than their difference does (0.26 and 0.23). The per-length $c$ is within
# 0.05 of the paper's 0.397 on these two seeds, but the best $\lambda$ at a length can differ by
# a grid step or two between seeds, so how close is not asserted. The paper's 0.397 is a
# per-position fit, on a billion-parameter model.
#
# </details>
#
# <details><summary>What is asserted, and what would fail it</summary>
#
# On every seed: the per-position $c$ is above the per-length $c$ of the same table, a paired
# comparison (measured 0.26 and 0.23 above). Control: the per-length $c$ against itself, a
# difference of 0. How far above is printed, not asserted: on other seeds and kernels the
# difference came out as low as 0.12, just above the bound of 0.1 asserted until then. How far
# either lies from 0.397 is not asserted.
#
# </details>

# %%
for seed in P.seeds:
    assert fits[seed]["c per position"] > fits[seed]["c per length"], fits[seed]

# %% [markdown]
# ## Appendix A, continued — The fits, applied to other sequences
#
# On 64 other sequences of $8L$: the loss past $L$ under $\lambda = 1$, one $\lambda$ per length
# (searched, or fitted), and the per-position rule applied row by row (the paper's $c$ or this
# model's).
#
# <details><summary>The five settings in detail</summary>
#
# - **per length, searched**: the uniform $\lambda$ best for the first $8L$ positions of the fit's
#   table;
# - **per length, fitted**: $1 + c \ln 8$ with this model's per-length $c$, uniform;
# - **per position**: row $i$'s logits times $1 + c \ln(n_i/L)$ past $L$
#   (`model(x, position_rule=(c, L))`), with the paper's $c$ (printed "paper's c") or this
#   model's per-position $c$ (printed "fitted c").
#
# The sequences are the evaluation batches. Besides the loss past $L$, where the rules act, the
# table prints the loss over the last $L$ positions, where they differ most.
#
# </details>

# %%
settings = {"lambda = 1": {}, "per length, searched": None, "per length, fitted": None,
            "per position, paper's c": {"position_rule": (NOPE_FIT_C, L)},
            "per position, fitted c": None}
applied = {}
for seed in P.seeds:
    model = text_models["nope", seed]
    choices = dict(settings, **{"per length, searched": {"lam": fits[seed]["per_length"][-1]},
                                "per length, fitted": {
                                    "lam": 1 + fits[seed]["c per length"] * math.log(8)},
                                "per position, fitted c": {
                                    "position_rule": (fits[seed]["c per position"], L)}})
    for label, setting in choices.items():
        setting = dict(setting)
        with at_lambda(model, setting.pop("lam", None)):
            curve = minilm.loss_by_position(model, corpus, 8 * L, n_batches=8, **setting)
        applied[label, seed] = (curve[L:].mean().item(), curve[-L:].mean().item())
print(f"{'loss at 8L (nats), held-out sequences':<40}"
      f"{'past L, seeds ' + '/'.join(map(str, P.seeds)):>26}"
      f"{'last L positions':>26}")
for label in settings:
    cells = [[applied[label, s][k] for s in P.seeds] for k in (0, 1)]
    print(f"{label:<40}" + "".join(
        f"{sum(c) / len(c):.3f} ({' / '.join(f'{v:.3f}' for v in c)})".rjust(26) for c in cells))

# %% [markdown]
# **One $\lambda$ per length helps most; the per-position rule, applied per row, less.** Past $L$
# the loss at $8L$ (mean of the seeds) falls from 2.942 nats to 2.616 (searched) and 2.618
# (fitted), but only to 2.846 and 2.831 with the paper's and our per-position rule, on both seeds.

# %% [markdown]
# Why? The per-position table measures position $i$'s loss with *every* row sharpened alike, the
# rows it reads included; a per-row rule sharpens those less, so position $i$ reads other inputs
# than the fit assumed. The paper agrees (section 2.4: position-dependent scales did not improve
# generalization further).
#
# <details><summary>The last L positions, and lesson 9's retrieval</summary>
#
# On this table the last $L$ positions, where the rules differ most, rank the five settings as
# the loss past $L$ does. In [lesson 9](09_fix_isolated.ipynb)'s retrieval the per-row rule did as well as the uniform one:
# the rows that decide retrieval are the last ones, where the two rules agree.
#
# </details>
#
# <details><summary>What is asserted, and what would fail it</summary>
#
# On every seed: the searched per-length $\lambda$ beats both per-position rules past $L$
# (measured by 0.11 to 0.32 nats; on other seeds and kernels by as little as 0.08, so the bound
# of 0.05 asserted until then is now 0). Control: the fitted per-length rule is not beaten by
# more than 0.05 (it ties with the searched one, within 0.01). That the per-position rules beat
# $\lambda = 1$ (measured 0.09 to 0.13) is printed, not asserted: on other seeds and kernels it
# missed a bound of 0.05, then one of 0.02; a bound lowered to fit the seeds at hand is a coin
# toss on the next machine.
#
# </details>

# %%
for seed in P.seeds:
    past = {label: applied[label, seed][0] for label in settings}
    for rule in ("per position, paper's c", "per position, fitted c"):
        assert past["per length, searched"] < past[rule], (seed, rule, past)
    # the control
    assert not past["per length, searched"] < past["per length, fitted"] - 0.05, past


# %% [markdown]
# ## Appendix B — Extension ratios, with error bars
#
# *Optional: error bars. Nothing later depends on it; skip to "Our numbers next to the paper's".*
#
# [Lesson 6](06_nope.ipynb) found every extension ratio at 1.0, the measure's floor. Here, on 256 sequences of $8L$
# per text-only model, it and the rise of the loss over $L..2L$ above its in-range level get a
# bootstrap interval over the sequences.
#
# <details><summary>The bootstrap, the ratio's settings</summary>
#
# As in [reading a result over seeds](09_fix_isolated.ipynb#reading-a-result-over-seeds), but
# what is resampled here is the 256 sequences, 1000 times, for a 90% interval
# (`minilm.measure.bootstrap_interval`). The extension ratio uses a margin of 0.1 nats and
# buckets of $L/8$ positions.
#
# </details>

# %%
intervals = {}
for (pos, seed), model in text_models.items():
    losses, _ = minilm.measure.token_losses(model, corpus, task="causal", length=8 * L,
                                            batch_size=32, n_batches=8)
    ratio = extension_ratio(losses.mean(0), L)
    ratio_ci = bootstrap_interval(losses, lambda rows: extension_ratio(rows.mean(0), L))

    def rise(rows):
        curve = rows.mean(0)
        return (curve[L:2 * L].mean() - curve[L // 2:L].mean()).item()

    intervals[pos, seed] = {"ratio": ratio, "ratio_ci": ratio_ci, "rise": rise(losses),
                            "rise_ci": bootstrap_interval(losses, rise)}
    r = intervals[pos, seed]
    print(f"{pos} seed {seed}: extension ratio {r['ratio']:.3f} "
          f"[{r['ratio_ci'][0]:.3f}, {r['ratio_ci'][1]:.3f}];  "
          f"rise over L..2L {r['rise']:+.2f} [{r['rise_ci'][0]:+.2f}, {r['rise_ci'][1]:+.2f}] nats")

# %% [markdown]
# The ratio is still 1.000 for all four models, intervals overlapping: it cannot separate NoPE
# from RoPE here, let alone confirm the paper's +20% and +10% (a bucket is 4 positions, and the
# first one past $L$ already crosses the margin). The rise just past $L$ does: +0.29 and +0.34
# nats for NoPE, +1.52 and +1.40 for RoPE.
#
# <details><summary>What is asserted, and what would fail it</summary>
#
# On every seed: RoPE's interval for the rise lies above NoPE's ([+1.43, +1.61] and [+1.31, +1.49]
# against [+0.21, +0.37] and [+0.25, +0.42] nats). Control: the extension ratio, whose intervals
# overlap ([1.000, 1.375] for NoPE, [1.000, 1.125] for RoPE).
#
# </details>

# %%
for seed in P.seeds:
    nope, rope = intervals["nope", seed], intervals["rope", seed]
    assert rope["rise_ci"][0] > nope["rise_ci"][1], seed
    # the control: the ratios' intervals overlap
    assert not rope["ratio_ci"][0] > nope["ratio_ci"][1]

# %% [markdown]
# ## Our numbers next to the paper's
#
# In short: distraction is real here, and $\lambda$ undoes much of it in one head, but that explains
# only part of the lost retrieval.
#
# <details><summary>Claim by claim: Wang et al. (2024), and here (seeds 0 and 1)</summary>
#
# - **Distraction.** Paper: entropy grows with length; a temperature (our $\lambda$) restores it.
#   Here: the needle-finding head's mass 0.99 / 0.99 at $L$, 0.88 / 0.86 at $8L$, 0.95 / 0.95
#   with $\lambda$; exact match at $8L$ only from 0.47 / 0.28 to 0.48 / 0.49 (0.90 / 0.94 at $L$).
# - **The fit of $\lambda$** (appendix A). Paper: per position, $c = 0.397$ (appendix B; the fit
#   is in `fig/fig_fit.ipynb` of its code). Here: per position $c$ = 0.70 / 0.60; per length
#   $c$ = 0.44 / 0.37.
# - **The fit applied** (appendix A). Paper: position-dependent scales did not help further
#   (section 2.4). Here: loss past $L$ at $8L$ 2.94 nats; 2.83-2.85 with the per-position rules
#   applied per row, 2.62 with one $\lambda$ per length.
# - **Extension ratio** (appendix B). Paper: NoPE about +20%, RoPE about +10%. Here: 1.0 for all,
#   intervals overlap; the rise past $L$ separates them (0.3 against 1.4-1.5 nats).
#
# </details>

# %% [markdown]
# ## Takeaways
#
# - Past $L$ the head that finds the needle is distracted: at $\lambda = 1$ its needle mass falls
#   from 0.99 and 0.99 at $L$ to 0.88 and 0.86 at $8L$, and its entropy rises.
# - $\lambda$ gives that head much of its focus back (mass 0.95 and 0.95, entropy no higher than
#   at $L$), but not the retrieval: exact match at $8L$ 0.48 and 0.49 (0.90 and 0.94 in range).
# - So one head's distraction explains only part of the loss in text; the rest, not measured here,
#   presumably lies in the read-out or in other heads.

# %% [markdown]
# ## Check your understanding
#
# 1. On seed 0, $\lambda$ brings the needle-finding head's entropy at $8L$ back below its level at $L$,
#    but not the retrieval. How would you find where the answer is lost?
#
#    <details><summary>Answer</summary>
#
#    Read the rows that write the answer: `needle_attention(..., rows="answer")` (as [lesson 10](10_why_it_works.ipynb) did)
#    gives, per head, the needle mass of the `?` row and of the rows of the first two answer digits,
#    at $L$ and $8L$, with and without $\lambda$; and score each digit separately (exercise 11's
#    Going further). If the first digit is already wrong although the `?` row's head finds the
#    needle, the loss is after the attention (in the values it reads or in the later layers). If the
#    first digit is right and the later ones wrong, look at the digit rows: a mass that falls with
#    length there is distraction in another row; a mass that holds points to the read-out. Expect
#    more than one head: lesson 10, on random letters, found the fix acting through many heads at
#    once, so one head's focus can come back without the answer.
#
#    </details>
#
# 2. Uniform attention puts 0.13, 0.06, 0.03 and 0.02 on the needle at $L$, $2L$, $4L$ and $8L$.
#    Why, and what does that say about the trained head's 0.88 at $8L$ (seed 0)?
#
#    <details><summary>Answer</summary>
#
#    Uniform attention gives each of the $n_i$ keys the question sees a weight $1/n_i$, and the
#    needle is 4 keys (the `@` and three digits), so its mass is $4/n_i$: it halves each time the
#    length doubles. That is distraction in its pure form, the needle's share shrinking as the
#    haystack grows. The trained head's 0.88 at $8L$ is far above that floor (0.02): it still finds
#    the needle, though less surely than at $L$ (0.99): a drift toward uniform, not a collapse. Its
#    entropy says the same: 0.18 of $\ln n_i$, against uniform attention's 1.00.
#
#    </details>
#
# 3. (Appendix A.) Applied per row, the per-position rule did worse than one $\lambda$ per length.
#    Which would you use at inference, and how should a per-row rule be fitted?
#
#    <details><summary>Answer</summary>
#
#    At inference, one $\lambda$ per length (searched, or the fitted $1 + c \ln s$): it lowered the
#    loss past $L$ at $8L$ most, to 2.62 nats against 2.83-2.85 for the per-position rules applied
#    row by row. A per-row rule that deserves its name would have to be fitted *as a schedule*:
#    choose $c$ by the loss with $\lambda_i = 1 + c \ln(n_i/L)$ applied row by row, so that each
#    position sees the inputs it will see at inference, not from a table in which every row was
#    sharpened by the same $\lambda$.
#
#    </details>
#
# 4. (Appendix B.) Every extension ratio is 1.000, yet the losses past $L$ differ by more than a
#    nat. What does the ratio measure, and what would make it informative?
#
#    <details><summary>Answer</summary>
#
#    It measures where the loss, averaged over buckets of $L/8$ positions, first rises 0.1 nats
#    above its in-range level, divided by $L$: how long the model holds its in-range loss, not how
#    badly it fails afterwards. At $L = 32$ a bucket is 4 positions and the first bucket past $L$ is
#    already over the margin for all four, so every ratio sits at the floor, 1.0. It would become
#    informative with smaller buckets (steps finer than $L/8$) or a margin the first buckets do not
#    cross, or for models that hold their loss for a while past $L$, as the paper's did (+10-20%);
#    here the rise over $L..2L$ with its interval is the statistic that separates the models.
#
#    </details>
#
# **Exercise:** [exercise 12](../exercises/12_distraction.ipynb) — write the needle mass and the
# per-position fit.
#
# Next, [lesson 13](13_design_that_holds.ipynb): a design that removes what $\lambda$ cannot; [lesson 14](14_the_answer.ipynb)
# puts it on this lesson's task, retrieval in text.
