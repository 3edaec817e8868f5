# %% [markdown]
# # Lesson 3 — Why: the normaliser is O(k), not O(n)
#
# **Model and length.** Bidirectional GAU masked LMs, relu² ([lesson 2](02_fixed_or_dynamic_n.ipynb)'s) and softmax (d64, 2
# single-head layers, $L_{mlm} = 128$, seeds 0 and 1), and [lesson 1](01_gau.ipynb)'s causal Transformer (d64, 2
# layers, 4 heads, $L = 64$).
#
# **Time.** About 20 minutes to read; about 2 minutes to run on 2 CPU cores, with lessons 1-2's
# models cached.
#
# **Which failure, which fix.** Why the first failure happens: a trained row's real sum $Z_i$
# hardly grows with the length, so $n$ = length is the wrong divisor and a fixed $n$ the right one
# (Su's 2022 post).
#
# *Numbers in the text are the stored run's; yours will differ a little
# ([how the course checks itself](checking.md)).*
#
# [Notation](README.md#notation) · [sources](README.md#sources) ·
# [exercise 3](../exercises/03_why_normaliser.ipynb)

# %% [markdown]
# **The argument** (Su, 2022). Softmax divides by the row's own sum:
#
# $$a_{ij} = \frac{1}{Z_i} e^{S_{ij}},\qquad Z_i = \sum_{j} e^{S_{ij}},$$
#
# over the $n_i$ keys row $i$ sees (all $n$ in a bidirectional model). If $Z_i$ grew like $n$,
# dividing by $n$ would match it. But trained attention is *sparse and local*: only about $k$ keys
# get real weight, so $Z_i = O(k)$, independent of $n$, and a constant ("keep $n$ fixed") is the
# right stand-in. Likewise for relu²'s row sum $\sum_j \mathrm{relu}^2(S_{ij})$.

# %% [markdown]
# ![The divisor n grows with the length while a row's real sum Z_i stays near the k keys it attends to](figures/row_sum_vs_n.svg)
#
# **The idea.** $n$ = length grows with the length; a trained row's sum $Z_i$ stays near its $k$
# keys, flat like a fixed $n$.

# %%

import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
import torch

import minilm
from minilm import LM
from minilm.experiments import causal_recipe, causal_transformer, masked_lm_gau, masked_lm_recipe
from minilm.measure import eval_batches, growth_exponent, log_normalisers
from minilm.plots import course_style, heatmap

course_style()
P = minilm.profile()
corpus = minilm.default_corpus()
tok = corpus.tokenizer
L_mlm = P.mlm_len
print(f"profile {P.name}: seeds {P.seeds}, masked LMs trained at {L_mlm}")

# %% [markdown]
# ## Two bidirectional GAUs: softmax and relu²
#
# In a bidirectional model every query sees all $T$ keys: the length sets $n$.

# %%
configs = {"softmax": masked_lm_gau(P, tok.vocab_size, "softmax"),
           "relu²": masked_lm_gau(P, tok.vocab_size, "relu2", n=L_mlm)}
trained = minilm.pretrained_many({(name, seed): (config, masked_lm_recipe(P, seed))
                                  for name, config in configs.items() for seed in P.seeds})
models = {key: model for key, (model, _) in trained.items()}
torch.manual_seed(0)
untrained = LM(configs["softmax"]).eval()

# %% [markdown]
# ## Measuring $Z_i$ and the effective number of keys
#
# For each model and length $T \in \{16, 32, 64, 128\}$ (32 validation sequences), per layer:
# - $\ln Z_i$, averaged over rows;
# - $e^{H_i}$, the effective number of keys: how many a row would cover if it spread its weight
#   evenly ($n$ for uniform attention).
#
# We fit $y \approx C\, n^b$: $b = 1$ means $O(n)$, $b = 0$ means $O(1)$. Only the *growth* of
# $Z_i$ matters: a constant added to a row's scores moves $Z_i$ but not softmax.

# %%
lengths = [L_mlm // 8, L_mlm // 4, L_mlm // 2, L_mlm]


def growth(model):
    """Per layer: Z (geometric mean over rows) and mean effective keys, at every length."""
    Z, keys = [], []
    for T in lengths:
        x = eval_batches(corpus, task="mlm", length=T, batch_size=32, n_batches=1,
                         device=model.device)[0][0]
        Z.append(log_normalisers(model, x).mean(dim=(1, 2)).exp())
        keys.append(minilm.attention_entropy(model, x).exp().mean(dim=(1, 2)))
    return torch.stack(Z, 1), torch.stack(keys, 1)   # (n_layer, len(lengths)) each


measured = {key: growth(model) for key, model in models.items()}
measured["softmax, untrained", 0] = growth(untrained)
exponents = {}
print(f"{'model':<20} {'seed':>4} {'layer':>5}   Z exponent   "
      f"effective keys at n = {lengths}   exponent")
for (name, seed), (Z, keys) in measured.items():
    for layer in range(Z.shape[0]):
        bz, bk = growth_exponent(lengths, Z[layer]), growth_exponent(lengths, keys[layer])
        exponents[name, seed, layer] = (bz, bk)
        rounded = str([round(v, 1) for v in keys[layer].tolist()])
        print(f"{name:<20} {seed:>4} {layer:>5}   {bz:10.2f}   {rounded:<34} {bk:8.2f}")

# %% mystnb={"image": {"alt": "Two log-log panels against the number of keys n for trained softmax and relu squared GAUs and an untrained one, every layer and seed. Left: the normaliser Z_i relative to the shortest n, with O(n) and O(1) guides. Right: effective keys exp(H), with uniform n. Trained models stay near flat; the untrained one follows n."}}
fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
colors = {"softmax": "tab:green", "relu²": "tab:blue", "softmax, untrained": "tab:gray"}
ns = torch.tensor(lengths, dtype=torch.float)
line_of_layer = ["-", "--", "-.", ":"]          # the line says the layer, the marker the seed
marker_of_seed = dict(zip(sorted({seed for _, seed in measured}), "os^Dv"))
for (name, seed), (Z, keys) in measured.items():
    for layer in range(Z.shape[0]):
        style = dict(color=colors[name], ls=line_of_layer[layer], marker=marker_of_seed[seed],
                     alpha=0.7)
        axes[0].plot(lengths, Z[layer] / Z[layer, 0], **style)
        axes[1].plot(lengths, keys[layer], **style)
axes[0].plot(lengths, ns / ns[0], "k:", lw=1, label="O(n)")
axes[0].axhline(1, color="gray", ls=":", lw=1, label="O(1)")
axes[0].set(ylabel=f"Z(n) / Z({lengths[0]})", title="Normaliser Z_i (every layer and seed)")
axes[1].plot(lengths, lengths, "k:", lw=1, label="uniform: n keys")
axes[1].set(ylabel="effective keys  exp(H)", title="How many keys a query uses")
key = ([Line2D([], [], color=c, label=name) for name, c in colors.items()]
       + [Line2D([], [], color="k", ls=line_of_layer[layer], label=f"layer {layer}")
          for layer in range(P.n_layer)]
       + [Line2D([], [], color="k", ls="none", marker=m, label=f"seed {seed}")
          for seed, m in marker_of_seed.items()])
for ax in axes:
    ax.set(xscale="log", yscale="log", xlabel="number of keys n (= sequence length)",
           xticks=lengths, xticklabels=lengths)
    ax.minorticks_off()
    # upper left: the one corner no line reaches on either panel
    ax.legend(handles=key + ax.get_legend_handles_labels()[0], fontsize=8, ncol=2, loc="upper left")
axes[0].set(yticks=[1, 2, 4, 8], yticklabels=["1", "2", "4", "8"])
plt.show()

# %% [markdown]
# Trained models stay near the flat line: from 16 to 128 keys, $Z_i$ grows with an exponent of only
# 0.05-0.17, and a query uses 3-12 keys. Untrained, attention is nearly uniform: $e^{H} \approx n$,
# $Z_i \propto n$. **Sparsity is learned**, and it makes a constant the right normaliser.
#
# <details><summary>How we check it: margins and controls</summary>
#
# Asserted on every trained model, seed and layer: $Z$ exponent below 0.3, effective-key exponent
# below 0.5 (measured 0.05-0.17 and 0.03-0.37; a layer's two seeds differ by at most 0.08), and
# fewer than 16 effective keys at $n = 128$ (measured 3.0-11.9). Control: the untrained model
# fails all three (exponents 0.93-1.01), and is asserted to.
#
# </details>

# %%
for (name, seed, layer), (bz, bk) in exponents.items():
    if name == "softmax, untrained":   # the control: nearly uniform attention
        assert bz > 0.8 and bk > 0.8, (bz, bk)
    else:
        assert bz < 0.3 and bk < 0.5, (name, seed, layer, bz, bk)
        assert measured[name, seed][1][layer, -1] < L_mlm / 8, \
            "a trained query uses a handful of keys"

# %% [markdown]
# ## Back to lesson 2, in numbers
#
# To keep the relu² model's rows their training size at a shorter $T$, its divisor should change
# by $Z(T)/Z(L_{mlm})$; $n$ = length changes it by $T/L_{mlm}$:

# %%
T_ft = L_mlm // 4
for seed in P.seeds:
    Z = measured["relu²", seed][0]
    needed = (Z[:, lengths.index(T_ft)] / Z[:, -1]).tolist()
    print(f"seed {seed}: Z({T_ft}) / Z({L_mlm}) per layer = {[round(r, 2) for r in needed]};  "
          f"n = length uses {T_ft / L_mlm:.2f}")

# %% [markdown]
# At 4x shorter, the true normaliser shrinks by 7-22%; $n$ = length shrinks the divisor by 75%,
# so every weight comes out 3-4x too large: [lesson 2](02_fixed_or_dynamic_n.ipynb)'s zero-shot result.
#
# ## What trained attention looks like
#
# [Lesson 1](01_gau.ipynb)'s causal Transformer on validation text (rows: queries; columns: keys; darker: more
# weight).

# %% mystnb={"image": {"alt": "Grid of attention heatmaps, one per layer and head of the causal Transformer on one validation text, query i down and key j across, darker for more weight (square root of the weights). Most rows put their weight on a few keys: the current character, a few just before it, or an earlier anchor."}}
# lesson 1's model
transformer, _ = minilm.pretrained(causal_transformer(P, tok.vocab_size),
                                   causal_recipe(P, P.seeds[0]))
text = corpus.text[len(corpus.train) + 3000:][:P.train_len]
with torch.no_grad():
    _, weights = transformer(tok.encode(text).unsqueeze(0).to(transformer.device),
                             returns="weights")
weights = [w.cpu() for w in weights]

fig, axes = plt.subplots(P.n_layer, P.n_head, figsize=(11, 2.8 * P.n_layer), squeeze=False)
for layer in range(P.n_layer):
    for head in range(P.n_head):
        ax = axes[layer, head]
        image = heatmap(ax, weights[layer][0, head] ** 0.5, xlabel="key j", ylabel="query i",
                        colorbar=None, cmap="Greys", vmin=0, vmax=1)
        ax.set(title=f"layer {layer}, head {head}")
fig.colorbar(image, ax=axes, label="√weight", shrink=0.8)
fig.suptitle("Causal Transformer attention (sqrt of weights, to show small ones)")
plt.show()
print(repr(text))

# %% [markdown]
# Most rows weigh a few keys: the current character, a few back, or an earlier anchor. Per head,
# against the keys a query *could* use:

# %% mystnb={"image": {"alt": "One panel per layer of the causal Transformer: effective keys exp(H) of each head against the keys visible to the query (i + 1), with a dotted uniform line i + 1. Every head stays at a handful of keys, far below the uniform line, as the visible keys grow."}}
x = eval_batches(corpus, task="causal", length=P.train_len, batch_size=32, n_batches=1,
                 device=transformer.device)[0][0]
causal_keys = minilm.attention_entropy(transformer, x).exp()     # (layer, head, position)
visible = torch.arange(1, P.train_len + 1)
fig, axes = plt.subplots(1, P.n_layer, figsize=(11, 3.6), sharey=True, squeeze=False)
for layer, ax in enumerate(axes[0]):
    for head in range(P.n_head):
        ax.plot(visible, causal_keys[layer, head], label=f"head {head}")
    ax.plot(visible, visible, "k:", lw=1, label="uniform: i + 1 keys")
    ax.set(xlabel="keys visible to the query (i + 1)", ylim=(0, 20), title=f"layer {layer}")
    ax.legend(ncol=2)
axes[0, 0].set_ylabel("effective keys exp(H)")
fig.suptitle("Causal Transformer: effective keys per head")
plt.show()
print(f"effective keys at n = {P.train_len}: {causal_keys[..., -1].mean():.1f} "
      f"on average over heads")

# %% [markdown]
# On average over heads a query uses 3.8 effective keys of 64; the same model untrained, 61.5.
#
# <details><summary>How we check it: margins and controls</summary>
#
# Asserted: fewer than $L/8 = 8$ effective keys at $n = L$, on average over heads (measured 3.8).
# Control: the same architecture untrained (61.5 of 64) is asserted above $L/2$, far outside the
# bound.
#
# </details>

# %%
torch.manual_seed(0)
untrained_causal = LM(causal_transformer(P, tok.vocab_size)).eval().to(transformer.device)
untrained_keys = minilm.attention_entropy(untrained_causal, x).exp()
print(f"untrained, same architecture: {untrained_keys[..., -1].mean():.1f} "
      f"effective keys at n = {P.train_len}")
assert causal_keys[..., -1].mean() < P.train_len / 8
assert untrained_keys[..., -1].mean() > P.train_len / 2   # the control

# %% [markdown]
# ## RoPE's long-range decay
#
# Part of the locality comes from RoPE. RoFormer (Su et al. 2021, section 3.4.3) bounds a score's
# size by a factor that depends only on the distance $r$ to the key, and decays: rotations at
# different frequencies fall out of phase and cancel. (The plot's "d" is $d_k$.)
#
# <details><summary>The bound, derived</summary>
#
# Read query and key as $d_k/2$ complex numbers $\tilde q_i = q_{2i} + \mathrm{i}\, q_{2i+1}$
# (and $\tilde k_i$ alike). For a key $r$ positions back, the score is
# $\mathrm{Re}\sum_i h_i e^{\mathrm{i} r\theta_i}$ with $h_i = \tilde q_i\, \overline{\tilde k_i}$
# and $\theta_i = 10000^{-2i/d_k}$: content enters only through $h_i$, distance only through the
# phases. Summation by parts ($h_{d_k/2} = 0$) bounds it:
#
# $$\Big|\sum_{i=0}^{d_k/2-1} h_i e^{\mathrm{i} r \theta_i}\Big|
# \le \Big(\max_i |h_{i+1} - h_i|\Big) \sum_{j=1}^{d_k/2} |S_j(r)|,
# \qquad S_j(r) = \sum_{i=0}^{j-1} e^{\mathrm{i} r\theta_i}.$$
#
# The factor $\frac{1}{d_k/2}\sum_j |S_j(r)|$ (sums of phases, not scores) depends only on $r$.
#
# </details>

# %% mystnb={"image": {"alt": "Line plot of RoPE's bound factor on the size of a score against the relative distance r to the key, for the model's d_k and for d_k = 128: largest at r = 0 and decaying as r grows, so far keys can get only small scores."}}
def rope_decay_bound(distances, dim, base=10000.0):
    """(1 / (dim/2)) * sum_j |S_j(r)|, S_j(r) = sum_{i<j} exp(1j * r * theta_i)."""
    theta = base ** (-torch.arange(0, dim, 2, dtype=torch.float64) / dim)
    phases = torch.polar(torch.ones(len(distances), dim // 2, dtype=torch.float64),
                         torch.as_tensor(distances, dtype=torch.float64)[:, None] * theta)
    return phases.cumsum(dim=1).abs().mean(dim=1)


distances = torch.arange(0, 4 * L_mlm + 1)
fig, ax = plt.subplots()
for dim in (P.d_k, 128):
    ax.plot(distances, rope_decay_bound(distances, dim), label=f"d_k = {dim}")
ax.set(xlabel="relative distance r", ylabel="bound factor",
       title="RoPE: the bound on |score| decays with distance")
ax.legend()
plt.show()
bound = rope_decay_bound(distances, P.d_k)
print(f"d_k = {P.d_k}: bound at r = 0: {bound[0]:.1f}, r = 16: {bound[16]:.1f}, "
      f"r = {L_mlm}: {bound[L_mlm]:.1f}")
flat = rope_decay_bound(distances, P.d_k, base=1.0)   # the control: one frequency for every pair
print(f"base = 1 (every theta_i = 1): bound at r = 0: {flat[0]:.1f}, "
      f"r = {L_mlm}: {flat[L_mlm]:.1f}")

# %% [markdown]
# At $d_k = 64$ the factor falls from 16.5 at $r = 0$ to 4.7 at $r = 128$.
#
# <details><summary>How we check it: margins and controls</summary>
#
# Asserted: the factor at $r = 128$ is below 0.3 of its value at $r = 0$ (4.7 against 16.5), and
# lower at $r = 16$ (7.6) than at 0. A demonstration of the formula: exact arithmetic, nothing
# trained. Control: one frequency (`base = 1`, printed) keeps the factor at 16.5 and fails it.
#
# </details>

# %%
# a demonstration; fails for base = 1
assert bound[L_mlm] < 0.3 * bound[0] and bound[16] < bound[0]

# %% [markdown]
# Su argues that $Z_i = O(k)$; we measure it, at short lengths. Far longer contexts ([lesson 5](05_entropy_invariance.ipynb))
# strain it: small weights on many far keys add up.
#
# <details><summary>Our numbers next to Su's</summary>
#
# | | Su (2022) | here (2 seeds) |
# |---|---|---|
# | how $Z_i$ grows with $n$ | "closer to $O(k)$ than $O(n)$" (argued) | exponent 0.05-0.17 |
# | trained attention | sparse, local | 3-12 effective keys out of 128 |
# | untrained attention | — | uniform: exponent near 1 |
# | RoPE | long-range decay (RoFormer) | factor 16.5 at $r = 0$, 4.7 at $r = 128$ |
#
# </details>

# %% [markdown]
# ## Takeaways
#
# - Trained attention is sparse and local: a query uses a handful of keys (3-12 of 128 in the
#   masked GAUs, 3.8 of 64 in the Transformer), so $Z_i$ hardly grows with $n$ (exponent
#   0.05-0.17; $O(n)$ would be 1).
# - That sparsity is learned: untrained attention is nearly uniform (exponents 0.93-1.01), the one
#   case where $n$ = length would be right.
# - So a constant is the right stand-in for $Z_i$: at 4x shorter, $Z_i$ shrank by 7-22%, while
#   $n$ = length cuts the divisor by 75%. RoPE's long-range decay helps keep attention local.
#
# ## Check your understanding
#
# 1. Why does adding a constant to a row's scores not change softmax, and why do we fit the
#    growth of $Z_i$, not its size?
#
#    <details><summary>Answer</summary>
#
#    $e^{S_{ij} + \delta} = e^{\delta} e^{S_{ij}}$: the numerator and $Z_i$ both get the factor
#    $e^{\delta}$, which cancels, so every $a_{ij}$ is unchanged. A model can therefore put $Z_i$ at
#    any level (the constant shifts $\ln Z_i$ by $\delta$), and the level tells us nothing. The
#    growth does: comparing $Z_i$ at two lengths for the same row, $Z_i(n)/Z_i(n')$, the constant
#    cancels, and what is left says how much weight the added keys take. That is why the lesson fits
#    the exponent $b$ of $Z \approx C\,n^b$ and not its level.
#
#    </details>
#
# 2. An untrained model has $Z_i \propto n$. Which divisor would suit it? What did training
#    change?
#
#    <details><summary>Answer</summary>
#
#    With $Z_i \propto n$ every key gets about $1/n$: attention is nearly uniform, and the row sum
#    really does scale with the number of keys, so "n = length" would keep every row the size it had
#    in training and "n fixed" would not. Training concentrated attention on a few nearby keys (3-12
#    effective keys out of 128 instead of about 128), so the sum stopped growing with $n$ and the
#    right divisor became a constant.
#
#    </details>
#
# 3. If layer 0's effective keys kept growing with exponent 0.2-0.3, how many would a query use
#    at $n = 8L_{mlm}$, and how much would $Z_i$ grow?
#
#    <details><summary>Answer</summary>
#
#    Effective keys grow like $8^b$ from $L_{mlm}$ to $8L_{mlm}$. For the softmax GAU, seed 0, layer
#    0 (7.3 keys at $n = 128$, exponent 0.21):
#    $7.3 \cdot 8^{0.21} \approx 7.3 \cdot 1.55 \approx 11$ keys; at an exponent of 0.3 from 9.6
#    keys (relu², seed 0, layer 0): $9.6 \cdot 1.87 \approx 18$. Either way a tiny share of 1024
#    keys. The $Z$ exponents (0.05-0.17) give $8^{0.05} \approx 1.11$ to $8^{0.17} \approx 1.42$:
#    $Z_i$ would grow by 11-42% for 8 times more keys, roughly constant. But this extrapolates a fit
#    made up to $L_{mlm}$; past the training length the model meets distances and positions it never
#    saw ([lesson 5](05_entropy_invariance.ipynb)), and the fit need not hold.
#
#    </details>
#
# 4. relu² can zero terms; softmax cannot. Which should have the flatter $Z_i$ at very long
#    lengths?
#
#    <details><summary>Answer</summary>
#
#    Expected: relu². A negative score gives exactly 0, so keys the query does not want add nothing
#    to its sum however many there are; softmax gives every key $e^{S_{ij}} > 0$, and at very long
#    lengths a huge number of small terms adds up, roughly in proportion to $n$. Up to $n = 128$ the
#    stored run shows the opposite (relu² exponents 0.09-0.17, softmax 0.05-0.09): at short lengths
#    what each model learned matters more than the tail, and the argument is about very long rows.
#
#    </details>
#
# 5. Why does RoPE's decay help a model trained with $n$ fixed move to shorter sequences?
#
#    <details><summary>Answer</summary>
#
#    Moving a model to shorter sequences removes keys, and in a bidirectional model the keys a row
#    loses are mostly far ones. The bound says far keys can only get small scores, so they
#    contributed little to the row's sum in training. Dropping them barely changes the sum, so the
#    divisor fixed in training stays about right: RoPE's decay makes "$Z_i = O(k)$" truer.
#
#    </details>
#
# **Exercise:** [exercise 3](../exercises/03_why_normaliser.ipynb) — compute attention entropy per
# head
# and the normaliser $Z_i$ yourself, and fit the growth exponent.
#
# Next, [lesson 4](04_three_fixes.ipynb): the three fixes, and softmax.
