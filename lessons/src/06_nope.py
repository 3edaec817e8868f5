# %% [markdown]
# # Lesson 6 — A Transformer with no position encoding
#
# **Model and length.** Causal Transformers (d64, 4 layers, 4 heads), with RoPE or with no position
# encoding (NoPE), trained on text at $L = 32$ for 2400 steps; seeds 0 and 1. Lessons [7](07_temperature.ipynb), [8](08_one_idea.ipynb), [11](11_retrieval.ipynb) and
# 12 reuse them.
#
# **Time.** About 20 minutes to read; about 5 minutes to run on 2 CPU cores (it trains its four
# models; seconds once they are cached).
#
# **Which failure, which fix.** Past $L$, RoPE meets rotation angles it never trained and breaks
# at once; NoPE degrades gently as its attention spreads over more keys (*distraction*). This lesson
# measures both failures; lesson 7 fixes them.
#
# *Numbers in the text are the stored run's; yours will differ a little
# ([how the course checks itself](checking.md)).*
#
# [Notation](README.md#notation) · [sources](README.md#sources) ·
# [exercise 6](../exercises/06_nope.ipynb)

# %% [markdown]
# **The source.** Wang et al., "Length Generalization of Causal Transformers without Position
# Encoding" (ACL 2024): causal NoPE extends about 20% past its training length (RoPE about 10%),
# then fails as its attention spreads out.

# %%
import math

import matplotlib.pyplot as plt
import torch

import minilm
from minilm import LM
from minilm.experiments import nope_rope_models, nope_rope_transformer
from minilm.measure import (bucket_means, eval_batches, extension_ratio, hidden_states,
                            position_probe_r2)
from minilm.plots import course_style

course_style()
P = minilm.profile()
corpus = minilm.default_corpus()
tok = corpus.tokenizer
L = P.nope_rope_len
print(f"profile {P.name}: Transformer d{P.d_model} x {P.nope_rope_layers} layers "
      f"x {P.n_head} heads, "
      f"trained at L = {L} for {P.nope_rope_steps} steps, seeds {P.seeds}")

# %% [markdown]
# ## Two models: RoPE and NoPE
#
# The same causal Transformer, once with RoPE and once with nothing added for position. NoPE must
# work out positions itself and learns more slowly, so both train longer than [lesson 1](01_gau.ipynb)'s models,
# with four layers.

# %%
def transformer(pos, causal=True):
    return nope_rope_transformer(P, tok.vocab_size, pos, causal=causal)   # minilm.experiments


print(transformer("nope"))
# {(pos, seed): model}; lessons 7, 8, 11 and 12 read them again
models = nope_rope_models(P, corpus)
print(f"{sum(p.numel() for p in models['nope', P.seeds[0]].parameters()):,} parameters")

# %% [markdown]
# ## NoPE knows the position: a linear probe
#
# Under a causal mask, query $i$ averages over $n_i = i + 1$ keys, and an average of more values
# has a smaller spread, even untrained. So the mask alone writes position into the hidden state
# (Haviv et al. 2022; Chi et al. 2023). A **bidirectional** model averages every position over the
# same keys: only the text can reveal where a token is.

# %% [markdown]
# ![Under the causal mask, uniform attention gives each of query i's i + 1 keys the weight 1/(i + 1): a count NoPE can read, and past L a count it never saw](figures/causal_counting.svg)
#
# **The idea.** Uniform attention under the mask gives each of query $i$'s keys the weight
# $1/(i + 1)$: a count of the position, from the mask alone; past $L$ it takes values never trained.
#
# <details><summary>The sources, and the bidirectional model's symmetry</summary>
#
# Haviv et al. 2022, "Transformer Language Models without Positional Encodings Still Learn
# Positional Information", found the effect; Chi et al. 2023, "Latent Positional Information is in
# the Self-Attention Variance of Transformer Language Models Without Positional Embeddings", traced
# it to the spread of the attention output. A bidirectional model without a position encoding is
# permutation-equivariant: shuffle the input and its outputs shuffle alike (tested in `tests/`).
#
# </details>

# %% [markdown]
# **The test.** We fit a least-squares line from each layer's hidden state to the position (0 to
# $L-1$) on 48 sequences and score it ($R^2$) on 16 others.

# %%
def probe_r2(model, layer):
    """R^2 of a least-squares probe from the hidden state after ``layer`` to the position:
    fitted on 48 sequences of length L, scored on 16 others (position_probe_r2)."""
    x = eval_batches(corpus, task="causal", length=L, batch_size=64, n_batches=1,
                     device=model.device)[0][0]
    return position_probe_r2(hidden_states(model, x)[layer + 1], n_train=48)  # [0]: embedding


torch.manual_seed(0)
untrained_causal, untrained_bidirectional = (LM(transformer("nope")).eval(),
                                             LM(transformer("nope", causal=False)).eval())
layers = range(P.nope_rope_layers)
probes = {f"trained causal {pos.upper()}, seed {seed}":
              [probe_r2(models[pos, seed], l) for l in layers]
          for pos in ("nope", "rope") for seed in P.seeds}
probes["untrained causal NoPE"] = [probe_r2(untrained_causal, l) for l in layers]
probes["untrained bidirectional NoPE"] = [probe_r2(untrained_bidirectional, l) for l in layers]
for name, r2 in probes.items():
    print(f"{name:<30} probe R^2 after each layer: " + "  ".join(f"{v:5.2f}" for v in r2))

# %% [markdown]
# The trained NoPE models carry position: a linear read-out recovers part of it in their middle
# layers ($R^2$ 0.39-0.48 at the best layer), not all. The untrained causal model already gives
# 0.27: **the causal mask alone writes position.** The untrained bidirectional one gives nothing.
# Trained RoPE stores almost no absolute position (at most 0.01): RoPE hands every score the
# *relative* position, so it need not.
#
# <details><summary>What the assert checks</summary>
#
# At the best layer: trained NoPE above 0.25 on every seed (measured 0.39, 0.48), trained RoPE below
# 0.2 (at most 0.01), untrained causal NoPE above 0.15 (0.27), untrained bidirectional below 0.05
# (at most $-0.06$). Each model is another's control: RoPE and the bidirectional model fail NoPE's
# bounds.
#
# </details>

# %%
for seed in P.seeds:
    # control: RoPE, bidirectional
    assert max(probes[f"trained causal NOPE, seed {seed}"]) > 0.25, seed
    assert max(probes[f"trained causal ROPE, seed {seed}"]) < 0.2, seed    # control: NoPE
# control: the untrained bidirectional model
assert max(probes["untrained causal NoPE"]) > 0.15
assert max(probes["untrained bidirectional NoPE"]) < 0.05   # control: the untrained causal model

# %% [markdown]
# ## Past the training length, position by position
#
# We average each position's loss over 64 sequences of $8L$. The **extension ratio** is where the
# loss, in buckets of $L/8$ positions, first exceeds its in-range level (the mean over positions
# $L/2..L$) by 0.1 nats, divided by $L$.

# %%
T_long = 8 * L
position_loss = {key: minilm.loss_by_position(model, corpus, T_long, batch_size=8, n_batches=8)
                 for key, model in models.items()}
ratios = {key: extension_ratio(loss, L) for key, loss in position_loss.items()}
for (pos, seed), loss in position_loss.items():
    buckets = bucket_means(loss, L)
    print(f"{pos} seed {seed}: loss per {L}-position bucket "
          + " ".join(f"{v:.2f}" for v in buckets)
          + f"   extension ratio {ratios[pos, seed]:.3f}")

# %% mystnb={"image": {"alt": "Line plot of loss against position over the training length (0 to 8), in buckets of L/8, for causal RoPE and NoPE Transformers, two seeds each, L marked. In range RoPE is lower; past L RoPE's loss jumps at once while NoPE's rises gently and stays below RoPE's far past L."}}
fig, ax = plt.subplots()
colors = {"rope": "tab:orange", "nope": "tab:blue"}
lines = {"rope": "-", "nope": "--"}   # the two overlap in range
for (pos, seed), loss in position_loss.items():
    smooth = bucket_means(loss, L // 8)
    ax.plot((torch.arange(len(smooth)) + 0.5) * (L // 8) / L, smooth, lines[pos], color=colors[pos],
            alpha=1 if seed == P.seeds[0] else 0.5,
            label=pos.upper() if seed == P.seeds[0] else None)
ax.axvline(1, color="gray", ls=":", lw=1)
ax.set(xlabel="position / training length", ylabel="loss (nats, buckets of L/8)",
       title=f"Causal Transformers trained at {L}, read to {T_long} (faint: seed {P.seeds[-1]})")
ax.legend()
plt.show()

# %% [markdown]
# RoPE is better in range and breaks almost at once past $L$: unseen positions mean unseen rotation
# angles. NoPE is about 0.2 nats worse in range, but past $L$ its loss rises *gently*: over
# $L..2L$ by about 0.3 nats, where RoPE's rises by 1.5. The extension ratio cannot tell them apart:
# it is 1.0 for all four models, the measure's floor, because the first bucket past $L$ already
# crosses the 0.1-nat margin.
#
# <details><summary>What the assert checks</summary>
#
# On every seed: in range RoPE's loss is lower by over 0.1 nats (0.18, 0.22); over $L..2L$ it rises
# over 0.5 nats more than NoPE's (printed below); at $2L$-$8L$ NoPE's is lower (by 1.4 and 0.8 nats;
# the seeds differ by 0.6, so only the sign is asserted). Control: swap the two models.
#
# </details>

# %%
for seed in P.seeds:
    rope, nope = position_loss["rope", seed], position_loss["nope", seed]
    rise = {pos: (loss[L:2 * L].mean() - loss[L // 2:L].mean()).item()
            for pos, loss in (("rope", rope), ("nope", nope))}
    print(f"seed {seed}: loss over L..2L above the in-range level: "
          f"RoPE {rise['rope']:+.2f}, NoPE {rise['nope']:+.2f} nats")
    assert nope[:L].mean() > rope[:L].mean() + 0.1, seed
    assert rise["rope"] > rise["nope"] + 0.5, (seed, rise)
    assert nope[2 * L:].mean() < rope[2 * L:].mean(), seed

# %% [markdown]
# ## Attention distraction
#
# Wang et al. tie NoPE's failure to attention spreading out past the training length. We measure
# the entropy of every head at every position of the long sequences.

# %% mystnb={"image": {"alt": "Left: NoPE seed 0's attention entropy by layer against position over L (0 to 8), with the uniform curve ln n_i; past L the upper layers rise faster than uniform. Right: scatter of loss against mean attention entropy per L/8 bucket, NoPE past L as dots, in-range buckets as grey crosses: the loss rises with the entropy."}}
entropy = {}
for key, model in models.items():
    x_long = eval_batches(corpus, task="causal", length=T_long, batch_size=4, n_batches=1,
                                 device=model.device)[0][0]
    entropy[key] = minilm.attention_entropy(model, x_long)   # (layer, head, T)

fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
model_entropy = entropy["nope", P.seeds[0]]
for layer in range(P.nope_rope_layers):
    smooth = bucket_means(model_entropy[layer].mean(0), L // 8)
    axes[0].plot((torch.arange(len(smooth)) + 0.5) * (L // 8) / L, smooth, label=f"layer {layer}")
positions = torch.arange(1, T_long + 1).float()
axes[0].plot(positions / L, positions.log(), "k:", lw=1, label="uniform over n_i keys: ln n_i")
axes[0].set(xlabel="position / training length", ylabel="entropy (nats, mean over heads)",
            title=f"NoPE seed {P.seeds[0]}: entropy by layer", ylim=(0, 1.2 * math.log(T_long)))
axes[0].axvline(1, color="gray", ls=":", lw=1)
axes[0].legend()

# NoPE: where entropy is above its in-range level, is the loss too?
for seed in P.seeds:
    ent = bucket_means(entropy["nope", seed].mean(dim=(0, 1)), L // 8)
    loss = bucket_means(position_loss["nope", seed], L // 8)
    axes[1].scatter(ent[8:], loss[8:], s=12, alpha=0.7, label=f"NoPE seed {seed}, past L")
    axes[1].scatter(ent[:8], loss[:8], s=12, marker="x", color="gray",
                    label="in range" if seed == P.seeds[0] else None)
axes[1].set(xlabel="mean attention entropy (nats)", ylabel="loss (nats)",
            title="Loss against entropy, per L/8 bucket")
axes[1].legend()
plt.show()

# %% [markdown]
# A rising entropy alone proves little: uniform attention over the $i+1$ visible keys has entropy
# $\ln(i+1)$, which rises by 2.06 nats from positions $L/2..L$ to $4L..8L$. A head whose entropy
# rises faster is losing its focus, so we compare each layer's rise with that. The loss grows with
# position too, so we print its correlation with the entropy and with $\ln(\text{position})$: the
# first is evidence only if it beats the second.
#
# <details><summary>What the assert checks</summary>
#
# On every seed, NoPE's entropy rise, averaged over layers, beats uniform attention's by more than
# 0.15 nats (measured 2.40 and 2.47 against 2.06). Controls: uniform attention fails it by
# construction; a sliding-window head, whose entropy stays flat, fails it by 2.2 nats. The
# correlations are printed, not asserted.
#
# </details>

# %%
in_range, far = slice(L // 2, L), slice(4 * L, 8 * L)
# positions[i] = i + 1
uniform_rise = (positions[far].log().mean() - positions[in_range].log().mean()).item()
print(f"uniform attention: entropy rise from in range to 4L-8L {uniform_rise:+.2f} nats")
for seed in P.seeds:
    ent = entropy["nope", seed].mean(dim=1)                     # (layer, T)
    rise = (ent[:, far].mean(-1) - ent[:, in_range].mean(-1)).tolist()
    ent_b = bucket_means(entropy["nope", seed].mean(dim=(0, 1))[L:], L // 8)
    loss_b = bucket_means(position_loss["nope", seed][L:], L // 8)
    log_position_b = bucket_means(positions[L:].log(), L // 8)
    correlation = torch.corrcoef(torch.stack([ent_b, loss_b]))[0, 1].item()
    position_correlation = torch.corrcoef(torch.stack([log_position_b, loss_b]))[0, 1].item()
    print(f"NoPE seed {seed}: entropy rise per layer " + " ".join(f"{r:+.2f}" for r in rise)
          + f" (mean {sum(rise) / len(rise):+.2f});  correlation with the loss past L: "
          f"entropy {correlation:.2f}, log(position) {position_correlation:.2f}")
    # control: uniform attention, 0 excess
    assert sum(rise) / len(rise) > uniform_rise + 0.15, (rise, uniform_rise)

# %% [markdown]
# Far past $L$, NoPE's entropy rises faster than uniform attention's: the lower layers more slowly,
# the upper ones much faster (2.6-3.4 nats against 2.06). Heads that were sharp in range spread
# their weight: the paper's *attention distraction*, in a 0.2-million-parameter model. Whether it
# *causes* the rising loss the correlations cannot say: the loss follows $\ln(\text{position})$ as
# closely as the entropy (0.95 and 0.96 for both). [Lesson 7](07_temperature.ipynb) sharpens attention and checks whether
# the loss follows.
#
# <details><summary>Our numbers next to the paper's</summary>
#
# | | Wang et al. (2024) | here (2 seeds) |
# |---|---|---|
# | NoPE in range | close to RoPE | 0.18-0.22 nats worse |
# | extension past $L$ | NoPE about +20%, RoPE +10% | not resolved: ratio 1.0 for all four |
# | just past $L$ | both fail, NoPE more gently | over $L..2L$ NoPE +0.28-0.35, RoPE +1.48-1.62 |
# | failure and entropy | entropy grows (distraction) | rises faster than uniform; see above |
# | position in NoPE | through the causal mask | probe $R^2$ 0.39-0.48 (untrained: 0.27) |
#
# </details>

# %% [markdown]
# ## Takeaways
#
# - A causal NoPE model knows where it is: the mask makes row $i$ average over $i + 1$ keys, and a
#   linear probe reads the position, even untrained; a bidirectional one gives nothing.
# - Past $L$ RoPE breaks at once, NoPE degrades gently though it is worse in range; the extension
#   ratio (1.0 for all four) cannot tell them apart.
# - Far past $L$, NoPE's attention spreads faster than uniform attention's: distraction. It goes
#   with the rising loss; whether it causes it, a correlation cannot show.

# %% [markdown]
# ## Check your understanding
#
# 1. In an untrained causal NoPE model, what at position $i$ depends on $i$ even if all tokens were
#    identical? Why not in a bidirectional model?
#
#    <details><summary>Answer</summary>
#
#    The number of keys row $i$ averages over, $i + 1$: with identical tokens, uniform attention
#    gives each key the weight $1/(i+1)$ and the row an entropy of $\ln(i+1)$. With real, different
#    tokens that count shows in the output: an average of $i + 1$ values has a spread that shrinks
#    as $i$ grows, so the size and shape of the attention output change with $i$ (Chi et al. 2023).
#    In a bidirectional model every row sees the same $T$ keys, so the count is the same for every
#    position, and without a position encoding the model is permutation-equivariant: only the
#    content can reveal a position.
#
#    </details>
#
# 2. RoPE is better in range and worse out of range. Give one reason for each.
#
#    <details><summary>Answer</summary>
#
#    In range: RoPE gives every score the relative position directly, so the model need not work it
#    out (its probe $R^2$ is about 0: it stores no absolute position); NoPE must recover position
#    from the mask, which costs capacity and training (0.18 and 0.22 nats worse in range). Out of
#    range: past $L$ RoPE meets relative distances, and so rotation angles, it never trained, and
#    fails at once; NoPE's inputs past $L$ only have more keys and later positions, which change
#    things gradually.
#
#    </details>
#
# 3. The extension ratio is 1.0 for all four models. Why would a margin below 0.1 nats not
#    separate NoPE from RoPE?
#
#    <details><summary>Answer</summary>
#
#    For NoPE as for RoPE, the first bucket of $L/8$ positions past $L$ already has a loss more
#    than 0.1 nats above the in-range level, so the ratio sits at its floor, 1.0. A smaller margin
#    is crossed at the same bucket or earlier, so it stays at 1.0. Only a larger margin might
#    separate them. A measure whose verdict turns on its margin is fragile; the rise over $L..2L$
#    (RoPE 1.48-1.62 nats, NoPE 0.28-0.35) separates the two clearly.
#
#    </details>
#
# 4. Entropy and loss rise together. What experiment would show that the first *causes* the
#    second?
#
#    <details><summary>Answer</summary>
#
#    Intervene on the entropy while keeping everything else fixed, then watch the loss. Far past
#    $L$, lower the entropy with a logit multiplier $\lambda > 1$ on the same sequences and
#    positions, so that position can no longer be the confound. If the loss falls as the entropy
#    falls, the spreading is at least part of the cause; if the entropy falls and the loss does not,
#    it is a symptom. In range, raise the entropy with $\lambda < 1$: the loss should rise.
#    Sharpening only the layers whose entropy rose fastest, against only the others, says which
#    heads carry it. [Lesson 7](07_temperature.ipynb) does the first (the loss at 4x falls by 0.10-0.20 nats), [lesson 10](10_why_it_works.ipynb)
#    the last, on a retrieval task.
#
#    </details>
#
# 5. Why does uniform attention over $i+1$ keys have entropy $\ln(i+1)$, and where are the trained
#    heads against that line?
#
#    <details><summary>Answer</summary>
#
#    Uniform attention gives each of the $i + 1$ keys $1/(i+1)$, so
#    $H = -\sum_j \frac{1}{i+1} \ln\frac{1}{i+1} = \ln(i+1)$, the largest entropy a row over
#    $i + 1$ keys can have. The trained heads sit well below that line in range (the left plot). For
#    scale, [lesson 3](03_why_normaliser.ipynb) found that [lesson 1](01_gau.ipynb)'s causal Transformer used 3.8 effective keys at $n = 64$,
#    an entropy of about $\ln 3.8 \approx 1.3$ nats against $\ln 64 \approx 4.2$ for uniform
#    attention. Far past $L$ the upper layers of NoPE close in on the line: their entropy rises
#    2.6-3.4 nats where the line rises 2.06.
#
#    </details>
#
# **Exercise:** [exercise 6](../exercises/06_nope.ipynb) — write attention entropy per head and a
# position
# probe, and check them against `minilm`.
#
# Next, [lesson 7](07_temperature.ipynb): the multiplier λ, and RoPE's extensions.
