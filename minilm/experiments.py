"""The models and experiments several lessons share, built in one place from a profile's sizes
(``minilm.profiles``): the configs and recipes stay identical from lesson to lesson, so a later
lesson finds an earlier lesson's models in the cache instead of training them again, and two
lessons that run the same experiment print the same numbers.

One call per shared set of models: ``nope_rope_models`` (lesson 6's text-trained Transformers,
read again by lessons 7, 8, 11, 12 and 13), ``retrieval_models`` (lesson 11's, read again by lesson
12) and ``controlled_models`` (lesson 9's, read again by lessons 10 and 13). Each takes the position
encodings it trains: "nope", "rope", or "hybrid" (lesson 13: windowed RoPE layers interleaved with
global NoPE layers, ``layer_setting``).
"""

from __future__ import annotations

from dataclasses import replace

import torch

from .cache import pretrained, pretrained_many
from .data import Corpus
from .measure import retrieval_accuracy
from .model import LM, Config
from .profiles import Profile
from .scaling import at_lambda, train_head_scales
from .training import Recipe
from .validation import finite_numbers, integer, is_sequence, one_of, positive_int

POSITIONS = ("nope", "rope")             # what the shared sets train unless asked for more
ALL_POSITIONS = POSITIONS + ("hybrid",)


def layer_setting(P: Profile, pos: str, n_layer: int, window: int | None = None, nope_every: int = 2) -> dict:
    """The Config fields of a position encoding: pos="nope" or "rope" on every layer, or the
    "hybrid" of lesson 13: every ``nope_every``-th layer global NoPE, the others RoPE with a
    sliding window of ``window`` keys (P.hybrid_window by default). nope_every=2 interleaves them,
    ("rope", "nope", "rope", "nope"); 4 is Llama 4's layout, and with 4 layers HWFA's (Su):
    ("rope", "rope", "rope", "nope")."""
    one_of("position encoding", pos, ALL_POSITIONS)
    if pos != "hybrid":
        if window is not None or nope_every != 2:
            raise ValueError(f"window and nope_every shape the hybrid; pos={pos!r} takes neither")
        return dict(pos=pos)
    integer("nope_every", nope_every, at_least=1)
    if n_layer % nope_every:
        raise ValueError(f"nope_every={nope_every} must divide n_layer={n_layer}: the last layer is global NoPE")
    layout = (("rope",) * (nope_every - 1) + ("nope",)) * (n_layer // nope_every)
    return dict(pos=layout, window=P.hybrid_window if window is None else window)


def _checked(P: Profile, positions=POSITIONS) -> None:
    """What every set of shared models takes: a Profile, and a list of position encodings."""
    if not isinstance(P, Profile):
        raise ValueError(f"P must be a minilm Profile (minilm.profile()); got {type(P).__name__}")
    if not is_sequence(positions) or len(positions) == 0:  # a str is none: "nope" is not ("nope",)
        raise ValueError(f"positions must be a non-empty list of position encodings, e.g. ('nope',), from "
                         f"{ALL_POSITIONS}; got {positions!r}")
    for pos in positions:
        one_of("position encoding in positions", pos, ALL_POSITIONS)


def causal_gau(P: Profile, vocab_size: int, **extra) -> Config:
    """Lessons 1-2: the causal relu^2 GAU LM, n fixed at the training length; two GAU layers
    per Transformer layer (about the same parameter count)."""
    settings = dict(block="gau", n_head=1, d_model=P.d_model, n_layer=2 * P.n_layer, d_k=P.d_k,
                    norm="relu2", n=P.train_len)
    return Config(vocab_size=vocab_size, **{**settings, **extra})


def causal_transformer(P: Profile, vocab_size: int, **extra) -> Config:
    """Lessons 1, 3 and 5: the causal softmax Transformer LM with RoPE."""
    return Config(vocab_size=vocab_size, block="transformer", n_head=P.n_head, d_model=P.d_model,
                  n_layer=P.n_layer, **extra)


def causal_recipe(P: Profile, seed: int) -> Recipe:
    """Pretraining of the causal models of lessons 1-5, at P.train_len."""
    return Recipe(length=P.train_len, steps=P.steps, batch_size=P.batch_size, seed=seed)


def masked_lm_gau(P: Profile, vocab_size: int, norm: str, n=None, **extra) -> Config:
    """Lessons 2-4: the bidirectional GAU masked LM, trained at P.mlm_len."""
    return Config(vocab_size=vocab_size, block="gau", n_head=1, d_model=P.d_model, n_layer=P.n_layer,
                  d_k=P.d_k, norm=norm, n=n, causal=False, **extra)


def masked_lm_recipe(P: Profile, seed: int) -> Recipe:
    """Masked-LM pretraining at P.mlm_len (lessons 2-4)."""
    return Recipe(task="mlm", length=P.mlm_len, steps=P.mlm_steps, batch_size=P.batch_size, seed=seed)


def nope_rope_transformer(P: Profile, vocab_size: int, pos: str, **extra) -> Config:
    """Lessons 6-8 and 13: the causal Transformer of the NoPE / RoPE comparison (pos='nope',
    'rope' or 'hybrid', layer_setting)."""
    return Config(vocab_size=vocab_size, block="transformer", n_head=P.n_head, d_model=P.d_model,
                  n_layer=P.nope_rope_layers, **layer_setting(P, pos, P.nope_rope_layers), **extra)


def nope_rope_recipe(P: Profile, seed: int) -> Recipe:
    """Pretraining of the NoPE / RoPE comparison: P.nope_rope_steps at P.nope_rope_len."""
    return Recipe(length=P.nope_rope_len, steps=P.nope_rope_steps, batch_size=P.batch_size, seed=seed)


def retrieval_recipe(P: Profile, seed: int) -> Recipe:
    """Lesson 11: lesson 6's models continue pretraining at P.nope_rope_len on a mixture, three
    batches in four of retrieval windows (answer-only loss, data.retrieval_batch), one of text."""
    return Recipe(length=P.nope_rope_len, steps=P.retrieval_steps, batch_size=P.batch_size, lr=3e-3, warmup=20,
                  seed=seed, retrieval=0.75)


def nope_rope_models(P: Profile, corpus: Corpus, *, positions=POSITIONS, progress: bool = True) -> dict:
    """Lesson 6's causal Transformers, trained on text at P.nope_rope_len (lessons 6-8, 11 and 12 read
    them): {(pos, seed): model} for each position encoding of ``positions`` and each seed of P."""
    _checked(P, positions)
    trained = pretrained_many({(pos, seed): (nope_rope_transformer(P, corpus.tokenizer.vocab_size, pos),
                                             nope_rope_recipe(P, seed))
                               for pos in positions for seed in P.seeds}, corpus=corpus, progress=progress)
    return {key: model for key, (model, _) in trained.items()}


def retrieval_models(P: Profile, corpus: Corpus, *, positions=POSITIONS, progress: bool = True) -> dict:
    """Lesson 11's models: nope_rope_models after retrieval_recipe (lessons 11-12 read them):
    {(pos, seed): model}."""
    _checked(P, positions)
    text_models = nope_rope_models(P, corpus, positions=positions, progress=progress)
    trained = pretrained_many({(pos, seed): (nope_rope_transformer(P, corpus.tokenizer.vocab_size, pos),
                                             retrieval_recipe(P, seed), base)
                               for (pos, seed), base in text_models.items()}, corpus=corpus, progress=progress)
    return {key: model for key, (model, _) in trained.items()}


def controlled_transformer(P: Profile, vocab_size: int, pos: str, **hybrid) -> Config:
    """Lessons 9-10 and 13: the causal Transformer of the controlled retrieval task (pos='nope',
    'rope' or 'hybrid'; ``hybrid``: its window and nope_every, layer_setting)."""
    return Config(vocab_size=vocab_size, block="transformer", n_head=P.n_head, d_model=P.controlled_d_model,
                  n_layer=P.controlled_layers, **layer_setting(P, pos, P.controlled_layers, **hybrid))


def controlled_recipe(P: Profile, seed: int) -> Recipe:
    """Lessons 9-10: retrieval windows only, filled with random letters (data.RANDOM_FILLER), at
    P.controlled_len: the needle is the only structure a prompt has, the answer the only loss."""
    return Recipe(length=P.controlled_len, steps=P.controlled_steps, batch_size=P.batch_size, lr=3e-3, warmup=50,
                  seed=seed, retrieval=1.0, filler="random")


def controlled_models(P: Profile, corpus: Corpus, *, positions=POSITIONS, seeds=None, steps=None,
                      progress: bool = True, **hybrid) -> dict:
    """Lesson 9's models, trained from scratch on controlled_recipe (lessons 10 and 13 read them
    again): {(pos, seed): model} for each seed of ``seeds`` (P.controlled_seeds by default),
    trained ``steps`` steps (P.controlled_steps by default); ``hybrid``: the hybrid's window and
    nope_every, if not layer_setting's defaults."""
    _checked(P, positions)
    seeds = P.controlled_seeds if seeds is None else seeds
    if not is_sequence(seeds) or len(seeds) == 0:
        raise ValueError(f"seeds must be a non-empty list of int seeds; got {seeds!r}")
    for seed in seeds:
        integer("each of seeds", seed)
    if steps is not None:
        positive_int("steps", steps)
    trained = pretrained_many({(pos, seed): (controlled_transformer(P, corpus.tokenizer.vocab_size, pos,
                                                                    **(hybrid if pos == "hybrid" else {})),
                                             replace(controlled_recipe(P, seed),
                                                     steps=steps or P.controlled_steps))
                               for pos in positions for seed in seeds}, corpus=corpus, progress=progress)
    return {key: model for key, (model, _) in trained.items()}


MIXTURE = ("retrieval", "filler")  # what scale_heads passes on: the rest of its setting is fixed


def scale_heads(model: LM, corpus: Corpus, seed: int, *, length: int, start: float, clamp: bool = True,
                steps: int = 200, **mixture) -> LM:
    """Head-based scaling as in the paper's code, the one setting lessons 9-12 share: only the
    per-head multipliers of ``model`` train, at ``length`` on the model's own data ``mixture``
    (retrieval fraction and filler, as train_head_scales takes them), batch 8, learning rate
    0.05, from ``start``, clamped at 1 if ``clamp``, on batches of seed 100 + ``seed``."""
    integer("seed", seed)
    other = sorted(set(mixture) - set(MIXTURE))
    if other:
        raise ValueError(f"scale_heads takes the data mixture ({', '.join(MIXTURE)}) and fixes the rest of the "
                         f"lessons' setting (batch 8, lr 0.05, seed 100 + seed); got {', '.join(other)}: call "
                         "minilm.train_head_scales to choose them")
    train_head_scales(model, corpus, length=length, start=start, clamp=clamp, steps=steps, batch_size=8,
                      seed=100 + seed, progress=False, **mixture)
    return model


def controlled_head_scaled(P: Profile, corpus: Corpus, seed: int, *, start: float, clamp: bool = True,
                           steps: int = 200) -> LM:
    """Lessons 9-10: a fresh copy of lesson 9's NoPE model, head-scaled (scale_heads) at 4L on
    its own task."""
    config = controlled_transformer(P, corpus.tokenizer.vocab_size, "nope")
    model = pretrained(config, controlled_recipe(P, seed), corpus=corpus, progress=False)[0]
    return scale_heads(model, corpus, seed, length=4 * P.controlled_len, start=start, clamp=clamp, steps=steps,
                       retrieval=1.0, filler="random")


# Lessons 11 and 12 share the retrieval-trained NoPE model's multiplier search and its head
# scaling: the same calls give the same numbers in both.

RETRIEVAL_LAMBDAS = (1.0, 1.2, 1.4, 1.6, 1.8, 2.0, 2.4)
RETRIEVAL_SEARCH = dict(depths=[0.0, 0.5, 1.0], trials=50, seed=2024)   # not the prompts the lessons report


def best_uniform_for_retrieval(model, corpus: Corpus, length: int, *, filler: str = "text", heads=None,
                               grid=RETRIEVAL_LAMBDAS) -> float:
    """The lambda of ``grid`` (RETRIEVAL_LAMBDAS by default) with the best exact match at ``length``
    on the search prompts (RETRIEVAL_SEARCH: 50 per depth, another seed than the reported ones;
    their filler of ``filler``); the smallest lambda on a tie. ``heads``: a (n_layer, n_head) bool
    mask, lambda on those heads and 1 on the others; None: on every head."""
    positive_int("length", length)
    finite_numbers("grid", grid, at_least=0)
    scores = {}
    for lam in grid:
        with at_lambda(model, lam if heads is None else torch.where(heads, lam, 1.0)):
            scores[lam] = retrieval_accuracy(model, corpus, [length], RETRIEVAL_SEARCH["depths"],
                                             trials=RETRIEVAL_SEARCH["trials"], seed=RETRIEVAL_SEARCH["seed"],
                                             filler=filler).mean().item()
    return max(scores, key=scores.get)


def retrieval_head_scaled(P: Profile, corpus: Corpus, seed: int, *, start: float) -> LM:
    """Lessons 11-12: a fresh copy of the retrieval-trained NoPE model (lesson 6's, then
    retrieval_recipe), head-scaled (scale_heads) at 4L on its own mixture."""
    config = nope_rope_transformer(P, corpus.tokenizer.vocab_size, "nope")
    text_model = pretrained(config, nope_rope_recipe(P, seed), corpus=corpus, progress=False)[0]
    model = pretrained(config, retrieval_recipe(P, seed), corpus=corpus, init=text_model, progress=False)[0]
    return scale_heads(model, corpus, seed, length=4 * P.nope_rope_len, start=start, retrieval=0.75)


# Lesson 15: what the field shipped since, each design one change to the NoPE model of lesson 9
# (the controlled task, five seeds) or lesson 6 (text, two seeds), or to its RoPE model (DroPE).

SCALE_INVARIANT_TAU = 10.0  # Anson et al.'s best tau (their appendix H, trained at 4096)
DESIGNS = {"sink": dict(sink=True), "gate": dict(gate=True),
           "scale-invariant": dict(scale_invariant=SCALE_INVARIANT_TAU)}
TASKS = ("controlled", "text")


def _task_config(P: Profile, corpus: Corpus, task: str, pos: str) -> Config:
    one_of("task", task, TASKS)
    vocab_size = corpus.tokenizer.vocab_size
    if task == "controlled":
        return controlled_transformer(P, vocab_size, pos)
    return nope_rope_transformer(P, vocab_size, pos)


def design_models(P: Profile, corpus: Corpus, *, task: str = "controlled", designs=tuple(DESIGNS),
                  progress: bool = True) -> dict:
    """Lesson 15: {(design, seed): model}, the NoPE model of ``task`` ('controlled': lesson 9's,
    on P.controlled_seeds; 'text': lesson 6's, on P.seeds) with one design of DESIGNS, trained by
    the same recipe and seed: the design is the only difference from NoPE."""
    _checked(P)
    if not is_sequence(designs) or len(designs) == 0:
        raise ValueError(f"designs must be a non-empty list from {tuple(DESIGNS)}; got {designs!r}")
    for design in designs:
        one_of("design", design, tuple(DESIGNS))
    config = _task_config(P, corpus, task, "nope")
    seeds, recipe = ((P.controlled_seeds, controlled_recipe) if task == "controlled"
                     else (P.seeds, nope_rope_recipe))
    trained = pretrained_many({(design, seed): (replace(config, **DESIGNS[design]), recipe(P, seed))
                               for design in designs for seed in seeds}, corpus=corpus, progress=progress)
    return {key: model for key, (model, _) in trained.items()}


def drop_rope(model: LM) -> LM:
    """DroPE's first step (Gelberg et al. 2025): the same weights, RoPE dropped from every layer:
    an LM of the NoPE config, on the model's device, a copy."""
    c = model.config
    if c.pos != "rope" or c.window is not None:
        raise ValueError(f"drop_rope takes a model with RoPE on every layer and no window; got pos={c.pos!r}, "
                         f"window={c.window!r}")
    nope = LM(replace(c, pos="nope", rope_scaling=None)).to(model.device)
    nope.load_state_dict(model.state_dict())
    nope.vocabulary = model.vocabulary
    return nope


def drope_models(P: Profile, corpus: Corpus, *, steps: int, task: str = "controlled",
                 progress: bool = True) -> dict:
    """Lesson 15: DroPE, {('DroPE', seed): model}: the RoPE model of ``task`` (design_models)
    with RoPE dropped (drop_rope), then recalibrated ``steps`` steps at its training length L on
    its own task's data (batches of seed 100 + seed, not the pretraining batches), warmup a
    tenth of them."""
    positive_int("steps", steps)
    rope = (controlled_models(P, corpus, positions=("rope",), progress=progress) if task == "controlled"
            else nope_rope_models(P, corpus, positions=("rope",), progress=progress))
    recipe = controlled_recipe if task == "controlled" else nope_rope_recipe
    config = _task_config(P, corpus, task, "nope")
    jobs = {("DroPE", seed): (config, replace(recipe(P, seed), steps=steps, warmup=max(steps // 10, 1),
                                               seed=100 + seed), drop_rope(model))
            for (_, seed), model in rope.items()}
    trained = pretrained_many(jobs, corpus=corpus, progress=progress)
    return {key: model for key, (model, _) in trained.items()}
