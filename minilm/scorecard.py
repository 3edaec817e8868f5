"""The scorecard: what lessons 9-13 measure past the training length L, for any models, as one
table (``card_table``) and one plot (``plots.plot_scorecard``).

    models = {("NoPE", 0): nope0, ("NoPE", 1): nope1, ("hybrid", 0): hyb0, ("hybrid", 1): hyb1}
    card = scorecard(models, corpus, L=32, measures=("text loss", "drift"))
    print(card_table(card))

Each measure at L, 2L, 4L, 8L and 16L (MULTIPLES of L):
  'text loss'       the causal loss on the validation text (measure.loss_by_length);
  'retrieval'       exact match on lesson 9's controlled task: a key in random letters;
  'text retrieval'  exact match on lesson 11's task: a key in text;
  'drift'           lesson 13's drift, the largest over layers of a layer's mean write into the
                    residual stream past half the longest length over its mean at L/2..L (at 16L:
                    8L..16L over L/2..L). Read at the longest length only.
A name with one seed gets its value; with two or more, the mean and its 90% t interval
(measure.seed_interval). A setting (``logn_base=L``, ``position_rule=(c, L)``, ...) applies to
every model of the card.
"""

from __future__ import annotations

from contextlib import contextmanager

from .data import Corpus
from .measure import eval_batches, layer_writes, loss_by_length, retrieval_accuracy, seed_interval
from .model import LM
from .validation import is_sequence, one_of, positive_int

MULTIPLES = (1, 2, 4, 8, 16)
MEASURES = ("text loss", "retrieval", "text retrieval", "drift")
DEPTHS = (0.0, 0.25, 0.5, 0.75, 1.0)   # where the key sits in a retrieval prompt, as lesson 9
FILLER = {"retrieval": "random", "text retrieval": "text"}


def drift(model, corpus: Corpus, L: int, multiple: int = 16, *, sequences: int = 16,
          **setting) -> float:
    """The largest over layers of  mean_t write_l(t) over multiple L / 2 < t <= multiple L
    divided by  mean_t write_l(t) over L / 2 < t <= L  (measure.layer_writes)."""
    x = eval_batches(corpus, task="causal", length=multiple * L, batch_size=sequences,
                     n_batches=1, device=model.device)[0][0]
    write = layer_writes(model, x, **setting)                       # (n_layer, T)
    return (write[:, multiple * L // 2:].mean(1) / write[:, L // 2:L].mean(1)).max().item()


def score(model, corpus: Corpus, L: int, measures=MEASURES, *, trials: int = 100,
          **setting) -> dict:
    """{measure: {multiple of L: value}} of one model ('drift': at the longest multiple only)."""
    lengths = [m * L for m in MULTIPLES]
    card = {}
    if "text loss" in measures:
        losses = loss_by_length(model, corpus, lengths, **setting)
        card["text loss"] = {m: losses[m * L] for m in MULTIPLES}
    for measure in ("retrieval", "text retrieval"):
        if measure in measures:
            exact = retrieval_accuracy(model, corpus, lengths, DEPTHS, trials=trials,
                                       filler=FILLER[measure], **setting).mean(1)
            card[measure] = dict(zip(MULTIPLES, exact.tolist()))
    if "drift" in measures:
        card["drift"] = {MULTIPLES[-1]: drift(model, corpus, L, MULTIPLES[-1], **setting)}
    return card


def summary(values: list) -> dict:
    """{'mean', 'low', 'high', 'seeds'}: the 90% t interval over seeds, None with one seed."""
    if len(values) == 1:
        return {"mean": values[0], "low": None, "high": None, "seeds": values}
    mean, low, high = seed_interval(values)
    return {"mean": mean, "low": low, "high": high, "seeds": values}


def scorecard(models: dict, corpus: Corpus, L: int, measures=MEASURES, *, trials: int = 100,
              **setting) -> dict:
    """{name: {measure: {multiple of L: summary}}} of ``models``, {(name, seed): model}, the
    seeds of a name summarised together (summary), names in the order given."""
    if not isinstance(models, dict) or not models or not all(
            isinstance(key, tuple) and len(key) == 2 and isinstance(key[0], str) for key in models):
        raise ValueError("models must be a non-empty dict {(name, seed): model}, e.g. "
                         f"{{('NoPE', 0): model}}; got {models!r:.200}")
    positive_int("L", L)
    if not is_sequence(measures) or not measures:
        raise ValueError(f"measures must be a non-empty list of {MEASURES}; got {measures!r}")
    for measure in measures:
        one_of("measure", measure, MEASURES)
    scores = {key: score(model, corpus, L, measures, trials=trials, **setting)
              for key, model in models.items()}
    card = {}
    for name in dict.fromkeys(name for name, _ in models):
        seeds = [scores[key] for key in models if key[0] == name]
        card[name] = {measure: {m: summary([s[measure][m] for s in seeds])
                                for m in seeds[0][measure]} for measure in measures}
    return card


def card_table(card: dict) -> str:
    """The card as text: a row per name and measure, a column per multiple of L, each cell
    "mean [low, high]" (or the one seed's value)."""
    def cell(s):
        interval = f" [{s['low']:.2f}, {s['high']:.2f}]" if s["low"] is not None else ""
        return f"{s['mean']:.2f}{interval}"
    width = max(len(f"{name}, {measure}") for name, row in card.items() for measure in row) + 2
    lines = [(" " * width + "".join(f"{f'{m}L':<20}" for m in MULTIPLES)).rstrip()]
    for name, row in card.items():
        for measure, by_multiple in row.items():
            cells = "".join(f"{cell(by_multiple[m]) if m in by_multiple else '':<20}"
                            for m in MULTIPLES)
            lines.append(f"{f'{name}, {measure}':<{width}}" + cells.rstrip())
    return "\n".join(lines)



@contextmanager
def designed(models, logit_map):
    """Within the block, every layer of ``models`` (an LM, or a dict of them as scorecard takes)
    turns its logits S_ij into a_ij S_ij + b_ij, (a, b) = logit_map(T, device, dtype), each
    (T, T): a design of one's own, run on trained weights (exercise 15)."""
    if not callable(logit_map):
        raise ValueError(f"logit_map must be a function (T, device, dtype) -> (a, b); got {logit_map!r:.80}")
    chosen = list(models.values()) if isinstance(models, dict) else [models]
    if not chosen or not all(isinstance(model, LM) for model in chosen):
        raise ValueError("models must be an LM or a dict {(name, seed): LM}")
    if any(model.config.scale_invariant is not None for model in chosen):
        raise ValueError("a scale-invariant model maps its logits already: logit_map would replace that map")
    blocks = list({id(block): block for model in chosen for block in model.blocks}.values())
    before = [block.__dict__.get("logit_map") for block in blocks]
    for block in blocks:   # as a plain attribute, even where logit_map is an nn.Module
        block.__dict__["logit_map"] = logit_map
    try:
        yield
    finally:
        for block, previous in zip(blocks, before):
            if previous is None:
                del block.__dict__["logit_map"]   # back to the class's None
            else:
                block.__dict__["logit_map"] = previous
