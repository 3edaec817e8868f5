# %% [markdown]
# # Lesson 1 — The Gated Attention Unit, from scratch
#
# **Model and length.** Two causal language models trained at $L = 64$ characters, seeds 0 and 1:
# a GAU (d64, 4 single-head layers, $d_k = 64$) and a Transformer of about its size (d64, 2
# layers, 4 heads).
#
# **Time.** About 20 minutes to read; about 3 minutes to run on 2 CPU cores with an empty cache.
#
# **Which failure, which fix.** None yet: we build the GAU, whose $\mathrm{relu}^2/n$ divides every
# row by one number $n$. A divisor that grows with the length while a row's real sum does not is
# the course's first failure (lessons [2](02_fixed_or_dynamic_n.ipynb)-[4](04_three_fixes.ipynb), Su's 2022 post).
#
# The course asks why attention trained at one length fails at others, and how to fix it. Its
# answer is drawn as one map: [the course in one picture](README.md#the-course-in-one-picture).
#
# *Numbers in the text are the stored run's; yours will differ a little
# ([how the course checks itself](checking.md)).*
#
# [Notation](README.md#notation) · [sources](README.md#sources) ·
# [exercise 1](../exercises/01_gau.ipynb)

# %% [markdown]
# ## Setup
#
# One profile sets the sizes (`cpu` here, `gpu` on CUDA); trained models are cached.

# %%
import math

import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F

import minilm
from minilm import Config, LM
from course.grader import cmp
from minilm.experiments import causal_gau, causal_recipe, causal_transformer
from minilm.measure import ngram_baselines
from minilm.plots import course_style, draw_gau

course_style()
P = minilm.profile()
corpus = minilm.default_corpus()
tok = corpus.tokenizer
print(f"profile {P.name}: d_model {P.d_model}, training length {P.train_len}, "
      f"{P.steps} steps, seeds {P.seeds}")
print(f"corpus {corpus.name}: {len(corpus.text):,} characters, "
      f"{tok.vocab_size} symbols (with the mask symbol)")
print(corpus.text[1000:1200])

# %% [markdown]
# Two baselines: a **unigram** model knows how often each character occurs, a **bigram** model
# also which follows which (validation loss, in nats per character).

# %%
baselines = ngram_baselines(corpus)
print(f"unigram {baselines['unigram']:.2f} nats, bigram {baselines['bigram']:.2f} nats, "
      f"uniform guess {math.log(tok.vocab_size):.2f} nats")

# %% [markdown]
# ## The equations
#
# FLASH (Hua et al., 2022) takes a *gated* feed-forward layer, $O = (U \odot V) W_o$, and first
# mixes $V$ across positions with one attention matrix: one head, and $\mathrm{relu}^2$ divided by
# the length $n$ instead of softmax. For an input $X$ ($T \times d$, normalised):
#
# $$U = \mathrm{silu}(X W_u),\quad V = \mathrm{silu}(X W_v) \qquad (T \times e,\ e = 2d)$$
# $$Z = \mathrm{silu}(X W_z) \qquad (T \times d_k,\ d_k \text{ small: } 128 \text{ in FLASH})$$
# $$Q = \gamma_q \odot Z + \beta_q,\qquad K = \gamma_k \odot Z + \beta_k$$
# $$A = \frac{1}{n}\,\mathrm{relu}^2\!\left(\frac{Q K^\top}{\sqrt{d_k}}\right),
# \qquad O = (U \odot A V)\, W_o$$

# %% [markdown]
# - **Shared $Z$:** $Q$ and $K$ come from one projection, each with its own scale $\gamma$ and
#   offset $\beta$.
# - **One head:** the gate $U$ gives each channel its own share of the attended value.
# - **No softmax:** softmax divides each row by its own sum, $\mathrm{relu}^2/n$ every row by the
#   same $n$; many weights are exactly 0.
# - **Positions:** RoPE rotates $Q$ and $K$ (next section); causal means $A_{ij} = 0$ for $j > i$.
#
# The unit as a picture (notation: `lessons/README.md`):

# %% mystnb={"image": {"alt": "Diagram of one Gated Attention Unit: the input X passes LayerNorm into three projections u, v and z; z gives q and k by a per-dimension scale and offset; A = relu squared of q k transposed over sqrt(d_k), divided by n, multiplies v; u gates A v, W_o projects it, and X is added back."}}
draw_gau()
plt.show()

# %% [markdown]
# ## RoPE from scratch, with complex numbers
#
# RoPE reads each pair of dimensions $(x_{2i}, x_{2i+1})$ as a complex number and rotates it by
# the angle $t\theta_i$ at position $t$ ($\theta_i = 10000^{-2i/d_k}$). A query at $m$ and a key
# at $t$ then see only $(m - t)\theta_i$: the *relative* position. We check it against `minilm`.

# %%
def rope_from_scratch(x, base=10000.0):
    """x: (T, d_k). Pair dims into complex numbers and rotate position t by t * theta_i."""
    T, d_k = x.shape
    theta = base ** (-torch.arange(0, d_k, 2) / d_k)
    rotation = torch.polar(torch.ones(T, d_k // 2), torch.arange(T)[:, None] * theta)
    pairs = torch.view_as_complex(x.reshape(T, d_k // 2, 2).contiguous())
    return torch.view_as_real(pairs * rotation).reshape(T, d_k)


x = torch.randn(10, 8)
rope_ok = cmp("RoPE", rope_from_scratch(x), minilm.apply_rope(x, minilm.rope_angles(10, 8)))

# %% [markdown]
# ## The GAU language model from scratch
#
# The whole model from the equations, with a `minilm` model's weights, checked against its
# logits.

# %%
def gau_block_from_scratch(x, block, n):
    """One GAU with pre-norm and residual: x + (U * A V) W_o, A = relu^2(Q K^T / sqrt(d_k)) / n."""
    T, d_k = x.shape[1], block.gamma.shape[1]
    h = F.layer_norm(x, x.shape[-1:], block.ln.weight, block.ln.bias)
    U, V = F.silu(h @ block.to_uv.weight.T + block.to_uv.bias).chunk(2, dim=-1)
    Z = F.silu(h @ block.to_z.weight.T + block.to_z.bias)
    Q = block.gamma[0] * Z + block.beta[0]
    K = block.gamma[1] * Z + block.beta[1]
    Q = torch.stack([rope_from_scratch(q) for q in Q])
    K = torch.stack([rope_from_scratch(k) for k in K])
    S = Q @ K.transpose(1, 2) / math.sqrt(d_k)
    A = F.relu(S) ** 2 / n
    A = A * torch.tril(torch.ones(T, T))          # causal: no weight on future keys
    O = (U * (A @ V)) @ block.to_out.weight.T + block.to_out.bias
    return x + O


def gau_lm_from_scratch(idx, model):
    x = model.embed.weight[idx]
    for block in model.blocks:
        x = gau_block_from_scratch(x, block, model.config.n)
    x = F.layer_norm(x, x.shape[-1:], model.ln_out.weight, model.ln_out.bias)
    return x @ model.embed.weight.T


torch.manual_seed(0)
small = LM(Config(vocab_size=tok.vocab_size, block="gau", n_head=1, d_model=32, n_layer=2,
                  d_k=16, norm="relu2", n=24))
idx = tok.encode(corpus.text[5000:5024]).unsqueeze(0)
with torch.no_grad():
    gau_ok = cmp("GAU LM logits", gau_lm_from_scratch(idx, small), small(idx))

# %%
assert rope_ok and gau_ok, "the from-scratch GAU must match minilm's"

# %% [markdown]
# ## Counting parameters: two GAUs are about one Transformer layer
#
# Weights per layer, without biases and LayerNorms (Transformer MLP of width $4d$):
#
# | | weights | in all |
# |---|---|---|
# | GAU | $W_u, W_v: 2de$; $W_z: d d_k$; $W_o: ed$; $\gamma, \beta: 4d_k$ | $6d^2 + d d_k + 4d_k$ |
# | Transformer | $W_q, W_k, W_v, W_o: 4d^2$; MLP: $8d^2$ | $12 d^2$ |
#
# With $d_k = d$ a GAU has about $7d^2$: two GAUs ($14d^2$) are about one Transformer layer
# ($12d^2$).

# %%
# causal_gau and causal_transformer come from minilm.experiments: the GAU is shared with
# lesson 2, the Transformer with lessons 3 and 5
gau_config = causal_gau(P, tok.vocab_size)
transformer_config = causal_transformer(P, tok.vocab_size)
print(gau_config)
print(transformer_config)
d, d_k = P.d_model, P.d_k
counts = {}
for name, config, formula in [("GAU", gau_config, 6 * d * d + d * d_k + 4 * d_k),
                              ("Transformer", transformer_config, 12 * d * d)]:
    model = LM(config)
    per_layer = sum(p.numel() for p in model.blocks[0].parameters() if p.ndim > 1)
    counts[name] = model.num_parameters()
    print(f"{name:<12} {config.n_layer} layers: {per_layer:>6,} weights per layer "
          f"(formula {formula:,}), {counts[name]:>7,} parameters in all")
ratio = counts["GAU"] / counts["Transformer"]
print(f"GAU / Transformer parameters: {ratio:.2f}")

# %%
assert 0.8 < ratio < 1.25, "the two models should be of about the same size"

# %% [markdown]
# ## Training both
#
# Same data, optimiser and steps; two seeds each, cached.

# %%
recipes = {seed: causal_recipe(P, seed) for seed in P.seeds}
configs = {"GAU": gau_config, "Transformer": transformer_config}
trained = minilm.pretrained_many({(name, seed): (config, recipes[seed])
                                  for name, config in configs.items() for seed in P.seeds})
runs = {}
for (name, seed), (model, history) in trained.items():
    val = minilm.evaluate(model, corpus, task="causal", length=P.train_len,
                          n_batches=P.eval_batches)["loss"]
    runs[name, seed] = dict(model=model, history=history, val=val)
    print(f"{name:<12} seed {seed}: validation loss {val:.3f} nats")

# %% mystnb={"image": {"alt": "Line plot of smoothed training loss (nats per character) against step for the GAU and the Transformer, two seeds each (the second faint), with dotted unigram and bigram baselines. Every run falls fast and ends far below the bigram line, the GAU a little below the Transformer."}}
def smooth(values, width=25):
    values = torch.tensor(values)
    return torch.nn.functional.avg_pool1d(values[None, None], width, stride=1)[0, 0]


fig, ax = plt.subplots()
colors = {"GAU": "tab:blue", "Transformer": "tab:orange"}
for (name, seed), run in runs.items():
    ax.plot(smooth(run["history"]), color=colors[name], alpha=0.9 if seed == P.seeds[0] else 0.5,
            label=f"{name} ({counts[name] / 1e3:.0f}k params)" if seed == P.seeds[0] else None)
for label, value in baselines.items():
    ax.axhline(value, color="gray", ls=":", lw=1)
    ax.text(P.steps * 0.99, value + 0.04, label, ha="right", color="gray")
ax.set(xlabel="step", ylabel="training loss (nats/char, smoothed)", ylim=(1.0, 3.6),
       title=f"Learning curves, {len(P.seeds)} seeds each (faint: seed {P.seeds[-1]}), "
             f"length {P.train_len}")
ax.legend()
plt.show()

# %% [markdown]
# Every run ends far below the bigram line (validation loss 1.47-1.54 nats against 2.32): the
# models use much more than the previous character.
#
# <details><summary>How we check it: margins and controls</summary>
#
# Asserted: every model and seed ends more than 0.4 nats below the bigram loss, so below 1.92 nats
# (the stored worst: 1.537). The control: the bigram model itself fails that bound.
#
# </details>

# %%
gap = [runs["GAU", s]["val"] - runs["Transformer", s]["val"] for s in P.seeds]
print("validation loss, GAU minus Transformer, per seed:", [f"{g:+.3f}" for g in gap])
for (name, seed), run in runs.items():
    assert run["val"] < baselines["bigram"] - 0.4, (name, seed, run["val"])

# %% [markdown]
# FLASH claims a single-head GAU is at least as good as a multi-head Transformer of the same
# cost. Here the GAU ends lower on both seeds, by 0.06-0.07 nats, with 17% more parameters. FLASH's
# models were far larger; we claim only what we measured, at this size.
#
# <details><summary>How we check it: margins and controls</summary>
#
# Asserted: the GAU's validation loss is below the Transformer's on every seed: the sign only, no
# margin (stored gaps -0.068 and -0.060 nats). A GAU that fell behind on either seed would fail it.
#
# </details>

# %%
assert all(g < 0 for g in gap), gap

# %% [markdown]
# ## What do they write?
#
# Sampled at temperature 0.8 from at most $L$ characters of context: documentation-shaped
# nonsense.

# %%
for name in ("GAU", "Transformer"):
    text = minilm.generate(runs[name, P.seeds[0]]["model"], tok, "The ", max_new_tokens=240,
                           context=P.train_len, seed=0)
    print(f"--- {name} ---\n{text}\n")

# %% [markdown]
# ## Why the scales start near 1
#
# FLASH initialises $\gamma_q, \gamma_k$ near 0 (std 0.02). With $\mathrm{relu}^2$ that is a trap:
# $Q K^\top$ starts near 0, its square nearer still, so attention passes almost no signal or
# gradient. `minilm` starts at $1 \pm 0.1$; we retrain the GAU from FLASH's start.

# %%
def with_flash_scale_init(config, seed):
    torch.manual_seed(seed)
    model = LM(config)
    with torch.no_grad():
        for block in model.blocks:
            block.gamma.copy_(0.02 * torch.randn_like(block.gamma))
    return model


flash_models = minilm.pretrained_many(
    {seed: (gau_config, recipes[seed], with_flash_scale_init(gau_config, seed))
     for seed in P.seeds})
flash_init = {}
for seed, (model, _) in flash_models.items():
    flash_init[seed] = minilm.evaluate(model, corpus, task="causal", length=P.train_len,
                                       n_batches=P.eval_batches)["loss"]
    print(f"seed {seed}: scales ~ N(0, 0.02): {flash_init[seed]:.3f} nats   "
          f"scales ~ 1 +- 0.1: {runs['GAU', seed]['val']:.3f} nats")

# %% [markdown]
# With FLASH's start the GAU ends far higher on both seeds: 2.208 and 1.900 nats against 1.469 and
# 1.472.
#
# <details><summary>How we check it: margins and controls</summary>
#
# Asserted on every seed: FLASH's start ends more than 0.1 nats above the GAU with scales near 1
# (stored gaps 0.74 and 0.43; the margin is the smaller gap less the 0.31 between the seeds' gaps).
# The control, the GAU with scales near 1 itself (a gap of 0), fails it.
#
# </details>

# %%
for seed in P.seeds:
    assert flash_init[seed] > runs["GAU", seed]["val"] + 0.1, seed

# %% [markdown]
# <details><summary>Our numbers next to FLASH's</summary>
#
# | | FLASH | here (2 seeds) |
# |---|---|---|
# | one gated head vs a Transformer | as good or better | loss 0.06-0.07 nats lower |
# | relu²/n instead of softmax | "basically identical" | [lesson 4](04_three_fixes.ipynb) |
# | scales starting at std 0.02 | FLASH's choice | trains much worse |
#
# </details>

# %% [markdown]
# ## Takeaways
#
# - A GAU is a gated feed-forward layer whose values are first mixed by one attention matrix,
#   $\mathrm{relu}^2(QK^\top/\sqrt{d_k})/n$; ours matched `minilm` to $4.5 \times 10^{-8}$.
# - Two GAUs are about one Transformer layer; our GAU learned at least as well (0.06-0.07 nats
#   lower, with 17% more parameters).
# - relu² needs its scales to start near 1: from FLASH's std 0.02 the GAU ended at 2.208 and 1.900
#   nats instead of about 1.47.
#
# ## Check your understanding
#
# 1. Which of $U$, $V$, $Z$, $A$ mix positions? Where, then, can a change of length reach a GAU?
#
#    <details><summary>Answer</summary>
#
#    $U$, $V$ and $Z$ (and so $Q$ and $K$) are computed one position at a time: a linear map and a
#    silu of one row of $X$. Only $A$ mixes positions, and with it $AV$ and the output. So a change
#    of length can reach a GAU only through $A$: how many keys each row has, the positions RoPE
#    gives them, and the divisor $n$. That is why the rest of the course is about $A$.
#
#    </details>
#
# 2. A GAU has one head. What lets its channels use the attended information differently?
#
#    <details><summary>Answer</summary>
#
#    The gate $U$. The output is $(U \odot AV)\,W_o$: each of the $e = 2d$ channels has its own gate
#    value at each position, so each channel of the attended value $AV$ passes as much as its gate
#    value in $U$ says. A multi-head layer gets that variety from several attention matrices; a GAU
#    gets it from one matrix and a per-channel, per-position gate.
#
#    </details>
#
# 3. Why is $\mathrm{relu}^2$ divided by a number at all?
#
#    <details><summary>Answer</summary>
#
#    Because relu² weights are not normalised: a row's weights add up to whatever the scores give.
#    Without a divisor, $\sum_j \mathrm{relu}^2(S_{ij})$ grows with the number of keys the row sees
#    (about like $T$ if far keys keep some weight), so $AV$ would grow with $T$ and the next layer
#    would get inputs whose size depends on the length. Dividing by $n$ keeps $AV$ at a fixed size;
#    *which* $n$ is the question of lessons [2](02_fixed_or_dynamic_n.ipynb) and [3](03_why_normaliser.ipynb).
#
#    </details>
#
# 4. With $\gamma \sim \mathcal{N}(0, 0.02)$, about how large is a score at the start? Why is
#    learning then slow?
#
#    <details><summary>Answer</summary>
#
#    $\beta$ starts at 0 and $z$ has entries of order 1, so each entry of $q$ and of $k$ is about
#    0.02 times the entry of $z$. A score sums $d_k$ products of size about
#    $0.02^2 = 4 \times 10^{-4}$: at most about
#    $d_k \cdot 4 \times 10^{-4}/\sqrt{d_k} = 4 \times 10^{-4}\sqrt{d_k} \approx 3 \times 10^{-3}$
#    for $d_k = 64$, and its relu² about $10^{-5}$ (then divided by $n$). So $A \approx 0$: the
#    attention path carries almost nothing, and its gradient is tiny too (the derivative of
#    $\mathrm{relu}^2(x)$ is $2x \approx 0$). The model learns as if it had no attention until the
#    scales grow, which takes many steps.
#
#    </details>
#
# 5. For $d = 768$, $d_k = 128$: how many GAUs hold the weights of one Transformer layer?
#
#    <details><summary>Answer</summary>
#
#    A GAU: $6d^2 + d\,d_k + 4d_k = 6 \cdot 589{,}824 + 98{,}304 + 512 = 3{,}637{,}760$ weights. A
#    Transformer layer: $12d^2 = 7{,}077{,}888$. One Transformer layer is 1.95 GAUs; two GAUs have
#    $7{,}275{,}520$, 2.8% more. (At this size $d\,d_k$ is small next to $6d^2$, so the ratio is
#    close to $12/6 = 2$.)
#
#    </details>
#
# **Exercise:** [exercise 1](../exercises/01_gau.ipynb) — write $\mathrm{relu}^2$ attention with
# fixed,
# length and row `n`, and RoPE, and check them against `minilm`.
#
# Next, [lesson 2](02_fixed_or_dynamic_n.ipynb): fixed $n$ or dynamic $n$?
