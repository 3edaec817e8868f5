# %% [markdown]
# # Lesson 9 — Retrieval past the training length
#
# **What you will learn**
# - how to give a tiny model a retrieval skill to lose: a needle-in-a-haystack task sized so
#   that a whole prompt fits the training length, mixed into its pretraining;
# - how exact-match retrieval changes with length and with the needle's depth, for NoPE and
#   RoPE, and for every fix of lessons 7 and 8;
# - whether *attention distraction* explains the losses: how much of the question's attention
#   lands on the needle as the haystack grows, and what a temperature does to it;
# - when head-based scaling needs its clamp and its starting value;
# - the per-position fit of the paper's code, and extension ratios with error bars.
#
# **The source.** Wang et al. (2024) test length generalization with passkey retrieval (the
# prompt of LongLoRA, Chen et al. 2023): filler text, the needle "The pass key is K. Remember
# it. K is the pass key." at some depth, then "What is the pass key? The pass key is", with a
# 5-digit key scored by greedy exact match over lengths and depths. They report that NoPE's
# retrieval fails past the training length with attention spread ever thinner ("distraction"),
# that a temperature on the logits brings much of it back, and that head-based scaling does
# best, but only with its clamp at $\lambda \ge 1$ and its start at the searched uniform value
# (without them, passkey accuracy fell from 81 to 53 and to 26).
#
# That prompt does not fit a tiny character model: the needle and the question alone are about
# 95 characters, three times our training length $L = 32$, and lesson 6's models were never
# asked to fetch anything. Here we shrink the task until it fits, and train for it.

# %%
import matplotlib.pyplot as plt
import torch

import minilm
from minilm import (
    NOPE_FIT_C, Recipe, RopeScaling, length_rule, mean_loss, needle_attention, nope_rope_recipe,
    nope_rope_transformer, retrieval_accuracy, retrieval_recipe, temperature, train_head_scales,
)
from minilm.data import RETRIEVAL_DIGITS, retrieval_batch

P = minilm.profile()
corpus = minilm.default_corpus()
tok = corpus.tokenizer
L = P.nope_rope_len
print(f"profile {P.name}: lesson 6's Transformers (d{P.d_model} x {P.nope_rope_layers} x {P.n_head} heads), "
      f"trained at L = {L}; seeds {P.seeds}")


def transformer(pos, **extra):
    return nope_rope_transformer(P, tok.vocab_size, pos, **extra)   # lesson 6's models (minilm.profiles)


trained = minilm.pretrained_many({(pos, seed): (transformer(pos), nope_rope_recipe(P, seed))
                                  for pos in ("nope", "rope") for seed in P.seeds}, progress=False)
text_models = {key: model for key, (model, _) in trained.items()}

# %% [markdown]
# ## A retrieval task sized for a tiny model
#
# The needle is a marker and a 3-digit key, `@417`; the question is one character, `?`,
# and the answer is the key again. The filler is a random window of the corpus. So a window
# of $L = 32$ input characters holds 25 of filler and 7 of structure (`@`, the key, `?` and
# the answer's first two digits; its last digit is only a target; `minilm.data.retrieval_batch`), and the needle can sit at any depth: 0 puts it first,
# 1 right before the question. The loss counts only the answer's digits.
#
# Exact match asks for all three digits under greedy decoding. With the true digits fed back,
# greedy decoding writes the key exactly when the most likely next character is right at each
# of the three answer positions, so one forward pass scores a prompt (`minilm.measure.exact_match`).

# %%
D = RETRIEVAL_DIGITS
x, y = retrieval_batch(corpus, corpus.val, 4, L, torch.Generator().manual_seed(0))
for row, target in zip(x, y):
    print(f"{tok.decode(row)!r:<40} answer {tok.decode(target[-D:])}")

# %% [markdown]
# ## Retrieval mixed into pretraining
#
# We take lesson 6's NoPE and RoPE models (2400 steps of text at $L$) and continue their
# pretraining for 1000 steps at $L$ on a mixture: three batches in four are retrieval windows
# (needle at a random depth), one in four is text (`minilm.retrieval_recipe`: learning rate
# 3e-3, batch 32). We settled on three digits and three batches in four after trial runs (not
# part of this lesson) in which NoPE, with 4-digit keys and half the batches, learned retrieval
# far more slowly than RoPE.
#
# Then we score every model on 100 prompts per length and depth: lengths $L$ to $8L$, depths
# 0, 1/4, 1/2, 3/4 and 1. The prompts come from the validation text with a fixed seed, so
# every model and every fix answers the same questions.

# %%
trained = minilm.pretrained_many({key: (transformer(key[0]), retrieval_recipe(P, key[1]), base)
                                  for key, base in text_models.items()}, progress=False)
models = {key: model for key, (model, _) in trained.items()}

lengths = [L, 2 * L, 4 * L, 8 * L]
depths = [0.0, 0.25, 0.5, 0.75, 1.0]
TRIALS = 100
in_range = {key: retrieval_accuracy(model, corpus, [L], depths, trials=TRIALS).mean().item()
            for key, model in models.items()}
before = {key: retrieval_accuracy(model, corpus, [L], depths, trials=TRIALS).mean().item()
          for key, model in text_models.items()}
for key in models:
    pos, seed = key
    print(f"{pos} seed {seed}: exact match at L {in_range[key]:.2f} (before the mixture {before[key]:.2f});  "
          f"text loss at L {mean_loss(models[key], corpus, L):.3f} (before {mean_loss(text_models[key], corpus, L):.3f})")

# %% [markdown]
# After 1000 steps of the mixture both models retrieve in range: NoPE 0.92 and 0.93 (seeds 0
# and 1), RoPE 1.00 on both, where the same models before the mixture got 0.00. The skill has a
# price in text: with one batch in four of text, the loss at $L$ rose from 1.460 and 1.509 to
# 1.565 and 1.600 nats (NoPE, seeds 0 and 1) and from 1.317 and 1.319 to 1.372 and 1.374 (RoPE).
#
# Asserted on every seed: exact match at $L$ above 0.75, over 500 prompts (binomial standard
# error at most 0.022). The control is the same model before the mixture, which fails it.

# %%
for key in models:
    assert in_range[key] > 0.75, (key, in_range[key])
    assert before[key] < 0.75, key         # the control: text pretraining alone did not teach retrieval

# %% [markdown]
# ## Past the training length: every fix on one grid
#
# The fixes, as in lessons 7 and 8, now scored on retrieval:
# - **NoPE, $\lambda = 1$**: the model as trained;
# - **NoPE, best uniform $\lambda$**: at each length, the best of a grid of temperatures
#   on a *separate* set of 150 prompts (another seed), then scored on the common prompts;
# - **NoPE, $1 + c \ln s$**: the paper's fitted rule, $c = 0.397$ (Wang et al. 2024);
# - **NoPE, head scaling**: one temperature per layer and head, trained alone as in the
#   paper's code (200 steps of 8 sequences at $4L$, learning rate 0.05, clamp at 1, start at the
#   best uniform $\lambda$ for $4L$) on the model's own pretraining mixture at $4L$;
# - **RoPE zero-shot**, with **NTK-aware** and **YaRN** frequency scaling at each length's $s$;
# - **RoPE PI and YaRN fine-tuned**: every weight trains at $4L$ with $s = 4$ on the same
#   mixture, for the same budget as head scaling (200 steps of 8 sequences, learning rate 3e-4).

# %%
grid = [1.0, 1.2, 1.4, 1.6, 1.8, 2.0, 2.4]
SEARCH = dict(depths=[0.0, 0.5, 1.0], trials=50, seed=2024)   # not the prompts we report


def best_uniform(model, T):
    scores = {}
    for lam in grid:
        with temperature(model, lam):
            scores[lam] = retrieval_accuracy(model, corpus, [T], SEARCH["depths"], trials=SEARCH["trials"],
                                             seed=SEARCH["seed"]).mean().item()
    return max(scores, key=scores.get)   # the first (smallest) lambda on a tie


best = {(seed, T): best_uniform(models["nope", seed], T) for seed in P.seeds for T in lengths[1:]}
print("best uniform lambda for retrieval (search prompts): " + ";  ".join(
    f"seed {seed}: " + ", ".join(f"{T // L}L {best[seed, T]}" for T in lengths[1:]) for seed in P.seeds))

target = 4 * L
head_budget = dict(steps=200, batch_size=8)


def head_scaled(seed, *, start, clamp=True, steps=200):
    """A fresh copy of the retrieval-trained NoPE model whose temperatures alone train at 4L on its mixture."""
    model = minilm.pretrained(transformer("nope"), retrieval_recipe(P, seed), init=text_models["nope", seed],
                              progress=False)[0]
    train_head_scales(model, corpus, length=target, start=start, clamp=clamp, steps=steps, batch_size=8,
                      retrieval=0.75, seed=100 + seed, progress=False)
    return model


rope_tuned = minilm.pretrained_many({
    (seed, kind): (transformer("rope", rope_scaling=RopeScaling(kind, 4.0, L)),
                   Recipe(length=target, lr=3e-4, warmup=10, seed=seed, retrieval=0.75, **head_budget),
                   models["rope", seed])
    for seed in P.seeds for kind in ("pi", "yarn")}, progress=False)


def grid_for(model, per_length=None):
    """The length x depth exact-match grid, each length with its own settings (temperature, rope_scaling)."""
    rows = []
    for T in lengths:
        setting = dict((per_length or {}).get(T, {}))
        with temperature(model, setting.pop("lam", None)):
            rows.append(retrieval_accuracy(model, corpus, [T], depths, trials=TRIALS, **setting)[0])
    return torch.stack(rows)


def rope_setting(kind):
    return {T: {"rope_scaling": RopeScaling(kind, T / L, L)} for T in lengths[1:]}


heat = {}
for seed in P.seeds:
    nope, rope = models["nope", seed], models["rope", seed]
    heads = head_scaled(seed, start=best[seed, target])
    heat["NoPE", seed] = grid_for(nope)
    heat["NoPE, best uniform lambda", seed] = grid_for(nope, {T: {"lam": best[seed, T]} for T in lengths[1:]})
    heat["NoPE, 1 + 0.397 ln s", seed] = grid_for(nope, {T: {"lam": length_rule("nope_fit", T, L)} for T in lengths[1:]})
    heat["NoPE, head scaling at 4L", seed] = grid_for(heads)
    heat["RoPE", seed] = grid_for(rope)
    heat["RoPE, NTK zero-shot", seed] = grid_for(rope, rope_setting("ntk"))
    heat["RoPE, YaRN zero-shot", seed] = grid_for(rope, rope_setting("yarn"))
    heat["RoPE, PI fine-tuned at 4L", seed] = grid_for(rope_tuned[seed, "pi"][0])
    heat["RoPE, YaRN fine-tuned at 4L", seed] = grid_for(rope_tuned[seed, "yarn"][0])
    models["NoPE, head scaling at 4L", seed] = heads

methods = list(dict.fromkeys(label for label, _ in heat))
print(f"{'exact match, mean over depths (seeds ' + '/'.join(map(str, P.seeds)) + ')':<34}"
      + "".join(f"{f'{T // L}L':>17}" for T in lengths))
for label in methods:
    means = {seed: heat[label, seed].mean(1) for seed in P.seeds}
    print(f"{label:<34}" + "".join(
        f"{sum(means[s][k] for s in P.seeds) / len(P.seeds):7.2f} ({'/'.join(f'{means[s][k]:.2f}' for s in P.seeds)})"
        .rjust(17) for k in range(len(lengths))))

# %%
seed = P.seeds[0]
fig, axes = plt.subplots(3, 3, figsize=(11, 8.5), dpi=80, sharex=True, sharey=True)
for ax, label in zip(axes.flat, methods):
    image = ax.imshow(heat[label, seed].T, vmin=0, vmax=1, cmap="viridis", origin="lower", aspect="auto")
    for a in range(len(lengths)):
        for b in range(len(depths)):
            value = heat[label, seed][a, b].item()
            ax.text(a, b, f"{value:.2f}", ha="center", va="center", fontsize=8,
                    color="black" if value > 0.5 else "white")
    ax.set_title(label, fontsize=10)
axes[0, 0].set_xticks(range(len(lengths)), [f"{T // L}L" for T in lengths])
axes[0, 0].set_yticks(range(len(depths)), [str(d) for d in depths])
for ax in axes[-1]:
    ax.set_xlabel("prompt length")
for ax in axes[:, 0]:
    ax.set_ylabel("needle depth")
fig.colorbar(image, ax=axes, shrink=0.6, label="exact match")
fig.suptitle(f"Retrieval by length and depth, seed {seed} ({TRIALS} prompts per cell)")
plt.show()

# %% [markdown]
# Reading the table (each cell the mean over the five depths; seeds in brackets):
# - **NoPE loses retrieval gradually**: 0.92 in range, 0.85 at $2L$, 0.64 at $4L$, 0.38 at
#   $8L$. **RoPE collapses**: perfect in range, then 0.72, 0.28 and 0.09, with seed 1 down
#   to 0.04 already at $4L$. On retrieval the paper's headline shows at this size from $4L$
#   on: there NoPE keeps far more than RoPE. At $2L$ it depends on the seed: RoPE is ahead on
#   seed 0 (0.92 against 0.86), far behind on seed 1 (0.51 against 0.83).
# - **Temperature helps NoPE only past $2L$, and by a seed-dependent amount.** The search
#   picks $\lambda = 1$ at $2L$ on both seeds; at $4L$ and $8L$ it picks 1.0 and 1.2 on seed 0,
#   1.4 and 1.8 on seed 1 (the paper's uniform runs use 1.2, 1.5 and 1.8 at 2x, 4x and 8x).
#   On seed 1 it lifts $4L$ from 0.58 to 0.69 and $8L$ from 0.27 to 0.49; on seed 0 it
#   changes nothing at $4L$ and lifts $8L$ only from 0.48 to 0.50. The paper's rule
#   $1 + 0.397 \ln s$ does about as well at $8L$ (0.48) without any search.
# - **Head scaling** (trained at $4L$) is the best NoPE fix at $8L$ on seed 0 only (0.54,
#   against 0.50 for the best uniform $\lambda$), twice its training length. On seed 1 it is
#   behind the best uniform $\lambda$ and the rule (0.46 against 0.49 and 0.48); on the mean
#   it is level with them (0.50 against 0.49 and 0.48). No fix brings $8L$ back to the
#   in-range 0.92.
# - **Where the needle is lost differs** (the figure, seed 0). NoPE at $8L$ loses needles
#   that sit *late* in the prompt: 0.58 at depth 0, 0.35 at depth 1, where the needle is
#   close to the question but at a large absolute position. RoPE at $8L$ loses needles that
#   are *far* from the question: 0.10 at depth 0 against 0.35 at depth 1 (not monotone in
#   between: 0.21, 0.07, 0.21). We read this as: RoPE's unseen inputs are long distances;
#   NoPE's, which reads position off the causal mask (lesson 6), are late positions.
# - **RoPE zero-shot**: NTK-aware scaling helps on average at every length past $L$ (0.74,
#   0.67, 0.28 against 0.72, 0.28, 0.09), though not on seed 0 at $2L$ (0.84 against 0.92);
#   YaRN zero-shot destroys retrieval from $2L$ on (0.10 at $2L$). At $L = 32$ YaRN keeps no
#   frequency and acts as a ramped PI plus a temperature (lesson 7); which of the two costs
#   the retrieval we did not measure.
# - **RoPE fine-tuned at $4L$** (PI, YaRN; all weights, the same budget as head scaling) is
#   the best at $4L$ on the mean (0.83 and 0.87 against 0.71 for head scaling; on seed 0
#   zero-shot NTK is ahead of both, 0.87 against 0.77 and 0.80), worse in range (0.81 and
#   0.86 against plain RoPE's 1.00: it runs with $s = 4$ at every length), and at $8L$ below
#   NoPE with head scaling (0.35 and 0.43 against 0.50; also on each seed). YaRN is ahead of
#   PI at every length on each seed (at $4L$ 0.80 against 0.77 and 0.94 against 0.89).
#
# The bullets above are read from the table and the figure (head scaling against the other
# NoPE fixes at $8L$, the depth pattern, fine-tuned RoPE ahead at $4L$); only what follows is
# asserted, on every seed, each with its control:
# - NoPE retrieves more than RoPE at $4L$ and $8L$, by more than 0.15 (measured 0.20 and
#   0.54 at $4L$, 0.29 and 0.27 at $8L$). Control: in range the order is reversed (RoPE 1.00).
# - NTK-aware scaling beats plain RoPE at $4L$ by more than 0.15 (0.36 and 0.43). Control: at
#   $L$ the two are the same model ($s = 1$).
# - YaRN zero-shot is below plain RoPE at $2L$ by more than 0.3 (0.83 and 0.39). Control: at
#   $L$ they are equal.
# - Averaged over the seeds, head scaling beats $\lambda = 1$ at $8L$ by more than 0.06
#   (measured 0.13: 0.06 on seed 0, 0.19 on seed 1, so we do not assert it per seed). Control:
#   in range the same difference is $-0.02$.

# %%
def mean_at(label, seed, T):
    return heat[label, seed][lengths.index(T)].mean().item()


for seed in P.seeds:
    assert mean_at("NoPE", seed, L) < mean_at("RoPE", seed, L)          # the control: in range RoPE is ahead
    for T in (4 * L, 8 * L):
        assert mean_at("NoPE", seed, T) > mean_at("RoPE", seed, T) + 0.15, (seed, T)
    assert mean_at("RoPE, NTK zero-shot", seed, 4 * L) > mean_at("RoPE", seed, 4 * L) + 0.15, seed
    assert mean_at("RoPE, YaRN zero-shot", seed, 2 * L) < mean_at("RoPE", seed, 2 * L) - 0.3, seed


def head_gain(T):
    return sum(mean_at("NoPE, head scaling at 4L", s, T) - mean_at("NoPE", s, T) for s in P.seeds) / len(P.seeds)


print(f"head scaling minus lambda = 1, mean over seeds: {head_gain(8 * L):+.2f} at 8L, {head_gain(L):+.2f} at L")
assert head_gain(8 * L) > 0.06
assert head_gain(L) < 0.06   # the control

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
# measured here; see question 3).
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
ablation = {}
for seed in P.seeds:
    for label, v in variants.items():
        for steps in budgets:
            start = best[seed, target] if v["start"] is None else v["start"]
            if (label, steps) == ("clamp, start at best", 200):   # trained above, same seed: the same model
                model = models["NoPE, head scaling at 4L", seed]
            else:
                model = head_scaled(seed, start=start, clamp=v["clamp"], steps=steps)
            ablation[label, steps, seed] = (
                retrieval_accuracy(model, corpus, [target], depths, trials=TRIALS).mean().item(),
                mean_loss(model, corpus, target), model.temperature.min().item())
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
# between head scaling and $\lambda = 1$ at $8L$ on seed 1 (0.19, above) would fail.

# %%
for seed in P.seeds:
    for steps in budgets:
        paper = ablation["clamp, start at best", steps, seed][0]
        for label in ("no clamp", "start at 1"):
            assert abs(ablation[label, steps, seed][0] - paper) <= 0.05, (seed, label, steps)

# %% [markdown]
# ## The fit per position, as the paper's code does it
#
# Lessons 7 and 8 fitted $\lambda(s) = 1 + c\ln s$ to the best uniform $\lambda$ *per evaluation
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
# lesson 7's $c = 0.42$. Per position, $a$ = 0.712 and 0.672: positions far
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
# | retrieval task | passkey (LongLoRA's prompt, 5-digit key), a billion-parameter model | `@` + 3-digit key, `?` + answer, in a 0.2-million-parameter character model, mixed into pretraining |
# | retrieval in range | high (paper) | NoPE 0.92 / 0.93, RoPE 1.00 |
# | NoPE past $L$ | fails beyond the training length (paper) | gradual: 0.85 / 0.64 / 0.38 at 2L / 4L / 8L |
# | NoPE vs RoPE past $L$ | NoPE extends further (paper) | yes from 4L: by 0.20-0.54 at 4L and 0.27-0.29 at 8L; at 2L RoPE is ahead on seed 0 (0.92 against 0.86) |
# | uniform $\lambda$ | about 1.2 / 1.5 / 1.8 at 2x / 4x / 8x (the code's uniform runs) | best for retrieval 1.0 / 1.0 / 1.2 and 1.0 / 1.4 / 1.8; gains at 8L of 0.02 and 0.22 |
# | head scaling | best, competitive with RoPE extensions (paper) | at 8L 0.54 / 0.46: best NoPE fix on seed 0 only, level with the best uniform $\lambda$ on the mean (0.50 against 0.49); behind fine-tuned PI and YaRN at 4L (0.71 against 0.83 and 0.87), ahead at 8L (0.50 against 0.35 and 0.43) |
# | without clamp / start | passkey 81 to 53 / 26 (paper) | no difference in retrieval (at most 0.02 apart at 10-200 steps; bound asserted 0.05); on seed 0 the two starts are the same run (best $\lambda$ at 4L is 1.0); on seed 1 start at 1 costs 0.021 nats of text after 10 steps; no clamp costs seed 0 up to 0.041 nats of text |
# | distraction | entropy grows with length; temperature restores it (paper) | the needle-finding head's mass 0.98 / 0.99 to 0.70 / 0.93 at 8L, back to 0.88 / 0.96 with $\lambda$; retrieval gains the other way round (+0.02 / +0.22), so the head's mass explains little of the loss |
# | $\lambda$ fit | per position, $a = 0.397$ (paper; fit in `fig/fig_fit.ipynb` of its code) | per position $a$ = 0.71 / 0.67; per length $c$ = 0.45 / 0.42 |
# | extension ratio | NoPE about +20%, RoPE about +10% (paper) | 1.0 for all, intervals overlap; the rise past $L$ separates them (0.3 against 1.4-1.5 nats) |
#
# ## Check your understanding
#
# 1. Exact match is scored with one forward pass. Why is that the same as greedy decoding
#    three digits, and why would it not be for sampling with a temperature?
# 2. The best uniform $\lambda$ for retrieval (1.0 and 1.4 at $4L$) is lower than the best for
#    text loss in lesson 7 (1.5-1.7 at $4L$). What does each objective reward?
# 3. On seed 0 the temperature gives the needle-finding head its focus back at $8L$ but not the
#    retrieval. Design a measurement that finds where the answer is lost instead (hint:
#    `needle_attention` can score any query position, and the key has three digits).
# 4. Without the clamp, some temperatures fall below 1 with no cost in retrieval. What does
#    that say about those heads? How would you check it?
# 5. The per-position $a$ is about 0.25 steeper than the per-length $c$ on the same table.
#    Which one would you use to set a temperature at inference, and why?
# 6. Exercise 9 asks you to write exact match, the needle mass and the per-position fit.
