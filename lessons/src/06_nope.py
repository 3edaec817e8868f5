# %% [markdown]
# # Lesson 6 — A Transformer with no position encoding
#
# **What you will learn**
# - that a *causal* Transformer with no position encoding (NoPE) still knows where it is,
#   how the causal mask gives it that, and why a bidirectional one cannot;
# - how NoPE and RoPE behave past the training length, position by position, and how to
#   read an "extension ratio" off a loss curve;
# - what *attention distraction* is (entropy growing with length) and that NoPE's failure
#   goes with it.
#
# **The source** (Wang et al., "Length Generalization of Causal Transformers without
# Position Encoding", ACL 2024). A causal NoPE language model extends a little past its
# training length (about +20%, from 2K to 2.4K tokens, where RoPE manages about +10%), then
# fails; the failure coincides with attention spreading out, its entropy rising with
# length. Lesson 7 uses that to fix it with a temperature.

# %%
import math

import matplotlib.pyplot as plt
import torch

import minilm
from minilm import LM
from minilm.profiles import long_recipe, long_transformer

P = minilm.profile()
corpus = minilm.default_corpus()
tok = corpus.tokenizer
L = P.nope_len
print(f"profile {P.name}: Transformer d{P.d_model} x {P.nope_layers} layers x {P.n_head} heads, "
      f"trained at L = {L} for {P.long_steps} steps, seeds {P.seeds}")

# %% [markdown]
# ## Two models: RoPE and NoPE
#
# The same causal Transformer, once with RoPE and once with nothing at all added for
# position. NoPE learns more slowly (earlier runs here: at 800 steps it is far behind RoPE
# and nothing we do later helps it), so both train for longer than lesson 1's models, and
# with four layers (at two, NoPE stays far behind RoPE even in range).

# %%
def transformer(pos, causal=True):
    return long_transformer(P, tok.vocab_size, pos, causal=causal)   # shared with lessons 7-8


print(transformer("nope"))
models = {(pos, seed): minilm.pretrained(transformer(pos), long_recipe(P, seed))[0]
          for pos in ("rope", "nope") for seed in P.seeds}

# %% [markdown]
# ## NoPE knows the position: a linear probe
#
# If nothing tells a NoPE model where a token is, can a linear function of its hidden
# state tell? We fit a least-squares line from the hidden state after each layer to the
# position (0 to $L-1$) on 48 sequences and score it ($R^2$) on 16 others.
#
# **Why it can work.** With a causal mask, the query at position $i$ averages over $i+1$
# values. Even with no learning at all, an average of more terms has a smaller spread, so
# the *size and shape* of the attention output change with $i$: the mask itself writes
# position into the hidden state. In a **bidirectional** model every position averages over
# the same set of keys; without a position encoding the model is permutation-equivariant
# (shuffle the input, the outputs shuffle the same way; tested in `tests/`), so nothing
# but the content of the text can reveal a position.

# %%
def hidden_states(model, idx):
    """The residual stream after every block: a list of (B, T, d) tensors."""
    captured = []
    hooks = [block.register_forward_hook(lambda _m, _i, out: captured.append(out[0])) for block in model.blocks]
    with torch.no_grad():
        model(idx)
    for hook in hooks:
        hook.remove()
    return captured


def probe_r2(model, layer):
    """R^2 of a least-squares probe from the hidden state after ``layer`` to the position."""
    x = minilm.eval_batches(corpus, task="causal", length=L, batch_size=64, n_batches=1)[0][0]
    h = hidden_states(model, x)[layer]
    features = torch.cat([h, torch.ones(*h.shape[:2], 1)], dim=-1)           # with a bias
    position = torch.arange(L, dtype=torch.float).expand(len(x), L)
    train, test = slice(0, 48), slice(48, 64)
    w = torch.linalg.lstsq(features[train].reshape(-1, features.shape[-1]), position[train].reshape(-1, 1)).solution
    predicted = features[test].reshape(-1, features.shape[-1]) @ w
    truth = position[test].reshape(-1, 1)
    return 1 - ((predicted - truth) ** 2).sum().item() / ((truth - truth.mean()) ** 2).sum().item()


torch.manual_seed(0)
untrained_causal, untrained_bidirectional = LM(transformer("nope")).eval(), LM(transformer("nope", causal=False)).eval()
probes = {f"trained causal {pos.upper()}, seed {seed}": [probe_r2(models[pos, seed], l) for l in range(P.nope_layers)]
          for pos in ("nope", "rope") for seed in P.seeds}
probes["untrained causal NoPE"] = [probe_r2(untrained_causal, l) for l in range(P.nope_layers)]
probes["untrained bidirectional NoPE"] = [probe_r2(untrained_bidirectional, l) for l in range(P.nope_layers)]
for name, r2 in probes.items():
    print(f"{name:<30} probe R^2 after each layer: " + "  ".join(f"{v:5.2f}" for v in r2))

# %% [markdown]
# What we measured (CPU profile): the trained NoPE models reach $R^2$ of about 0.4-0.5 in
# their middle layers: a linear read-out recovers a good part of the position, not all
# of it (the signal is spread over features a line cannot fully use). The untrained causal
# model already gives 0.2-0.3: **the causal mask alone writes position into the hidden
# state.** The bidirectional one gives nothing (negative $R^2$: worse than guessing the mean).
# And a surprise worth a moment: the trained **RoPE** model stores almost no absolute
# position in its residual stream. It does not need to; RoPE hands every attention score
# the *relative* position directly. Asserted, with margins below what we measured:

# %%
for seed in P.seeds:
    assert max(probes[f"trained causal NOPE, seed {seed}"]) > 0.3, seed
    assert max(probes[f"trained causal ROPE, seed {seed}"]) < 0.2, seed
assert max(probes["untrained causal NoPE"]) > 0.15
assert max(probes["untrained bidirectional NoPE"]) < 0.05

# %% [markdown]
# ## Past the training length, position by position
#
# We evaluate both models on sequences 8 times the training length and average the loss
# at each position over 32 sequences. The **extension ratio** is where the loss, averaged
# over buckets of $L/8$ positions, first exceeds its in-range level (the mean over
# positions $L/2..L$) by 0.1 nats, divided by $L$.

# %%
T_long = 8 * L
position_loss = {key: minilm.loss_by_position(model, corpus, T_long, batch_size=8, n_batches=4)
                 for key, model in models.items()}
ratios = {key: minilm.extension_ratio(loss, L) for key, loss in position_loss.items()}
for (pos, seed), loss in position_loss.items():
    buckets = minilm.bucket_means(loss, L)
    print(f"{pos} seed {seed}: loss per {L}-position bucket " + " ".join(f"{v:.2f}" for v in buckets)
          + f"   extension ratio {ratios[pos, seed]:.3f}")

# %%
fig, ax = plt.subplots(figsize=(7.5, 3.8), dpi=90)
colors = {"rope": "tab:orange", "nope": "tab:blue"}
for (pos, seed), loss in position_loss.items():
    smooth = minilm.bucket_means(loss, L // 8)
    ax.plot((torch.arange(len(smooth)) + 0.5) * (L // 8) / L, smooth, color=colors[pos],
            alpha=1 if seed == P.seeds[0] else 0.5, label=pos.upper() if seed == P.seeds[0] else None)
ax.axvline(1, color="gray", ls=":", lw=1)
ax.set(xlabel="position / training length", ylabel="loss (nats, buckets of L/8)",
       title=f"Causal Transformers trained at {L}, read to {T_long}")
ax.legend()
plt.show()

# %% [markdown]
# RoPE is better in range and breaks almost at once past $L$: positions it has never seen
# mean rotations it has never seen. NoPE is a little worse in range, holds on a little
# longer and then degrades *gently*, never as badly as RoPE. Asserted on every seed:
# RoPE's loss is lower in range, NoPE's extension ratio is at least RoPE's, and at
# $2L$-$8L$ NoPE's loss is lower by more than half a nat.

# %%
for seed in P.seeds:
    assert position_loss["rope", seed][:L].mean() < position_loss["nope", seed][:L].mean(), seed
    assert ratios["nope", seed] >= ratios["rope", seed], seed
    nope_far = position_loss["nope", seed][2 * L:].mean()
    rope_far = position_loss["rope", seed][2 * L:].mean()
    assert nope_far < rope_far - 0.5, (seed, nope_far, rope_far)

# %% [markdown]
# ## Attention distraction
#
# Wang et al. connect NoPE's failure to its attention: past the training length, heads
# spread their weight over more and more tokens. We measure the attention entropy of
# every head at every position of the long sequences.

# %%
x_long = minilm.eval_batches(corpus, task="causal", length=T_long, batch_size=4, n_batches=1)[0][0]
entropy = {key: minilm.attention_entropy(model, x_long) for key, model in models.items()}   # (layer, head, T)

fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), dpi=90)
model_entropy = entropy["nope", P.seeds[0]]
for layer in range(P.nope_layers):
    smooth = minilm.bucket_means(model_entropy[layer].mean(0), L // 8)
    axes[0].plot((torch.arange(len(smooth)) + 0.5) * (L // 8) / L, smooth, label=f"layer {layer}")
positions = torch.arange(1, T_long + 1).float()
axes[0].plot(positions / L, positions.log(), "k:", lw=1, label="uniform: log(i + 1)")
axes[0].set(xlabel="position / training length", ylabel="entropy (nats, mean over heads)",
            title=f"NoPE seed {P.seeds[0]}: entropy by layer", ylim=(0, 1.2 * math.log(T_long)))
axes[0].axvline(1, color="gray", ls=":", lw=1)
axes[0].legend(fontsize=8)

# NoPE: where entropy is above its in-range level, is the loss too?
for seed in P.seeds:
    ent = minilm.bucket_means(entropy["nope", seed].mean(dim=(0, 1)), L // 8)
    loss = minilm.bucket_means(position_loss["nope", seed], L // 8)
    axes[1].scatter(ent[8:], loss[8:], s=12, alpha=0.7, label=f"NoPE seed {seed}, past L")
    axes[1].scatter(ent[:8], loss[:8], s=12, marker="x", color="gray", label="in range" if seed == P.seeds[0] else None)
axes[1].set(xlabel="mean attention entropy (nats)", ylabel="loss (nats)", title="Loss against entropy, per L/8 bucket")
axes[1].legend(fontsize=8)
plt.tight_layout()
plt.show()

# %%
in_range, far = slice(L // 2, L), slice(4 * L, 8 * L)
for seed in P.seeds:
    ent = entropy["nope", seed].mean(dim=1)                     # (layer, T)
    rise = (ent[:, far].mean(-1) - ent[:, in_range].mean(-1)).tolist()
    ent_b = minilm.bucket_means(entropy["nope", seed].mean(dim=(0, 1))[L:], L // 8)
    loss_b = minilm.bucket_means(position_loss["nope", seed][L:], L // 8)
    correlation = torch.corrcoef(torch.stack([ent_b, loss_b]))[0, 1].item()
    print(f"NoPE seed {seed}: entropy rise from in range to 4L-8L, per layer: "
          + " ".join(f"{r:+.2f}" for r in rise) + f";  correlation of entropy and loss past L: {correlation:.2f}")
    assert all(r > 0 for r in rise), rise
    assert correlation > 0.5, correlation

# %% [markdown]
# Every layer's attention gets more diffuse far past the training length, and where the
# entropy is higher the loss is higher. That is the paper's *attention distraction*, in a
# model of a hundred thousand parameters. Correlation is not cause: lesson 7 intervenes,
# lowering the entropy with a temperature, and checks whether the loss follows.
#
# ## Our numbers next to the paper's
#
# | | Wang et al. (2024) | here (CPU profile, 2 seeds) |
# |---|---|---|
# | NoPE in range | close to RoPE | a little worse than RoPE (see the bucket table) |
# | extension before the loss rises | NoPE about +20%, RoPE about +10% | the ratios printed above (0.1-nat margin, buckets of L/8) |
# | far past training | both fail; NoPE more gently | RoPE loses 2-3 nats; NoPE about 1 |
# | failure and entropy | entropy grows with length (attention distraction) | entropy rises in every layer past $L$, and correlates with loss |
# | position in a causal NoPE | implicit, through the causal mask | linear probe $R^2$ 0.4-0.5 (untrained: 0.2-0.3; bidirectional: below 0; RoPE: about 0) |

# %% [markdown]
# ## Check your understanding
#
# 1. In an untrained causal NoPE model, which quantity at position $i$ depends on $i$ even if
#    all tokens were identical? Why does that fail for a bidirectional model?
# 2. RoPE is better in range and worse out of range. Give one reason for each.
# 3. The extension ratio depends on the margin and bucket size. Recompute it for a margin of
#    0.05 and 0.2 nats (the cell is a one-liner). Does the ordering of NoPE and RoPE change?
# 4. Entropy rises and loss rises together. Propose an experiment that would show the first
#    *causes* the second, not just goes with it.
# 5. Why does uniform attention over $i+1$ tokens have entropy $\log(i+1)$, and how far below
#    that line are the trained heads?
#
# **Exercise:** `exercises/06_nope.ipynb` — write attention entropy per head, and a
# position probe, and check them against `minilm`.
