# %% [markdown]
# # Lesson 5 — Extrapolation and entropy invariance
#
# **Model and length.** RoPE Transformers (d64, 2 layers, 4 heads) trained at $L = 64$, two seeds
# each: a bidirectional masked LM and [lesson 1](01_gau.ipynb)'s causal LM.
#
# **Time.** About 20 minutes to read; about 2 minutes to run on 2 CPU cores, with lessons 1-4
# cached. Optional section: 5 minutes more.
#
# **Which failure, which fix.** *Distraction*: past $L$ a softmax row spreads over more keys and its
# entropy grows. Su's entropy-invariant fix multiplies the logits by $\log_L n$; relu² attention
# cannot take any multiplier.
#
# *Numbers in the text are the stored run's; yours will differ a little
# ([how the course checks itself](checking.md)).*
#
# [Notation](README.md#notation) · [sources](README.md#sources) ·
# [exercise 5](../exercises/05_entropy_invariance.ipynb)

# %% [markdown]
# **The claim** (Su, 2022, after his 2021 post on entropy invariance, kexue.fm/archives/8823).
# To run *longer* than training (extrapolation), use
#
# $$\mathrm{softmax}\!\left(\frac{\log_L n}{\sqrt{d_k}}\, Q K^\top\right) V,$$
#
# with $L$ the training length (512 in the post) and $\log_L n = \ln n / \ln L$: ordinary attention
# at $n = L$, sharper past it, just enough to hold each row's entropy. In `minilm`: `logn_base=L`,
# per row $i$ with its $n_i$ keys.

# %%
import math

import matplotlib.pyplot as plt
import torch

import minilm
from minilm import Config, Recipe
from minilm.experiments import causal_recipe, causal_transformer
from minilm.measure import eval_batches
from minilm.model import logn_factor
from minilm import measure
from minilm.plots import course_style

course_style()
P = minilm.profile()
corpus = minilm.default_corpus()
tok = corpus.tokenizer
L = P.train_len
print(f"profile {P.name}: seeds {P.seeds}, trained at L = {L}, {P.mlm_steps} masked-LM steps")

# %% [markdown]
# ## Deriving the factor
#
# Multiply a softmax row's logits $S_j$ by the multiplier $\lambda$ ($\lambda > 1$ sharpens):
# $a_j = e^{\lambda S_j}/Z$, $Z = \sum_{j=1}^n e^{\lambda S_j}$, and the row's entropy is
#
# $$H = -\sum_j a_j \ln a_j = \ln Z - \lambda \sum_j a_j S_j .$$
#
# Treat the keys as a sample: $Z \approx n\,\mathbb{E}[e^{\lambda S}]$, while the weighted mean
# $\sum_j a_j S_j$ does not depend on $n$ to first order. So
#
# $$H \approx \ln n + \ln \mathbb{E}[e^{\lambda S}] - \lambda\, \mathbb{E}_a[S].$$

# %% [markdown]
# The $\ln n$ term makes the entropy grow with length. If a row is dominated by its largest
# scores, the last two terms behave like $-\lambda \Delta$ ($\Delta > 0$), so holding $H$ needs
# $\lambda \propto \ln n$; with $\lambda = 1$ at $L$:
#
# $$\lambda(n) = \frac{\ln n}{\ln L} = \log_L n .$$
#
# ![The entropy of a row with four strong keys among n: with λ = 1 it rises almost like ln n; with λ = log_L n it rises much more slowly](figures/entropy_invariance.svg)
#
# **The idea.** $\ln n$ pushes the entropy up; a $\lambda$ growing like $\ln n$ pushes back. For
# a real row the push-back is partial: the weight outside the strong keys still spreads.
#
# <details><summary>A rule of thumb, not a theorem</summary>
#
# How the last two terms depend on $\lambda$ is set by the distribution of the scores. For
# Gaussian scores of variance $\sigma^2$ they are exactly $-\lambda^2\sigma^2/2$ (the weights tilt
# the mean to $\lambda\sigma^2$), and holding $H$ would need $\lambda \propto \sqrt{\ln n}$. Su's
# $\log_L n$ is the simple choice that is 1 at $L$ and grows with $n$. Below we check how well it
# holds a trained model's entropy; the optional part solves a model where $\ln n$ is exact.
#
# </details>

# %%
print("the factor log(n)/log(L) at a few lengths, L =", L)
print({n: round(float(logn_factor(n, L, causal=False)[0]), 3)
       for n in (L // 2, L, 2 * L, 4 * L, 16 * L)})

# %% [markdown]
# ## Su's small test, in miniature
#
# Su's 2021 post trained RoFormer-small (a RoPE Transformer) as a masked LM at $n = 64$ and
# measured MLM accuracy up to 1024, with and without the factor (printed below). Our tiny RoPE
# masked LM does the same, with $\log_L n$ at evaluation only: at one training length it is 1.

# %%
config = Config(vocab_size=tok.vocab_size, block="transformer", n_head=P.n_head, d_model=P.d_model,
                n_layer=P.n_layer, causal=False)
trained = minilm.pretrained_many({seed: (config, Recipe(task="mlm", length=L, steps=P.mlm_steps,
                                                        batch_size=P.batch_size, seed=seed))
                                  for seed in P.seeds})
models = {seed: model for seed, (model, _) in trained.items()}

lengths = [L * m for m in (1, 2, 4, 8, 16)]
settings = {"standard": None, "entropy-invariant": L}
accuracy, entropy = {}, {}
for seed, model in models.items():
    for label, base in settings.items():
        for T in lengths:
            accuracy[seed, label, T] = minilm.evaluate(model, corpus, task="mlm", length=T,
                                                       batch_size=max(2, 8192 // T), n_batches=8,
                                                       logn_base=base)["accuracy"]
            x = eval_batches(corpus, task="mlm", length=T, batch_size=max(2, 2048 // T),
                                    n_batches=1, device=model.device)[0][0]
            entropy[seed, label, T] = minilm.attention_entropy(model, x,
                                                               logn_base=base).mean().item()

# Su's RoFormer-small table, from his 2021 post (kexue.fm/archives/8823): MLM accuracy % at 64..1024
su = {"standard": [43.27, 36.53, 23.02, 15.12, 11.54],
      "entropy-invariant": [43.11, 41.17, 34.04, 20.15, 13.58]}
print(f"{'MLM accuracy %':<38}" + "".join(f"{T:>8}" for T in lengths))
for label in settings:
    print(f"{'Su, RoFormer-small, ' + label:<38}" + "".join(f"{v:8.2f}" for v in su[label]))
for seed in P.seeds:
    for label in settings:
        print(f"{f'here, seed {seed}, ' + label:<38}"
              + "".join(f"{100 * accuracy[seed, label, T]:8.2f}" for T in lengths))

# %% mystnb={"image": {"alt": "Two panels against evaluation length n (L to 16L, log scale) for the RoPE masked LM, standard and with log_L n, two seeds. Left: MLM accuracy falls with length for both, the factor a little higher at 4L and 8L. Right: mean attention entropy rises with length, much less with log_L n; dotted: uniform spreading."}}
fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
colors = {"standard": "tab:gray", "entropy-invariant": "tab:green"}
# the two coincide at n = L: other markers and lines, and the first drawn larger
markers = {"standard": "o-", "entropy-invariant": "s--"}
sizes = {"standard": 8, "entropy-invariant": 5}
for seed in P.seeds:
    for label in settings:
        first = seed == P.seeds[0]
        style = dict(color=colors[label], ms=sizes[label], alpha=1 if first else 0.5,
                     label=label if first else None)
        axes[0].plot(lengths, [100 * accuracy[seed, label, T] for T in lengths], markers[label],
                     **style)
        axes[1].plot(lengths, [entropy[seed, label, T] for T in lengths], markers[label], **style)
axes[1].plot(lengths, [entropy[P.seeds[0], "standard", L] + math.log(T / L) for T in lengths], "k:",
             lw=1, label="+ log(n/L): uniform spreading")
axes[0].set(ylabel="MLM accuracy (%)",
            title=f"Trained at {L}, evaluated longer (faint: seed {P.seeds[-1]})")
axes[1].set(ylabel="attention entropy (nats, mean)", title="Entropy grows; log n slows the rise")
for ax in axes:
    ax.set(xscale="log", xticks=lengths, xticklabels=lengths, xlabel="evaluation length n")
    ax.minorticks_off()
    ax.legend()
plt.show()

# %% [markdown]
# ### What we measured
#
# From $L$ to $16L$ the attention entropy rises by about 2 nats; with $\log_L n$, by a third to
# two fifths as much. Accuracy follows only a little: no difference at $2L$, one to two points
# gained at $4L$ and $8L$. At $16L$ both settings keep only a third of their accuracy at $L$
# (19-22% against 60-62%).
#
# <details><summary>What the next cell asserts</summary>
#
# On each seed: from $L$ to $16L$ the standard entropy rises by over 1.2 nats (1.78, 2.19) and the
# entropy-invariant one by at least 0.5 nats less (0.70, 0.75), each the other's control. ("Under
# half", the earlier bound, held on seed 50 by only 0.07 nats.) The gain is over
# half a point at $4L$ and $8L$ (1.19-1.89; control: 0 at $L$) and within one point at $2L$
# ($-0.17$, $+0.18$; the $8L$ gain fails it).
#
# </details>

# %%
for seed in P.seeds:
    rise = {label: entropy[seed, label, 16 * L] - entropy[seed, label, L] for label in settings}
    gain = {T: accuracy[seed, "entropy-invariant", T] - accuracy[seed, "standard", T]
            for T in lengths}
    print(f"seed {seed}: entropy rise L->16L {({k: round(v, 2) for k, v in rise.items()})};  "
          f"accuracy gain (points) "
          + str({T: round(100 * g, 2) for T, g in gain.items()}))
    assert rise["standard"] > 1.2 and rise["entropy-invariant"] < rise["standard"] - 0.5, rise
    assert gain[4 * L] > 0.005 and gain[8 * L] > 0.005, gain   # control: gain[L] is exactly 0
    assert abs(gain[2 * L]) < 0.01, gain   # a bound, not a sign; gain[8L] fails it

# %% [markdown]
# **Next to Su's numbers.** The same ordering from $4L$ on, far smaller gains: Su +4.6 points at
# $2L$ and +11 at $4L$; we, nothing measurable at $2L$ and +1.2 to +1.9 at $4L$-$8L$. A likely
# reason: past $L$, RoPE turns queries and keys by angles our models never met, and no multiplier
# fixes wrong scores (lessons [6](06_nope.ipynb)-[7](07_temperature.ipynb) return to it).

# %% [markdown]
# ## The causal case
#
# The factor at evaluation only, on [lesson 1](01_gau.ipynb)'s *causal* Transformer (RoPE, trained at $L$):

# %%
causal_lengths = [L, 2 * L, 4 * L, 8 * L]
causal = {}
for seed in P.seeds:
    # lesson 1's model
    model, _ = minilm.pretrained(causal_transformer(P, tok.vocab_size), causal_recipe(P, seed))
    for label, base in settings.items():
        causal[seed, label] = minilm.loss_by_length(model, corpus, causal_lengths, logn_base=base)
        print(f"seed {seed}, {label:<18} causal loss by length: "
              + "  ".join(f"{T}: {v:.3f}" for T, v in causal[seed, label].items()))

# %% [markdown]
# Row $i$ sees $n_i = i + 1$ keys, so the factor is below 1 for the first $L$ positions, where it
# *flattens* rows the model learned to be sharp. The loss gets slightly *worse* at $L$ (0.04 nats
# on both seeds), and no better at $8L$, where RoPE distances never seen in training dominate.
#
# <details><summary>What the next cell asserts</summary>
#
# On each seed the factor raises the loss at $L$ by over 0.02 nats (measured +0.041, +0.040;
# control: the standard model against itself, 0). At $8L$ it moved the loss by +0.048 and $-0.002$
# nats while the two seeds' losses differ by 0.54 (2.594, 3.131): printed, not asserted.
#
# </details>

# %%
for seed in P.seeds:
    change = {T: causal[seed, "entropy-invariant"][T] - causal[seed, "standard"][T]
              for T in (L, 8 * L)}
    print(f"seed {seed}: the factor changes the causal loss by {change[L]:+.3f} at L "
          f"and {change[8 * L]:+.3f} at 8L")
    assert change[L] > 0.02, seed   # control: standard against itself, change 0

# %% [markdown]
# ## Why relu² cannot take a multiplier
#
# Multiply a row's scores by $\lambda > 0$. Since
# $\mathrm{relu}(\lambda x)^2 = \lambda^2\, \mathrm{relu}(x)^2$, every term is scaled by
# $\lambda^2$, which cancels once the row is normalised (fix 3 of [lesson 4](04_three_fixes.ipynb)), as for any positively
# homogeneous $f(\lambda x) = \lambda^p f(x)$. In softmax two weights with scores $a > b$ have the
# ratio $e^{\lambda(a - b)}$, unbounded: $\lambda$ can sharpen a row as far as needed. The cell
# multiplies one set of scores by four values of $\lambda$:
#
# <details><summary>A function that is not homogeneous</summary>
#
# A power-like function that is not homogeneous, such as $\mathrm{relu}^2 + \mathrm{relu}$, changes
# only a little: the ratio of two weights, $(a^2 + a/\lambda)/(b^2 + b/\lambda)$, moves from $a/b$
# towards $(a/b)^2$ as $\lambda$ grows, no further.
#
# </details>

# %%
g = torch.Generator().manual_seed(0)
q, k, v = (torch.randn(1, 1, 32, 16, generator=g) for _ in range(3))
print(f"{'lambda':>11}  {'relu²/row sum: max |change|':>28}  "
      f"{'softmax: max |change|':>22}  softmax entropy")
_, relu_base = minilm.attend(q, k, v, norm="relu2_norm", returns="weights")
_, soft_base = minilm.attend(q, k, v, returns="weights")
changes = {}
for lam in (0.5, 1.0, 2.0, 4.0):
    _, relu_w = minilm.attend(q * lam, k, v, norm="relu2_norm", returns="weights")
    _, soft_w = minilm.attend(q * lam, k, v, returns="weights")
    changes[lam] = ((relu_w - relu_base).abs().max().item(),
                    (soft_w - soft_base).abs().max().item())
    print(f"{lam:11.1f}  {changes[lam][0]:28.2e}  {changes[lam][1]:22.3f}  "
          f"{measure.entropy(soft_w).mean():.3f}")

# %% [markdown]
# relu² is exactly unchanged at every $\lambda$; softmax sharpens as $\lambda$ grows (its entropy
# falls from 2.43 nats at 0.5 to 0.82 at 4).
#
# <details><summary>What the next cell asserts</summary>
#
# An identity, not a measurement: relu² weights change by under $10^{-5}$ at every $\lambda$
# (measured 0, to float precision). Control: softmax in the same loop, asserted to change by over
# 0.05 at every $\lambda$ but 1 (measured 0.272 to 0.708).
#
# </details>

# %%
for lam, (relu_change, soft_change) in changes.items():
    assert relu_change < 1e-5, lam
    assert lam == 1.0 or soft_change > 0.05, lam

# %% [markdown]
# ## Optional: why $\ln n$, in a model where it is exact
#
# *Optional: a solvable model of attention. Nothing later depends on it; skip to "Our numbers next
# to the sources'".*
#
# Chen et al. (ICLR 2026, arXiv:2510.05554) prove the derivation's $\ln n$ in a solvable model: $n$
# unit vectors $y_i$, each query, key and value at once, with scores
# $\beta\,\langle y_i, y_j\rangle$, $\beta = \kappa \ln n$ (printed "kappa"). Too small a $\kappa$
# averages all outputs into one (*rank collapse*); too large leaves each token on itself
# (*identity*).

# %% [markdown]
# If every two tokens have inner product $\rho$ (a regular simplex), a token keeps the weight
#
# $$A_{ii} = \frac{1}{1 + (n-1)\,e^{-\beta(1-\rho)}}$$
#
# on itself: as $n$ grows it goes to 0 below $\kappa_c = 1/(1-\rho)$ and to 1 above. We take
# $\rho = 0.5$ ($\kappa_c = 2$), up to $n = 16384$.
#
# <details><summary>The derivation, and the cosine between outputs</summary>
#
# Row $i$ holds $\beta$ for itself and $\beta\rho$ for each of the $n - 1$ others (only the gap
# counts: a constant in every score cancels in a softmax), which gives $A_{ii}$ above; each other
# token gets $(1 - A_{ii})/(n-1)$. With $\beta = \kappa \ln n$,
# $(n-1)\,e^{-\beta(1-\rho)} \approx n^{1 - \kappa(1-\rho)}$; at $\kappa_c$, $A_{ii} = n/(2n-1)
# \approx 1/2$ for every $n$.
#
# Token $i$ outputs $o_i = \sum_j A_{ij}\, y_j$. Since $\sum_j A_{ij} = 1$ and $\langle y_j,
# y_l\rangle = \rho + (1-\rho)\,[j = l]$,
#
# $$\langle o_i, o_k\rangle = \rho + (1-\rho)\,\langle A_i, A_k\rangle ,$$
#
# so two rows of $A$ give the cosine between two outputs, $\big(\rho + (1-\rho)\langle A_i,
# A_k\rangle\big) / \big(\rho + (1-\rho)\|A_i\|^2\big)$. Below $\kappa_c$ the rows spread, $\langle
# A_i, A_k\rangle$ and $\|A_i\|^2$ go to 0 and the cosine to 1: averaging many tokens keeps only
# what they share. Above $\kappa_c$, $A$ goes to the identity and the cosine to $\rho$. Two rows
# are enough at any $n$; the full matrix at $n = 16384$ would take 1 GiB.
#
# </details>
#
# <details><summary>What the next cell asserts</summary>
#
# The closed form and the two-row computation match attention on explicit simplices ($n$ = 8, 64,
# 256; $\kappa$ from 1 to 3) within $10^{-9}$ (measured under $10^{-12}$). Control: the classic
# slip, $n$ for $n - 1$, gives 0.5000 instead of 0.5333 at $n = 8$, $\kappa = 2$ (asserted off by
# over $10^{-3}$).
#
# </details>

# %%
# One thread for this section, given back at its end: its tensors are small, and on a busy
# 2-core machine two threads can spend most of their time waiting for each other; with one
# thread the sums also do not depend on the machine's core count.
threads_before = torch.get_num_threads()
torch.set_num_threads(1)

RHO = 0.5                                        # the tokens' pairwise inner product: kappa_c = 2
NS = [64, 256, 1024, 4096, 16384]
KAPPAS = [0.5 + 0.125 * i for i in range(29)]    # 0.5 to 4: the grid of the simulations
# the same range, finer: the exact model is cheap
FINE_KAPPAS = [round(0.5 + 0.025 * i, 3) for i in range(141)]
SHOWN = [1.0, 1.5, 2.0, 2.5, 3.0]


def simplex_tokens(n, rho):
    """n unit vectors with pairwise inner product rho: sqrt(1 - rho) e_i + sqrt(rho) u,
    in n + 1 dimensions."""
    return torch.cat([math.sqrt(1 - rho) * torch.eye(n, dtype=torch.float64),
                      torch.full((n, 1), math.sqrt(rho), dtype=torch.float64)], 1)


def closed_form_self_weight(n, rho, beta):
    return 1 / (1 + (n - 1) * math.exp(-beta * (1 - rho)))


def self_weight_and_cosine(gram_rows, tokens, beta):
    """Attention of the tokens on themselves, scores beta <y_i, y_j>, for the first queries,
    whose inner products with every token are `gram_rows`: their mean self-weight A_ii and the
    mean cosine between their outputs o_i = sum_j A_ij y_j, over pairs i != k."""
    rows = len(gram_rows)
    weights = torch.softmax(beta * gram_rows, -1)
    outputs = torch.nn.functional.normalize(weights @ tokens, dim=-1)
    cosines = outputs @ outputs.T
    mean_cosine = (cosines.sum() - cosines.trace()) / (rows * (rows - 1))
    return weights.diagonal().mean().item(), mean_cosine.item()


def simplex_self_weight_and_cosine(n, rho, betas):
    """The same two numbers for the exact simplex at any n, from two rows of A per beta: every
    row is the others up to a permutation, and <o_i, o_k> = rho + (1 - rho) <A_i, A_k>, so no
    n x n matrix is needed."""
    betas = torch.as_tensor(betas, dtype=torch.float64).reshape(-1, 1, 1)
    # rows 0 and 1: score 1 for themselves, rho for the rest
    own = torch.eye(2, n, dtype=torch.float64)
    rows = torch.softmax(betas * (rho + (1 - rho) * own), -1)
    output_gram = rho + (1 - rho) * rows @ rows.transpose(-1, -2)
    return rows[:, 0, 0], output_gram[:, 0, 1] / output_gram[:, 0, 0]


worst = {"self-weight": 0.0, "cosine": 0.0, "closed form": 0.0}
for n in (8, 64, 256):
    tokens = simplex_tokens(n, RHO)
    for kappa in SHOWN:
        beta = kappa * math.log(n)
        direct = self_weight_and_cosine(tokens @ tokens.T, tokens, beta)
        two_rows = [float(x) for x in simplex_self_weight_and_cosine(n, RHO, beta)]
        worst["self-weight"] = max(worst["self-weight"], abs(direct[0] - two_rows[0]))
        worst["cosine"] = max(worst["cosine"], abs(direct[1] - two_rows[1]))
        worst["closed form"] = max(worst["closed form"],
                                   abs(closed_form_self_weight(n, RHO, beta) - direct[0]))
# rounding varies with threads, so a difference under 1e-12 is printed as such
print(f"largest difference from attention on an explicit simplex "
      f"(n = 8, 64, 256; kappa = {SHOWN}):",
      {k: "under 1e-12" if v < 1e-12 else f"{v:.1e}" for k, v in worst.items()})
assert max(worst.values()) < 1e-9, worst
# control: the classic slip, n for n - 1, misses the direct softmax by far more than that
slip = 1 / (1 + 8 * math.exp(-2 * math.log(8) * (1 - RHO)))
right = closed_form_self_weight(8, RHO, 2 * math.log(8))
print(f"with n for n - 1 (n = 8, kappa = 2): {slip:.4f} instead of {right:.4f}")
assert abs(slip - right) > 1e-3

exact = {}
for n in NS:
    self_weights, cosines = simplex_self_weight_and_cosine(n, RHO,
                                                           torch.tensor(FINE_KAPPAS) * math.log(n))
    exact.update({(n, kappa): (w, c)
                  for kappa, w, c in zip(FINE_KAPPAS, self_weights.tolist(), cosines.tolist())})
print(f"\nexact simplex, rho = {RHO}: self-weight / mean output cosine at kappa =", SHOWN)
for n in NS:
    print(f"n = {n:>5}: "
          + "   ".join(f"{exact[n, g][0]:.3f} / {exact[n, g][1]:.3f}" for g in SHOWN))

# %% [markdown]
# At $\kappa = 2$ the self-weight stays at 1/2 (0.504 to 0.500); as $n$ grows it falls at
# $\kappa = 1.5$ (0.264 to 0.081) and rises at 2.5 (0.742 to 0.919). Real tokens are never
# equidistant: the next cells perturb the simplex.
#
# <details><summary>The almost simplex, and how the transition is read</summary>
#
# The paper also treats nearly-simplex tokens, where a middle phase can appear; we perturb the
# simplex our own way: $y_i = \sqrt{\rho}\, u + \sqrt{1-\rho}\, z_i$, with $u$ shared and $z_i$
# uniform on the unit sphere of a `dim`-dimensional space orthogonal to $u$. The inner products
# are then $\rho$ give or take $(1-\rho)/\sqrt{\text{dim}}$ (one standard deviation): 0.0625 at
# dim 64, 0.125 at dim 16. (The exact simplex needs dim $\ge n$.) This one is simulated, on 128
# rows against all $n$ keys.
#
# Then, for $\rho$ = 0, 0.25, 0.5, 0.75, bisection on a direct softmax at $n = 16384$ finds the
# $\kappa$ at which the self-weight is 1/2; if $\kappa_c = 1/(1-\rho)$, $\kappa\,(1-\rho)$ is the
# same for every $\rho$. At $\rho = 0.5$ it also measures the width of the transition: the range
# of $\kappa$ over which the self-weight climbs from 0.1 to 0.9.
#
# </details>

# %%
# queries per n: the means are over 128 rows (8128 pairs for the cosine), not all n
QUERY_ROWS = 128
# the perturbation: inner products off rho by (1 - rho) / sqrt(dim) = 0.0625 and 0.125
DIMS = (64, 16)
SEED = 0


def almost_simplex_tokens(n, rho, dim, seed):
    """sqrt(rho) u + sqrt(1 - rho) z_i, z_i uniform on the unit sphere of the dim coordinates
    orthogonal to u: unit vectors whose inner products are rho + (1 - rho) <z_i, z_j>, a simplex
    up to noise of size 1 / sqrt(dim)."""
    z = torch.randn(n, dim, generator=torch.Generator().manual_seed(seed))
    z = torch.nn.functional.normalize(z, dim=-1)
    # float32: enough for means
    return torch.cat([torch.full((n, 1), math.sqrt(rho)), math.sqrt(1 - rho) * z], 1)


def almost_simplex_grid(seed):
    """{(dim, n, kappa): (self-weight, output cosine)}; each n takes the first n of one draw
    of max(NS) tokens."""
    results = {}
    for dim in DIMS:
        tokens = almost_simplex_tokens(max(NS), RHO, dim, seed)
        # computed once: each n reads its own corner of it
        gram_rows = tokens[:QUERY_ROWS] @ tokens.T
        for n in NS:
            for kappa in KAPPAS:
                results[dim, n, kappa] = self_weight_and_cosine(
                    gram_rows[:min(n, QUERY_ROWS), :n], tokens[:n], kappa * math.log(n))
    return results


almost = almost_simplex_grid(SEED)
for dim in DIMS:
    print(f"almost simplex, dim = {dim} "
          f"(inner products {RHO} +- {(1 - RHO) / math.sqrt(dim):.4f}), seed {SEED}: "
          "self-weight / mean output cosine at kappa =", SHOWN)
    for n in NS:
        cells = (f"{almost[dim, n, g][0]:.3f} / {almost[dim, n, g][1]:.3f}" for g in SHOWN)
        print(f"n = {n:>5}: " + "   ".join(cells))

# %%
def kappa_where(self_weight_at, level, low, high, steps):
    """The kappa in [low, high] at which an increasing self-weight curve reaches `level`,
    by bisection."""
    for _ in range(steps):
        middle = (low + high) / 2
        low, high = (middle, high) if self_weight_at(middle) < level else (low, middle)
    return (low + high) / 2


def exact_self_weight_curve(n, rho):
    """kappa -> the exact simplex's self-weight at n, by a direct softmax over its row of scores."""
    scores = torch.full((n,), rho, dtype=torch.float64)
    scores[0] = 1.0
    return lambda kappa: torch.softmax(kappa * math.log(n) * scores, -1)[0].item()


def almost_self_weight_curve(n, rho, dim, seed):
    """kappa -> the mean self-weight of the first QUERY_ROWS rows of an almost simplex,
    by a direct softmax."""
    tokens = almost_simplex_tokens(n, rho, dim, seed)
    gram_rows = tokens[:min(n, QUERY_ROWS)] @ tokens.T
    return lambda kappa: torch.softmax(kappa * math.log(n) * gram_rows, -1).diagonal().mean().item()


def interpolated_kappa(grid, values, level):
    """Where a curve sampled on `grid` first reaches `level`, by linear interpolation between
    grid points."""
    for (g0, v0), (g1, v1) in zip(zip(grid, values), zip(grid[1:], values[1:])):
        if v0 < level <= v1:
            return g0 + (level - v0) / (v1 - v0) * (g1 - g0)
    return math.nan


RHOS = [0.0, 0.25, 0.5, 0.75]
n = max(NS)
critical = {"exact": [kappa_where(exact_self_weight_curve(n, rho), 0.5, 0, 4 / (1 - rho), steps=30)
                      for rho in RHOS]}
# each step costs a softmax over 128 x 16384 scores: 12 halvings, to 0.001 / (1 - rho)
for dim in DIMS:
    critical[f"dim {dim}"] = [kappa_where(almost_self_weight_curve(n, rho, dim, SEED), 0.5,
                                          0.5 / (1 - rho), 4 / (1 - rho), steps=12)
                              for rho in RHOS]
print(f"kappa where the self-weight is 1/2 at n = {n}, "
      f"and (in brackets) that kappa times (1 - rho):")
print(f"{'rho':>6} {'1/(1-rho)':>10} " + " ".join(f"{name:>17}" for name in critical))
for i, rho in enumerate(RHOS):
    print(f"{rho:>6} {1 / (1 - rho):>10.4f} "
          + " ".join(f"{values[i]:>9.4f} ({values[i] * (1 - rho):.3f})"
                     for values in critical.values()))

widths = {}
for n in NS:
    curve = exact_self_weight_curve(n, RHO)
    widths["exact", n] = (kappa_where(curve, 0.9, 0, 4 / (1 - RHO), steps=30)
                          - kappa_where(curve, 0.1, 0, 4 / (1 - RHO), steps=30))
    # no new softmax: read off the simulated grid
    sampled = [almost[DIMS[0], n, g][0] for g in KAPPAS]
    widths[f"dim {DIMS[0]}", n] = (interpolated_kappa(KAPPAS, sampled, 0.9)
                                   - interpolated_kappa(KAPPAS, sampled, 0.1))
print(f"\nwidth in kappa of the transition (self-weight 0.1 -> 0.9), rho = {RHO}; "
      f"dim {DIMS[0]}: interpolated on the grid of step {KAPPAS[1] - KAPPAS[0]}")
print(f"{'n':>6} {'exact':>9} {'dim ' + str(DIMS[0]):>9} {'exact, in beta':>15}")
for n in NS:
    print(f"{n:>6} {widths['exact', n]:>9.3f} {widths[f'dim {DIMS[0]}', n]:>9.3f} "
          f"{widths['exact', n] * math.log(n):>15.3f}")
print(f"dim {DIMS[1]} is left out: at kappa = {KAPPAS[-1]}, the end of the grid, "
      f"its self-weight is only "
      + ", ".join(f"{almost[DIMS[1], n, KAPPAS[-1]][0]:.2f}" for n in NS) + f" for n = {NS}")

# %% mystnb={"image": {"alt": "Figure 1, a 2 by 3 grid: self-weight A_ii (top) and output cosine (bottom) against kappa, a line per n, for the exact simplex and two noisy ones; the exact one switches at kappa = 1/(1-rho), more sharply as n grows. Figure 2: the switching kappa against 1/(1-rho), near the diagonal; the switch's width, falling with n."}}
colors = dict(zip(NS, plt.cm.viridis([0.0, 0.25, 0.5, 0.7, 0.9])))
panels = {"exact simplex": (FINE_KAPPAS, lambda n, g: exact[n, g])}
panels.update({fr"almost, dim {dim} ($\pm${(1 - RHO) / math.sqrt(dim):.3f})":
               (KAPPAS, lambda n, g, dim=dim: almost[dim, n, g]) for dim in DIMS})
fig, axes = plt.subplots(2, 3, figsize=(11, 6.2), sharex=True, sharey="row")
for column, (title, (grid, value)) in enumerate(panels.items()):
    for n in NS:
        for row in (0, 1):
            axes[row, column].plot(grid, [value(n, g)[row] for g in grid], color=colors[n],
                                   label=f"n = {n}")
    axes[0, column].set_title(title)
    for row in (0, 1):
        axes[row, column].axvline(1 / (1 - RHO), color="k", ls=":", lw=1)
    axes[1, column].axhline(RHO, color="gray", ls="--", lw=1)
    axes[1, column].set_xlabel(r"$\kappa$ in $\beta = \kappa \log n$")
axes[0, 0].set_ylabel("self-weight $A_{ii}$")
axes[1, 0].set_ylabel("mean cosine between outputs")
axes[0, 0].legend()
fig.suptitle(rf"$\rho$ = {RHO}; dotted: $\kappa$ = 1/(1-$\rho$); "
             r"dashed: the tokens' own cosine $\rho$")
plt.show()

fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
line = [1 / (1 - rho) for rho in RHOS]
axes[0].plot(line, line, "k:", lw=1, label=r"$\kappa$ = 1/(1-$\rho$)")
for (name, values), marker in zip(critical.items(), "os^"):
    axes[0].plot(line, values, marker, label=name, alpha=0.8)
axes[0].set(xlabel=r"1/(1-$\rho$)", ylabel=rf"$\kappa$ where $A_{{ii}}$ = 1/2, n = {max(NS)}",
            title=r"$\rho$ = " + ", ".join(map(str, RHOS)))
for name, style in (("exact", "o-"), (f"dim {DIMS[0]}", "s--")):
    axes[1].plot(NS, [widths[name, n] for n in NS], style, label=name)
axes[1].set(xscale="log", xticks=NS, xticklabels=NS, xlabel="n",
            ylabel=r"width in $\kappa$ ($A_{ii}$: 0.1 to 0.9)",
            title="the transition sharpens", ylim=(0, None))
axes[1].minorticks_off()
for ax in axes:
    ax.legend()
plt.show()

# %% [markdown]
# ### What the simulations show
#
# The exact simplex switches phase at $\kappa = 1/(1-\rho)$ for every $\rho$, more sharply as $n$
# grows. In dim 64 it switches 8.8% higher; dim 16 has a middle phase and no identity up to
# $\kappa = 4$ (sizes up to $n = 16384$, not the paper's $n \to \infty$).
#
# <details><summary>What each result means</summary>
#
# - **Exact simplex.** In $\beta$ the transition does not sharpen at all: it moves to ever larger
#   $\beta$, by $\ln n/(1-\rho)$, and dividing by $\ln n$ is what squeezes it.
# - **Dim 64:** the transition sits at $\kappa = 1.088/(1-\rho)$. The noise gives each token
#   neighbours above $\rho$, more and closer ones as $n$ grows, so keeping its own weight takes a
#   larger $\kappa$.
# - **Dim 16:** at $\kappa = 2$ the self-weight falls from 0.373 to 0.070 as $n$ grows, yet the
#   output cosine stays near 0.79: the weight goes to the nearest neighbours, which point almost
#   the token's way, so outputs are local averages and stay apart. In 16 dimensions the nearest
#   token closes in as $n$ grows, faster than $\kappa \ln n$ keeps up: no identity phase.
#
# </details>
#
# <details><summary>What the next cell asserts</summary>
#
# Exact simplex: $\kappa_c(1-\rho)$ is 1 within 1% (measured to four decimals); at half and 1.5
# times $\kappa_c$ the two phases appear (controls); the width shrinks over 2x in $\kappa$ (2.333),
# not in $\beta$ (1.000, control). Seed 0's almost simplex: dim 64 3-15% higher (8.8%); dim 16's
# middle phase and falling self-weights, which the exact simplex lacks.
#
# </details>
#
# <details><summary>The numbers behind each assertion</summary>
#
# **The exact simplex** (a deterministic computation, no seed):
# - The $\kappa$ at which the self-weight is 1/2 at $n = 16384$, read from the direct softmax, is
#   $1/(1-\rho)$ to four decimals for every $\rho$ (1.0000, 1.3333, 2.0000, 4.0000). Asserted
#   within 1%, with its controls: at half that $\kappa$ the self-weight is 0.0078 and the output
#   cosine 0.9999 (collapse; asserted under 0.05 and over 0.95); at one and a half times it,
#   0.9922 and 0.5039 (identity, the cosine back at $\rho$; asserted over 0.95 and under
#   $\rho + 0.05$).
# - The $\kappa$-range from self-weight 0.1 to 0.9 shrinks from 2.113 at $n = 64$ to 0.906 at
#   $n = 16384$, a factor 2.333, which is $\ln 16384/\ln 64$: the closed form puts the width at
#   $2\ln 9/((1-\rho)\ln n)$. Asserted: a factor above 2. Control: measured in $\beta$ instead of
#   $\kappa$, the width is 8.789 at every $n$ (ratio 1.000, asserted within 1% of 1).
#
# **The almost simplex** (seed 0; set `SEED` above to try others). Seed 0 draws 16384 tokens, and
# each $n$ uses the first $n$. We compute 128 rows (all 64 at $n = 64$), the first queries, against
# all $n$ keys; the tokens are independent, so these rows are a random sample. The self-weight is
# their mean (also in the bisection) and the output cosine the mean over their pairs (8128 from
# $n = 256$ on).
# - **dim 64** (inner products $0.5 \pm 0.0625$): $\kappa\,(1-\rho) = 1.088$ where the self-weight
#   is 1/2, for every $\rho$; width 2.276 at $n = 64$ and 1.087 at $n = 16384$, a factor 2.09.
#   Asserted at $\rho = 0.5$: between 3% and 15% above the simplex (control: the exact simplex,
#   0%), and a width factor above 1.5.
# - **dim 16** (inner products $0.5 \pm 0.125$), the middle phase: at $\kappa = 2$ the self-weight
#   falls from 0.373 at $n = 64$ to 0.070 at $n = 16384$ while the output cosine goes from 0.788
#   to 0.790. Asserted: at $n = 16384$ some $\kappa$ of the grid has a self-weight under 0.1 with
#   an output cosine under 0.85 (lowest 0.772); the controls, the exact simplex and dim 64, have no
#   such $\kappa$ (their lowest cosines there are 0.993 and 0.961, asserted above 0.9).
# - **dim 16**, no identity phase: at every $\kappa$ of the grid (29 of 29, up to 4) the
#   self-weight is lower at $n = 16384$ than at $n = 64$ (asserted). Control: the exact simplex,
#   where it is higher for every $\kappa$ above 2 (asserted: it falls only up to 2).
#
# </details>

# %%
n = max(NS)
# the exact simplex's critical kappa, read from the direct softmax at n = 16384, is 1 / (1 - rho)
# within 1%
for rho, kappa_hat in zip(RHOS, critical["exact"]):
    assert abs(kappa_hat * (1 - rho) - 1) < 0.01, (rho, kappa_hat)
# the controls: half and one and a half times that kappa are in the two phases
below, above = ([float(x) for x in
                 simplex_self_weight_and_cosine(n, RHO, f / (1 - RHO) * math.log(n))]
                for f in (0.5, 1.5))
print(f"exact, n = {n}: at kappa = 0.5 / (1 - rho) self-weight {below[0]:.4f}, "
      f"output cosine {below[1]:.4f}; "
      f"at 1.5 / (1 - rho) {above[0]:.4f}, {above[1]:.4f}")
# rank collapse: every output points the same way
assert below[0] < 0.05 and below[1] > 0.95
# identity: outputs as far apart as the tokens themselves
assert above[0] > 0.95 and above[1] < RHO + 0.05
# the transition sharpens: in kappa, its width at n = 16384 is under half of that at n = 64
ratio_kappa = widths["exact", min(NS)] / widths["exact", n]
ratio_beta = ratio_kappa * math.log(min(NS)) / math.log(n)
print(f"exact: width at n = {min(NS)} over width at n = {n}: {ratio_kappa:.3f} in kappa, "
      f"{ratio_beta:.3f} in beta")
assert ratio_kappa > 2, ratio_kappa
assert abs(ratio_beta - 1) < 0.01, ratio_beta      # the control: in beta the width never changes

# the almost simplex
shift = critical["dim 64"][RHOS.index(RHO)] * (1 - RHO)
ratio_64 = widths["dim 64", min(NS)] / widths["dim 64", n]
print(f"dim 64: critical kappa x (1 - rho) = {shift:.3f}; "
      f"width ratio n = {min(NS)} -> {n}: {ratio_64:.2f}")
# control: the exact simplex, 1.000
assert 1.03 < shift < 1.15 and ratio_64 > 1.5, (shift, ratio_64)
curves = {"exact": lambda g: exact[n, g],
          **{f"dim {dim}": (lambda g, dim=dim: almost[dim, n, g]) for dim in DIMS}}
lowest = {name: min(cosine for self_weight, cosine in map(curve, KAPPAS) if self_weight < 0.1)
          for name, curve in curves.items()}
print(f"n = {n}, lowest output cosine where the self-weight is under 0.1:",
      {k: round(v, 3) for k, v in lowest.items()})
assert lowest["dim 16"] < 0.85, lowest                             # the middle phase
assert lowest["exact"] > 0.9 and lowest["dim 64"] > 0.9, lowest   # the controls: none there
falls = {name: [g for g in KAPPAS if at(n, g) < at(min(NS), g)]
         for name, at in (("dim 16", lambda n, g: almost[16, n, g][0]),
                          ("exact", lambda n, g: exact[n, g][0]))}
print(f"kappas of the grid ({KAPPAS[0]} to {KAPPAS[-1]}) where the self-weight falls "
      f"from n = {min(NS)} to {n}:",
      {name: f"{len(g)} of {len(KAPPAS)}, up to {max(g)}" for name, g in falls.items()})
assert len(falls["dim 16"]) == len(KAPPAS)    # no identity phase on the grid
# the control: above kappa_c the exact simplex rises
assert max(falls["exact"]) <= 1 / (1 - RHO)

# %% [markdown]
# ### Back to Su's $\log_L n$
#
# Holding a simplex row's self-weight takes exactly a multiplier $1 + c \ln s$ on $\beta(L)$ (with
# $n - 1$ for $n$), $c$ set by the row. Su's $\log_L n$, with $c = 1/\ln L$, is right for the row at
# the critical point at $L$.
#
# <details><summary>The algebra</summary>
#
# Solving the closed form for the $\beta$ that holds the self-weight at $w$:
#
# $$\beta(n) = \frac{\ln(n-1) + \ln\frac{w}{1-w}}{1-\rho}.$$
#
# $\beta$ grows by about $\ln 2/(1-\rho)$ each time $n$ doubles, as the derivation at the top
# argued, but now exactly. As a multiplier on the $\beta$ that gave $w$ at a length $L$,
#
# $$\frac{\beta(n)}{\beta(L)} = 1 + c\,\ln\frac{n-1}{L-1},
# \qquad c = \frac{1}{\beta(L)\,(1-\rho)},$$
#
# the $1 + c \ln s$ family with $n - 1$ for $n$. Su's $\log_L n = 1 + \ln(n/L)/\ln L$ has
# $c = 1/\ln L$, that is $\beta(L)(1-\rho) = \ln L$: the row at $\kappa = 1/(1-\rho)$ at $L$.
#
# </details>
#
# <details><summary>What the next cell asserts</summary>
#
# Su's $\log_L n$ is within 1% of the ratio that holds the critical row's self-weight at every $n$
# up to 16384 (measured within 0.3%: 2.3333 against 2.3371). Control: a row set at self-weight 0.9
# needs a ratio more than 10% below Su's (measured 1.8771, 20% below).
#
# </details>

# %%
n_set = NS[0]   # where beta is set: the part the training length plays for a model


def simplex_entropy(n, rho, beta):
    """Row entropy of the exact simplex: weight w on itself, (1 - w) / (n - 1) on each of
    the others."""
    w = closed_form_self_weight(n, rho, beta)
    others = (1 - w) / (n - 1)
    return -w * math.log(w) - (1 - w) * math.log(others) if others > 0 else 0.0


def beta_holding(quantity, n, target):
    """The beta at which quantity(n, RHO, beta), monotone in beta, equals target (bisection)."""
    low, high = 0.0, 60.0
    rising = quantity(n, RHO, high) > quantity(n, RHO, low)
    for _ in range(60):
        middle = (low + high) / 2
        below_target = quantity(n, RHO, middle) < target
        low, high = (middle, high) if below_target == rising else (low, middle)
    return (low + high) / 2


def beta_for(self_weight, n):
    """The closed form solved for beta: the beta at which a row of n keeps `self_weight` on
    itself."""
    return (math.log(n - 1) + math.log(self_weight / (1 - self_weight))) / (1 - RHO)


beta_critical = math.log(n_set) / (1 - RHO)   # kappa = 1 / (1 - rho) at n_set
print(f"a row at the critical point at n = {n_set} (beta = {beta_critical:.3f}, self-weight "
      f"{closed_form_self_weight(n_set, RHO, beta_critical):.4f}): the beta that holds it, "
      f"over beta at {n_set}")
print(f"{'n':>6} {'Su: log_L n':>12} {'same self-weight':>17} {'same entropy':>13}   "
      f"entropy under Su's rule (nats)")
held = {}
for n in NS:
    held[n] = {name: beta_holding(quantity, n, quantity(n_set, RHO, beta_critical)) / beta_critical
               for name, quantity in (("self-weight", closed_form_self_weight),
                                      ("entropy", simplex_entropy))}
    su = math.log(n) / math.log(n_set)
    print(f"{n:>6} {su:>12.4f} {held[n]['self-weight']:>17.4f} {held[n]['entropy']:>13.4f}   "
          f"{simplex_entropy(n, RHO, beta_critical * su):.3f}")

n = max(NS)
print(f"\nrows set elsewhere at n = {n_set}: their self-weight at n = {n} under two rules, "
      f"and what holding it takes")
print(f"{'at n_set':>8} {'beta fixed':>11} {'Su: beta log_L n':>17} {'holding: beta ratio':>20} "
      f"{'c in 1 + c ln s':>16}")
ratio_held = {}
for w_set in (0.1, 0.5, 0.9):
    beta_set = beta_for(w_set, n_set)
    ratio_held[w_set] = beta_for(w_set, n) / beta_set
    print(f"{w_set:>8} {closed_form_self_weight(n, RHO, beta_set):>11.4f} "
          f"{closed_form_self_weight(n, RHO, beta_set * math.log(n) / math.log(n_set)):>17.4f} "
          f"{ratio_held[w_set]:>20.4f} {1 / (beta_set * (1 - RHO)):>16.3f}")
print(f"Su's rule: ratio {math.log(n) / math.log(n_set):.4f}, "
      f"c = 1 / ln {n_set} = {1 / math.log(n_set):.3f}")

# Su's log_L n holds the critical row's self-weight to within 1% at every n; the control, a row
# set at self-weight 0.9, needs a ratio more than 10% below Su's
assert all(abs(held[n]["self-weight"] / (math.log(n) / math.log(n_set)) - 1) < 0.01
           for n in NS), held
assert ratio_held[0.9] < 0.9 * math.log(max(NS)) / math.log(n_set), ratio_held
torch.set_num_threads(threads_before)

# %% [markdown]
# Su's rule holds the critical row (a ratio of 2.3333 at $n = 16384$, where 2.3371 is needed) and
# pushes others deeper into their phase (0.9 to 0.9939, 0.1 to 0.0057). $\ln n$ is the right
# *growth*; how much a row needs depends on where it started.
#
# <details><summary>Reading the table, row by row</summary>
#
# - The critical row has self-weight 0.5039 at $n = 64$. The $\beta$ that holds it grows 2.3371
#   times by $n = 16384$, Su's $\log_L n$ 2.3333 times: within 0.3% at every $n$.
# - Holding the row's *entropy* instead takes more, 2.6267 times: the entropy contains $(1 -
#   w)\ln(n-1)$, which grows with $n$ unless $w$ rises, so $\beta$ has to outgrow $\ln n$ by about
#   $\ln\ln n$.
# - With $\beta$ fixed every row collapses: at $n = 16384$ the rows set at 0.1, 0.5 and 0.9 keep
#   0.0004, 0.0038 and 0.0335.
# - With $\log_L n$ the row set at 0.5 (about the critical row) keeps 0.4908, the row set at 0.9
#   goes to 0.9939 and the row set at 0.1 to 0.0057. Holding those two would take $c = 0.158$ and
#   $0.514$ (a $\beta$ ratio of 1.8771 and 3.8577) instead of Su's $c = 1/\ln 64 = 0.240$.
# - The last column: under Su's rule the critical row's entropy is 2.748 nats at $n = 64$, 4.157 at
#   1024 (a rise of 1.41) and 5.545 at 16384.
#
# </details>
#
# <details><summary>Where a trained model is not a simplex</summary>
#
# A simplex row's rivals are $n - 1$ keys scoring exactly $\beta(1-\rho)$ below the token's own; to
# stay a fixed gap ahead of them, $e^{\beta(1-\rho)}$ must keep pace with $n - 1$, hence $\ln n$. A
# trained row holds a spread of scores, and the growth $\beta$ needs depends on that spread. For
# Gaussian scores (the aside in the derivation) it is $\beta \propto \sqrt{\ln n}$, since the best
# of $n$ draws itself rises like $\sigma\sqrt{2\ln n}$ (for large $n$; not simulated here). For keys
# spread over a sphere, like our dim-16 tokens, the nearest rival closes in as $n$ grows: for one
# query and $n$ keys uniform on the sphere in dim dimensions, the scale at which attention starts to
# pick out the nearest key grows like $n^{2/(\text{dim}-1)}$, not $\ln n$ (the nearest of $n$
# points uniform on the sphere lies at an angle shrinking like $n^{-1/(\text{dim}-1)}$, so its gap
# $1 - \cos$ shrinks like $n^{-2/(\text{dim}-1)}$); our dim-16 self-weights, falling with $n$ at
# every $\kappa$ we tried, point the same way.
#
# Nor is a trained model's entropy a simplex row's: under $\log_L n$ the critical row's rises by
# 1.41 nats from $n = 64$ to 1024 (the half of its weight it does not keep spreads evenly over
# $n - 1$ rivals), our trained model's by only 0.70-0.75 over the same factor of 16. The simplex
# explains why the *scaling* is $\ln n$, not what a trained model's attention looks like.
#
# </details>

# %% [markdown]
# ## Our numbers next to the sources'
#
# <details><summary>The comparison, row by row</summary>
#
# - **MLM accuracy at $L$ to $16L$.** Su (RoFormer-small, $L = 64$; 2021 post,
#   kexue.fm/archives/8823): standard 43.3 / 36.5 / 23.0 / 15.1 / 11.5, entropy-invariant
#   43.1 / 41.2 / 34.0 / 20.2 / 13.6. Here, the gain over standard per seed: 0 at $L$ (the factor
#   is 1), $-0.17$ to $+0.18$ at $2L$, $+1.2$ at $4L$, $+1.3$ to $+1.9$ at $8L$, $+0.4$ to $+0.8$
#   at $16L$ points.
# - **Entropy growth with length.** Su: held by $\log_L n$ (argued, 2021 post). Here: the standard
#   model's rises by 1.8-2.2 nats from $L$ to $16L$, the entropy-invariant one's by 0.70-0.75.
# - **relu² and a multiplier.** Su: impossible (homogeneity; 2022 post). Here: exactly unchanged
#   (to float precision).
# - **Causal models.** Not tested in either post. Here, the factor at evaluation: 0.04 nats worse
#   at $L$; at $8L$ $-0.002$ to $+0.05$ nats, no help. Training with it: not measured here.
# - **Critical scaling $\beta = \kappa \ln n$, simplex of tokens** (Chen et al., ICLR 2026,
#   arXiv:2510.05554, not Su): proved, $\kappa_c = 1/(1-\rho)$. Simulated here: $1/(1-\rho)$ to
#   four decimals at $n = 16384$ for four $\rho$; almost simplex 8.8% higher (dim 64), no identity
#   phase up to $\kappa = 4$ (dim 16).
#
# </details>

# %% [markdown]
# ## Takeaways
#
# - Past the training length attention spreads out; $\log_L n$ on the logits holds its entropy far
#   better: from $L$ to $16L$ it rose by 1.8-2.2 nats without the factor, 0.70-0.75 with it.
# - It bought far less accuracy than in Su's test: nothing measurable at $2L$, +1.2 to +1.9 points
#   at $4L$-$8L$ (Su: +4.6 at $2L$, +11 at $4L$); on a causal model it did not help.
# - relu² attention cannot take a multiplier $\lambda$ (homogeneity: its weights stay exactly the
#   same); softmax can, and every length rule on the logits relies on that.
#
# ## Check your understanding
#
# 1. Where does the derivation need a row dominated by its largest scores? What of a uniform row?
#
#    <details><summary>Answer</summary>
#
#    In the step "the last two terms behave like $-\lambda \Delta$": for a row dominated by its
#    largest scores, sharpening moves weight onto them and lowers the entropy in proportion to
#    $\lambda$. For an almost uniform row (all $S_j$ close to their mean $\bar S$),
#    $\ln \mathbb{E}[e^{\lambda S}] \approx \lambda \bar S$ and $\mathbb{E}_a[S] \approx \bar S$,
#    so the two terms nearly cancel for any moderate $\lambda$ and $H \approx \ln n$: there is
#    nothing to sharpen, and holding the entropy would take a huge $\lambda$ (for Gaussian scores of
#    small $\sigma$, $-\lambda^2\sigma^2/2$ asks for $\lambda$ of order $\sqrt{\ln n}/\sigma$). The
#    $\ln n$ rule is for peaked rows.
#
#    </details>
#
# 2. Why does training with `logn_base=L` at one length $L$ change nothing? What would change it?
#
#    <details><summary>Answer</summary>
#
#    The factor is $\ln n_i / \ln L$, with $n_i$ the number of keys row $i$ sees. In a
#    bidirectional model trained at the single length $L$, every row sees $n_i = L$, so the factor
#    is exactly 1 in every training step: the same computation as without it. For it to matter in
#    training, $n_i$ must vary: train on several lengths (mixed-length batches, as in [lesson 4](04_three_fixes.ipynb)), or
#    use a causal model, where $n_i = i + 1$ varies within every sequence ([lesson 8](08_one_idea.ipynb) trains such a
#    model).
#
#    </details>
#
# 3. What does the factor do to the first positions of a causal model?
#
#    <details><summary>Answer</summary>
#
#    In a causal model row $i$ sees $n_i = i + 1$ keys, so for $i + 1 < L$ the factor is below 1 (0
#    for the first row, $\ln 8/\ln 64 = 0.5$ at $i + 1 = 8$): it flattens rows the model learned to
#    be sharp. It does hurt a model trained without it: at $L$ the causal loss rose by 0.04 nats on
#    both seeds (1.541 to 1.582 and 1.545 to 1.585). Only a model trained with the factor could
#    adapt to it.
#
#    </details>
#
# 4. With the factor, why does accuracy still collapse at $16L$? Give a reason beyond entropy.
#
#    <details><summary>Answer</summary>
#
#    RoPE. Past $L$ the distances between queries and keys exceed any seen in training, so RoPE
#    turns the query and key by angles the model never met: the scores themselves are wrong.
#    Holding the entropy then only concentrates weight on the wrong keys, and no multiplier fixes
#    wrong scores. (The rest of the model also sees inputs outside its training range.) Accuracy at
#    $16L$ fell to 19-22% against 60-62% at $L$, with or without the factor.
#
#    </details>
#
# 5. Why can $\lambda$ sharpen softmax? How does it change $e^{\lambda a}/e^{\lambda b}$ for
#    $a > b$?
#
#    <details><summary>Answer</summary>
#
#    Because $e^x$ is not positively homogeneous, so $\lambda$ does not cancel. If $e^x$ were
#    positively homogeneous of some degree $p$, then $e^{\lambda x} = \lambda^p e^x$
#    for all $\lambda > 0$. At $x = 0$ that says $1 = \lambda^p$, so $p = 0$; but then
#    $e^{\lambda x} = e^x$ for every $\lambda$, false for $x \neq 0$. So no $p$ works. The ratio is
#    $e^{\lambda(a-b)} = (e^{a-b})^{\lambda}$: the ratio at $\lambda = 1$ raised to the power
#    $\lambda$. For $a > b$ it grows without bound as $\lambda$ grows and tends to 1 (uniform) as
#    $\lambda \to 0$; with $a - b = 1$ it is $e \approx 2.72$ at $\lambda = 1$ and
#    $e^2 \approx 7.39$ at $\lambda = 2$.
#
#    </details>
#
# 6. (Optional part.) Which simplex row does Su's $\log_L n$ hold? What of a row at 0.9?
#
#    <details><summary>Answer</summary>
#
#    Holding a row's self-weight takes a $\beta$ that grows by about $\ln 2/(1-\rho)$ each time $n$
#    doubles, whatever the row; Su's rule adds $\beta(L) \ln 2/\ln L$ per doubling. They agree when
#    $\beta(L)(1-\rho) = \ln L$: the row that sits at the critical point, $\kappa = 1/(1-\rho)$, at
#    $L$ (self-weight about 1/2: 0.5039 at $n = 64$), which Su's rule holds to within 0.3% (a ratio
#    of 2.3333 against the 2.3371 needed at $n = 16384$). A row at 0.9 has a larger $\beta(L)$, so
#    Su's rule gives it more $\beta$ per doubling than it needs and pushes it deeper into the
#    identity phase: 0.9939 at $n = 16384$ (holding it would take $c = 0.158$, not 0.240). For a
#    head that is sharp at its training length, Su's rule would make it sharper still at long
#    lengths, more than it needs.
#
#    </details>
#
# **Exercise:** [exercise 5](../exercises/05_entropy_invariance.ipynb) — implement the $\log_L n$
# factor and
# entropy-invariant attention, checked against `minilm`; Task 3 (optional part) codes the simplex
# self-weight.
#
# Next, [lesson 6](06_nope.ipynb): a Transformer with no position encoding.
