# %% [markdown]
# # Lesson 2 — Fixed n or dynamic n?
#
# **Model and length.** Part A: [lesson 1](01_gau.ipynb)'s causal relu² GAU (d64, 4 single-head layers), trained at
# $L = 64$. Part B: a bidirectional relu² GAU masked LM (d64, 2 single-head layers), trained at
# $L_{mlm} = 128$. Seeds 0 and 1.
#
# **Time.** About 15 minutes to read; about 3 minutes to run on 2 CPU cores, with lesson 1's models
# cached.
#
# **Which failure, which fix.** The first failure: $\mathrm{relu}^2/n$ with $n$ set to the sample
# length, a divisor that follows the length while a row's real sum does not. The fix tested here:
# keep $n$ fixed at the training length.
#
# *Numbers in the text are the stored run's; yours will differ a little
# ([how the course checks itself](checking.md)).*
#
# [Notation](README.md#notation) · [sources](README.md#sources) ·
# [exercise 2](../exercises/02_fixed_or_dynamic_n.ipynb)

# %% [markdown]
# **The claim** (Su, "Attention and Softmax are a better match", 2022). Pretraining packs samples
# to one length (512 in the post), so the GAU's divisor $n$ is a constant there. Fine-tuning on
# shorter samples, should $n$ follow the length or stay 512? Su found **fixed $n$ clearly better
# after fine-tuning.** [Lesson 3](03_why_normaliser.ipynb) explains why; here we test it.
#
# ![A row that reads k keys has output scale k / n: with n fixed at L it stays where training left it; with n = the length it grows at short lengths and shrinks at long ones](figures/fixed_or_length_n.svg)
#
# **The idea.** relu² does not normalise a row: its output scales like the $k$ keys it reads
# divided by $n$. Only a fixed $n$ keeps that scale where training left it.

# %%
import matplotlib.pyplot as plt
import torch

import minilm
from minilm import Config, Recipe
from minilm.experiments import causal_gau, causal_recipe, masked_lm_gau, masked_lm_recipe
from minilm.measure import eval_batches
from course.grader import cmp
from minilm.plots import course_style

course_style()
P = minilm.profile()
corpus = minilm.default_corpus()
tok = corpus.tokenizer
print(f"profile {P.name}: seeds {P.seeds}; causal models trained at {P.train_len}, "
      f"masked LMs at {P.mlm_len}")

# %% [markdown]
# ## Part A — the causal model of lesson 1
#
# [Lesson 1](01_gau.ipynb)'s GAU, trained with $n = L$, run at shorter lengths with three divisors:
#
# | `n=` | row $i$ is divided by | at $T = L$ |
# |---|---|---|
# | `L` (fixed) | $L$ | as in training |
# | `"length"` | $T$, the sample length | as in training |
# | `"row"` | $n_i = i + 1$, the keys it sees | *not* as in training |

# %%
L = P.train_len
gau_config = causal_gau(P, tok.vocab_size)   # lesson 1's config (minilm.experiments)
causal_trained = minilm.pretrained_many({seed: (gau_config, causal_recipe(P, seed))
                                         for seed in P.seeds})
causal_models = {seed: model for seed, (model, _) in causal_trained.items()}

eval_lengths = [L // 8, L // 4, L // 2, L]
choices = {"n fixed": L, "n = length": "length", "n = row": "row"}
causal = {}
for seed, model in causal_models.items():
    for label, n in choices.items():
        causal[seed, label] = minilm.loss_by_length(model, corpus, eval_lengths, n=n)
for label in choices:
    cells = "  ".join(f"{T:>3}: " + "/".join(f"{causal[s, label][T]:.2f}" for s in P.seeds)
                      for T in eval_lengths)
    print(f"{label:<11} loss by length (seeds {'/'.join(map(str, P.seeds))})  {cells}")

# %% mystnb={"image": {"alt": "Line plot of validation loss against evaluation length T (L/8 to L, log scale) for the causal relu squared GAU trained at L, with three divisors, two seeds each. With n fixed the loss rises only a little at short lengths; with n = length it climbs steeply as T shrinks; n = row is worse even at L."}}
fig, ax = plt.subplots()
styles = {"n fixed": "tab:blue", "n = length": "tab:red", "n = row": "tab:gray"}
# n fixed and n = length coincide at T = L: other markers, sizes and lines keep both visible
markers = {"n fixed": "o-", "n = length": "s--", "n = row": "^:"}
sizes = {"n fixed": 8, "n = length": 5, "n = row": 5}
for (seed, label), losses in causal.items():
    ax.plot(eval_lengths, [losses[T] for T in eval_lengths], markers[label], color=styles[label],
            ms=sizes[label], alpha=1 if seed == P.seeds[0] else 0.5,
            label=label if seed == P.seeds[0] else None)
ax.set(xscale="log", xticks=eval_lengths, xticklabels=eval_lengths,
       xlabel="evaluation length T", ylabel="validation loss (nats/char)",
       title=f"Causal relu² GAU trained at {L} with n = {L} (faint: seed {P.seeds[-1]})")
ax.minorticks_off()
ax.legend()
plt.show()

# %% [markdown]
# With $n$ fixed, shorter sequences cost a little (less context: 1.67 nats at $L/8$, 1.46-1.47 at
# $L$). With $n$ = length the loss climbs as $T$ shrinks (2.70-2.97 at $L/8$). $n$ = row is wrong
# even at $L$ (1.97-2.08): rows were never divided by their own key count.
#
# **Why fixed $n$ transfers, by construction.** In a causal model row $i$ sees keys $0..i$ only,
# so a sequence of length $T < L$ is the first $T$ positions of a length-$L$ one. With $n$ fixed
# its logits *are* the first $T$ logits of the long one:

# %%
model = causal_models[P.seeds[0]]
x = eval_batches(corpus, task="causal", length=L, batch_size=2, n_batches=1,
                 device=model.device)[0][0]
T = L // 4
with torch.no_grad():
    prefix_fixed = cmp(f"fixed n: first {T} of {L}", model(x[:, :T]), model(x)[:, :T])
    prefix_length = cmp(f"n = length: first {T} of {L}", model(x[:, :T], n="length"),
                        model(x)[:, :T])

# %% [markdown]
# With $n$ = length, the short sequence divides by $T$ instead of $L$: every attention weight is
# $L/T$ times larger than in training ($\times 4$ at $T = L/4$), and so is the attention output,
# which the layers after it have never seen.
#
# <details><summary>How we check it: margins and controls</summary>
#
# Asserted on every seed: $n$ = length worse than $n$ fixed by more than 0.5 nats at $L/8$ and
# $L/4$ (measured 0.8-1.3); $n$ = row worse at $L$ by more than 0.3 (measured 0.5-0.6). Control:
# at $T = L$, $n$ = length divides by the same $L$, a gap of exactly 0. The prefix identity is a
# demonstration, with $n$ = length as its control.
#
# </details>

# %%
# a demonstration of the construction; n = length is its control
assert prefix_fixed and not prefix_length
for seed in P.seeds:
    for T in (L // 8, L // 4):   # control: at T = L the two divisors coincide, gap 0
        assert causal[seed, "n = length"][T] > causal[seed, "n fixed"][T] + 0.5, (seed, T)
    # control: n = length at L, gap 0
    assert causal[seed, "n = row"][L] > causal[seed, "n fixed"][L] + 0.3, seed

# %% [markdown]
# **Su's models are bidirectional**: every position sees every key, so a shorter sample is *not*
# a prefix of a training one, and every row loses terms. The claim must be tested there.
#
# ## Part B — a bidirectional masked LM, Su's setting
#
# 15% of the characters are hidden (BERT-style) and predicted from both sides. Pretrained at
# $L_{mlm}$ with $n = L_{mlm}$.

# %%
L_mlm = P.mlm_len
# shared with lessons 3-4 (minilm.experiments)
mlm_config = masked_lm_gau(P, tok.vocab_size, "relu2", n=L_mlm)
print(mlm_config)
mlm_trained = minilm.pretrained_many({seed: (mlm_config, masked_lm_recipe(P, seed))
                                      for seed in P.seeds})
mlm_models = {seed: model for seed, (model, _) in mlm_trained.items()}
for seed in P.seeds:
    result = minilm.evaluate(mlm_models[seed], corpus, task="mlm", length=L_mlm, n_batches=8)
    print(f"seed {seed}: MLM accuracy at {L_mlm}: {100 * result['accuracy']:.1f}%  "
          f"(loss {result['loss']:.3f})")

# %% [markdown]
# ### Zero-shot: the same weights at shorter lengths
#
# No training at the new length: only $T$ changes, with $n$ fixed or $n = T$.

# %% mystnb={"image": {"alt": "Line plot of masked-LM accuracy against evaluation length T (L_mlm/8 to L_mlm, log scale) for the bidirectional relu squared GAU, zero-shot, two seeds each: with n = length accuracy is far below n fixed at every shorter length; the two coincide at the training length."}}
def mlm_score(model, length, **overrides):
    """MLM accuracy and loss on the same 32 validation batches for every model."""
    return minilm.evaluate(model, corpus, task="mlm", length=length, batch_size=32, n_batches=32,
                           **overrides)


short_lengths = [L_mlm // 8, L_mlm // 4, L_mlm // 2, L_mlm]
zero_shot = {(seed, label): {T: mlm_score(model, T, n=n)["accuracy"] for T in short_lengths}
             for seed, model in mlm_models.items()
             for label, n in (("n fixed", L_mlm), ("n = length", "length"))}

fig, ax = plt.subplots()
for (seed, label), acc in zero_shot.items():
    ax.plot(short_lengths, [100 * acc[T] for T in short_lengths], markers[label],
            color=styles[label], ms=sizes[label], alpha=1 if seed == P.seeds[0] else 0.5,
            label=label if seed == P.seeds[0] else None)
ax.set(xscale="log", xticks=short_lengths, xticklabels=short_lengths,
       xlabel="evaluation length T", ylabel="MLM accuracy (%)",
       title=f"Bidirectional relu² GAU trained at {L_mlm}, zero-shot (faint: seed {P.seeds[-1]})")
ax.minorticks_off()
ax.legend()
plt.show()

# %% [markdown]
# ### Fine-tuning at the short length
#
# Su's claim is about fine-tuning. We fine-tune each model at $T_{ft} = L_{mlm}/4 = 32$ with
# $n = L_{mlm}$ and with $n = T_{ft}$, for 50 and 300 steps.

# %%
T_ft = L_mlm // 4
budgets = P.finetune_steps
settings = {"n fixed": L_mlm, "n = length": T_ft}
scores = {(seed, label, 0): mlm_score(model, T_ft, n=n)
          for seed, model in mlm_models.items() for label, n in settings.items()}
tuned = minilm.pretrained_many({
    (seed, label, steps): (Config(**{**mlm_config.to_dict(), "n": n}),
                           Recipe(task="mlm", length=T_ft, steps=steps, batch_size=P.batch_size,
                                  lr=3e-4, warmup=10, seed=seed),
                           model)
    for seed, model in mlm_models.items() for label, n in settings.items()
    for steps in budgets},
    progress=False)
scores.update({key: mlm_score(model, T_ft) for key, (model, _) in tuned.items()})

print(f"MLM at T = {T_ft}: accuracy % (loss)        n fixed            n = length      "
      f"fixed - length (loss)")
for seed in P.seeds:
    for steps in (0, *budgets):
        a, b = scores[seed, "n fixed", steps], scores[seed, "n = length", steps]
        print(f"seed {seed}, {'zero-shot' if steps == 0 else f'{steps} steps':>10}:      "
              f"{100 * a['accuracy']:5.1f} ({a['loss']:.3f})     "
              f"{100 * b['accuracy']:5.1f} ({b['loss']:.3f})"
              f"     {a['loss'] - b['loss']:+.3f}")

# %% mystnb={"image": {"alt": "Two panels over the fine-tuning budget (zero-shot, a short and a long fine-tune) at T = L_mlm/4. Left: MLM accuracy with n fixed and with n = length, per seed. Right: bars of the loss gap in nats, n = length minus n fixed, per seed: large zero-shot, smaller after the short budget, near zero after the long one."}}
fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
stages = (0, *budgets)
names = ["zero-shot"] + [f"{s} steps" for s in budgets]
# colour (and marker) is the setting, as above; faint is the second seed, in both panels
for k, seed in enumerate(P.seeds):
    alpha = 1 if seed == P.seeds[0] else 0.5
    for label in settings:
        axes[0].plot(range(len(stages)), [100 * scores[seed, label, s]["accuracy"] for s in stages],
                     markers[label], color=styles[label], ms=sizes[label], alpha=alpha,
                     label=label if seed == P.seeds[0] else None)
    cost = [scores[seed, "n = length", s]["loss"] - scores[seed, "n fixed", s]["loss"]
            for s in stages]
    axes[1].bar([i + 0.4 * k - 0.2 for i in range(len(stages))], cost, width=0.4,
                color=styles["n = length"], alpha=alpha, label=f"seed {seed}")
axes[0].set(xticks=range(len(stages)), xticklabels=names, xlabel="fine-tuning budget",
            ylabel=f"MLM accuracy at T = {T_ft} (%)",
            title=f"Accuracy (faint: seed {P.seeds[-1]})")
axes[0].legend()
axes[1].axhline(0, color="k", lw=0.8)
axes[1].set(xticks=range(len(stages)), xticklabels=names, xlabel="fine-tuning budget",
            ylabel="loss, n = length minus n fixed (nats)", title="What n = length costs")
axes[1].legend()
plt.show()

# %% [markdown]
# ### What we measured
#
# Zero-shot, fixed $n$ is far ahead: 57.9 and 57.8% accuracy at $T = 32$ against 42.0 and 47.0%.
# After 50 fine-tuning steps it is still ahead, by 0.05-0.08 nats. After 300 steps the two tie.
#
# <details><summary>How we check it: margins and controls</summary>
#
# Asserted on every seed: zero-shot, fixed $n$ ahead by more than 5 accuracy points (measured
# 11-16; control: at $T = L_{mlm}$ both are one computation, gap 0); after 50 steps, ahead by more
# than 0.02 nats (measured 0.05-0.08); after 300 steps, $|\text{gap}| < 0.02$. Each budget fails
# the other's check.
#
# </details>
#
# <details><summary>Why the 300-step gap is a bound, not a sign</summary>
#
# After 300 steps fixed $n$ was still lower on both seeds, by 0.006-0.008 nats. A gap that small
# is below what two fine-tuning runs can resolve, so we assert the bound $|\text{gap}| < 0.02$,
# not its sign.
#
# </details>

# %%
small, large = budgets
for seed in P.seeds:
    fixed_ahead_by = {steps: scores[seed, "n = length", steps]["loss"]
                      - scores[seed, "n fixed", steps]["loss"]
                      for steps in stages}
    print(f"seed {seed}: n fixed lower in loss by",
          {k: round(v, 3) for k, v in fixed_ahead_by.items()})
    assert (scores[seed, "n fixed", 0]["accuracy"]
            > scores[seed, "n = length", 0]["accuracy"] + 0.05), seed
    assert fixed_ahead_by[small] > 0.02, seed   # fails for the larger budget (0.006-0.008)
    # a bound, not a sign; fails for the small budget
    assert abs(fixed_ahead_by[large]) < 0.02, seed

# %% [markdown]
# ## Our result next to Su's
#
# **We agree** that $n$ = length is a much worse start, which short fine-tuning does not erase.
# **We differ** at the larger budget: in 300 steps our tiny model re-learns the scale of its
# attention, and the two tie. At Su's scale (long pretraining, short fine-tuning, 512 down to
# short sentences) the gap may persist. Fixed $n$ wins when fine-tuning is short or absent.
#
# <details><summary>Our numbers next to Su's, row by row</summary>
#
# | | Su (GAU base, pretrained at 512) | here (tiny GAU MLM, 2 seeds) |
# |---|---|---|
# | zero-shot, shorter length | (not reported) | fixed $n$ ahead by 11-16 points at $L_{mlm}/4$ |
# | fine-tuned, 50 steps | fixed $n$ "significantly better" | fixed $n$ ahead by 0.05-0.08 nats |
# | fine-tuned, 300 steps | fixed $n$ "significantly better" | a tie (within 0.02 nats) |
# | mixed-length pretraining | fixes it | [lesson 4](04_three_fixes.ipynb) |
#
# </details>

# %% [markdown]
# ## Takeaways
#
# - In a causal model, fixed $n$ is right by construction: a short sequence's logits are exactly
#   the first $T$ of a long one's. $n$ = length makes every weight $L/T$ times too large.
# - In Su's bidirectional setting, fixed $n$ is far ahead zero-shot (57.9 and 57.8% MLM accuracy
#   at $T = 32$, against 42.0 and 47.0%) and still ahead after 50 fine-tuning steps.
# - After 300 steps the two tie: fixed $n$ wins when fine-tuning is short or absent; given more
#   steps, a tiny model re-learns the scale of its attention.
#
# ## Check your understanding
#
# 1. In the causal model, why is $n$ fixed at a shorter length exactly the training computation,
#    row by row? Would it still be in a bidirectional model?
#
#    <details><summary>Answer</summary>
#
#    Row $i$ of a causal model sees keys $0..i$ only, and with $n$ fixed divides by the same $L$ as
#    in training. A length-$T$ sequence is the first $T$ positions of a length-$L$ one, so each row
#    has the same keys, the same scores and the same divisor, and computes the same output (the cell
#    printed a maximum difference of 0.0). In a bidirectional model it would not be: every row sees
#    all $T$ keys of its sequence, so a shorter sequence removes terms from *every* row, and the row
#    sums are smaller than in training even with $n$ fixed. That is why Part B is needed.
#
#    </details>
#
# 2. With $n$ = length at $T = L/8$, by what factor is every attention weight larger than in
#    training? Where does that factor go?
#
#    <details><summary>Answer</summary>
#
#    Training divided by $L$; at $T = L/8$, $n$ = length divides by $L/8$, so every weight is
#    $L/T = 8$ times larger. The factor goes into $AV$: the attended value, and so $U \odot AV$ and
#    the update the block adds to the residual stream, are 8 times larger than anything the later
#    layers saw in training. In the stored run that cost 2.97 and 2.70 nats against 1.67.
#
#    </details>
#
# 3. Why is $n$ = row wrong for a model trained with $n$ fixed, even at the training length?
#
#    <details><summary>Answer</summary>
#
#    The model learned its weights while every row was divided by $L$. Dividing row $i$ by $i + 1$
#    makes it $L/(i+1)$ times larger than in training, up to 64 times for the first row, even when
#    $T = L$; only the last row is unchanged. So it is wrong at every length (2.08 and 1.97 nats at
#    $L$ against 1.46 and 1.47 in the stored run). It is right for a model *trained* with $n$ = row,
#    which learned its weights with that divisor.
#
#    </details>
#
# 4. After 300 fine-tuning steps the two choices tie here. Name two things about Su's setting
#    that could keep the gap open.
#
#    <details><summary>Answer</summary>
#
#    Any two of these (the lesson's closing section): Su's model was pretrained for a long time at
#    one length, so many layers are tuned to the size of $AV$ and take long to re-tune; downstream
#    fine-tuning runs are short compared with pretraining; the jump is bigger (from 512 to short
#    sentences, against our 4x); and the fine-tuning tasks differ from the pretraining task, so the
#    model has other things to learn in the same steps.
#
#    </details>
#
# **Exercise:** [exercise 2](../exercises/02_fixed_or_dynamic_n.ipynb) — implement the three
# divisors and
# the prefix check yourself.
#
# Next, [lesson 3](03_why_normaliser.ipynb): why the normaliser is $O(k)$, not $O(n)$.
