"""Argument checks shared by the library, so every bad value fails where it is given.

Each function returns nothing and raises ``ValueError("<name> must be ...; got <value!r>")``
(``one_of``: "unknown <name> <value!r>; allowed: ..."). Never a silent fallback: a value
that is not what the caller must have meant is an error where it is given, not NaN later.
This module imports nothing from minilm (torch only): any module may use it.

Numbers are accepted as the ``numbers`` module sees them, so numpy's count too (np.int64 is an
int, np.float32 a real number); bool never is, though Python calls it an int. A list of values may
be a list, a tuple, a range or a 1-D array (``is_sequence``).
"""

from __future__ import annotations

import hashlib
import math
import numbers
from dataclasses import fields

import torch


def _is_int(value) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _is_real(value) -> bool:
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def plain(value):
    """A numpy number as the Python number it holds (np.int64(16) -> 16, np.float32(0.5) -> 0.5);
    anything else as it is. For what a dataclass stores: JSON (the cache key) cannot write numpy
    numbers, and a Config of np.int64 sizes should be the Config of ints it equals."""
    if isinstance(value, numbers.Number) and not isinstance(value, (bool, int, float)) and hasattr(value, "item"):
        return value.item()
    return value


def plain_fields(instance) -> None:
    """Replace the numpy numbers in the fields of a (frozen) dataclass by the Python numbers they
    hold (``plain``), before its checks: np.int64(16) is then stored, compared and keyed as 16."""
    for field in fields(instance):
        object.__setattr__(instance, field.name, plain(getattr(instance, field.name)))


def dtype_name(dtype) -> str:
    """A torch dtype as messages name it: 'float32' for torch.float32."""
    return str(dtype).removeprefix("torch.")


def is_sequence(values) -> bool:
    """A list, tuple, range or 1-D array (numpy or torch): what may stand for a list of values."""
    return isinstance(values, (list, tuple, range)) or getattr(values, "ndim", None) == 1


def integer(name: str, value, *, at_least: int | None = None) -> None:
    """An int (not a bool: True is an int to Python, never a length to us), >= at_least if given."""
    if not _is_int(value) or (at_least is not None and value < at_least):
        bound = "an int" if at_least is None else f"an int >= {at_least}"
        raise ValueError(f"{name} must be {bound}; got {value!r}")


def positive_int(name: str, value) -> None:
    """An int >= 1 (lengths, sizes, counts)."""
    if not _is_int(value) or value < 1:
        raise ValueError(f"{name} must be a positive int; got {value!r}")


def positive_ints(name: str, values) -> None:
    """A non-empty list of positive ints (the lengths of mixed-length training): see is_sequence."""
    if not is_sequence(values) or len(values) == 0:
        raise ValueError(f"{name} must be a non-empty list of positive ints; got {values!r}")
    for value in values:
        positive_int(f"each of {name}", value)


def finite_number(name: str, value, *, above: float | None = None, at_least: float | None = None,
                  at_most: float | None = None, why: str = "") -> None:
    """A finite int or float (not a bool, not inf or nan) within the bounds given.

    ``why`` is added to the message in parentheses, e.g. "the training length L"."""
    ok = (_is_real(value) and math.isfinite(value)
          and (above is None or value > above) and (at_least is None or value >= at_least)
          and (at_most is None or value <= at_most))
    if ok:
        return
    what = "a finite number" + _bounds(above, at_least, at_most)
    raise ValueError(f"{name} must be {what}{f' ({why})' if why else ''}; got {value!r}")


def storable_number(name: str, value, dtype, *, where: str, **bounds) -> None:
    """finite_number (with its bounds and ``why``), and no larger in size than a tensor of the
    floating ``dtype`` holds (``where``: which tensor, e.g. "model.multiplier"): 1e39 is a finite
    float, but a float32 cannot hold it, and torch says "value cannot be converted to type float
    without overflow"."""
    finite_number(name, value, **bounds)
    largest = torch.finfo(dtype).max
    if abs(value) > largest:
        raise ValueError(f"{name} must be at most {largest:.3g} in size, what {where} ({dtype_name(dtype)}) can hold; "
                         f"got {value!r}")


def _bounds(above, at_least, at_most) -> str:
    """' in [0, 1]', ' > 0', ' >= 0 and <= 1' or ''."""
    if at_least is not None and at_most is not None:
        return f" in [{at_least}, {at_most}]"
    bounds = [f"{sign} {bound}" for sign, bound in ((">", above), (">=", at_least), ("<=", at_most))
              if bound is not None]
    return " " + " and ".join(bounds) if bounds else ""


def finite_numbers(name: str, values, *, above: float | None = None, at_least: float | None = None,
                   at_most: float | None = None) -> None:
    """A non-empty list of finite numbers within the bounds given (depths, ratios): see is_sequence."""
    if not is_sequence(values) or len(values) == 0:
        what = "a non-empty list of finite numbers" + _bounds(above, at_least, at_most)
        raise ValueError(f"{name} must be {what}; got {values!r}")
    for value in values:
        finite_number(f"each of {name}", value, above=above, at_least=at_least, at_most=at_most)


def one_of(name: str, value, allowed) -> None:
    """value is one of the strings ``allowed``: 'unknown <name> <value>; allowed: ...'."""
    if not (isinstance(value, str) and value in allowed):
        raise ValueError(f"unknown {name} {value!r}; allowed: {', '.join(map(repr, allowed))}")


def boolean(name: str, value) -> None:
    """True or False exactly: 'yes', 1 or None are refused, since each reads as a different intent."""
    if not isinstance(value, bool):
        raise ValueError(f"{name} must be True or False; got {value!r}")


# ----------------------------------------------------------------------------
# The model's settings and inputs (model.py calls each of these once, at its boundary)
# ----------------------------------------------------------------------------

NORMS = ("softmax", "relu2", "relu2_norm")
N_MODES = ("length", "row")  # besides a positive int (a fixed n)
BLOCKS = ("gau", "transformer")
POSITIONS = ("rope", "nope")
ROPE_SCALINGS = ("pi", "ntk", "yarn")
RETURNS = ("weights", "scores")  # the maps attend() and LM.forward return on request
EVAL_SETTINGS = ("n", "logn_base", "position_rule", "rope_scaling")  # what model(idx, ...) may evaluate under
ROPE_SCALING_KEYS = {"kind", "factor", "train_len"}


def attention_setting(norm, n, logn_base) -> None:
    """(norm, n, logn_base) is a valid attention setting."""
    one_of("attention norm", norm, NORMS)
    if norm == "relu2":
        if not (isinstance(n, str) and n in N_MODES) and not (_is_int(n) and n >= 1):
            raise ValueError(f"norm='relu2' needs n: a positive int (fixed n), 'length' or 'row'; got n={n!r}")
    elif n is not None:
        raise ValueError(f"n={n!r} only applies to norm='relu2'; norm={norm!r} takes no n")
    if logn_base is not None:
        # inf would make every log-n factor 0: uniform attention, never what was meant
        finite_number("logn_base", logn_base, above=1, why="the training length L")


def rope_scaling(scaling) -> None:
    """The fields of a RopeScaling."""
    one_of("RoPE scaling", scaling.kind, ROPE_SCALINGS)
    # inf would turn the frequencies into 0 or nan
    finite_number("RoPE scaling factor", scaling.factor, at_least=1, why="target / training length")
    positive_int("RoPE scaling train_len", scaling.train_len)


def rope_scaling_dict(values: dict) -> None:
    """A RopeScaling as Config.to_dict() writes it."""
    if set(values) != ROPE_SCALING_KEYS:
        raise ValueError("Config.rope_scaling as a dict needs exactly the keys 'kind', 'factor', "
                         f"'train_len'; got {values!r}")


def rope_args(dim, base, scaling, scaling_class) -> None:
    """RoPE of query width ``dim`` at ``base``, scaled by ``scaling`` (None or a ``scaling_class``)."""
    positive_int("RoPE dim", dim)
    if dim % 2:
        raise ValueError(f"RoPE rotates pairs of dimensions; the query width {dim} must be even")
    finite_number("rope_base", base, above=1, why="theta_i = base^(-2i/dim) must fall with i")
    if scaling is not None and not isinstance(scaling, scaling_class):
        raise ValueError(f"rope_scaling must be None or a RopeScaling(kind, factor, train_len); got {scaling!r}")
    if scaling is not None and scaling.kind == "ntk" and dim == 2:
        # base * s^(dim / (dim - 2)): one frequency pair leaves nothing to rescale but the fastest
        raise ValueError("NTK-aware RoPE scaling needs a query width > 2 (it divides by dim - 2); got 2")


def rope_shapes(x, angles) -> None:
    """apply_rope's angles are (T, dim/2) for x of shape (..., T, dim)."""
    if angles.shape != (x.shape[-2], x.shape[-1] // 2):
        raise ValueError(f"angles must be (T, dim/2) = {(x.shape[-2], x.shape[-1] // 2)} for x of shape "
                         f"{tuple(x.shape)}; got {tuple(angles.shape)}")


def config(c, scaling_class) -> None:
    """Every field of a model Config, and the combinations the model would silently ignore."""
    for name in ("vocab_size", "d_model", "n_layer", "n_head", "d_k", "expansion", "max_len"):
        positive_int(f"Config.{name}", getattr(c, name))
    one_of("block", c.block, BLOCKS)
    layer_positions(c.pos, c.n_layer)
    boolean("Config.causal", c.causal)
    boolean("Config.learn_multiplier", c.learn_multiplier)
    boolean("Config.sink", c.sink)
    boolean("Config.gate", c.gate)
    if c.sink and c.norm != "softmax":
        raise ValueError(f"Config.sink=True adds a column to a softmax; it needs norm='softmax' (got "
                         f"norm={c.norm!r}, whose rows need not sum to 1 already)")
    if c.scale_invariant is not None:
        finite_number("Config.scale_invariant", c.scale_invariant, above=0, why="tau, in tokens")
        if not c.causal:
            raise ValueError(f"Config.scale_invariant={c.scale_invariant} maps a logit by its distance i - j "
                             "back from the query: it needs causal=True")
    if c.block == "gau" and c.n_head != 1:
        raise ValueError(f"a GAU has a single head; set n_head=1 (got n_head={c.n_head})")
    if c.block == "transformer" and c.d_model % c.n_head:
        raise ValueError(f"d_model={c.d_model} is not divisible by n_head={c.n_head}")
    uses_rope = "rope" in ((c.pos,) if isinstance(c.pos, str) else c.pos)
    # A field the chosen block or position does not use must keep its default: set to anything
    # else it would do nothing, silently (and still change the cache key).
    defaults = {f.name: f.default for f in fields(c)}
    for name, setting in unused_fields(c).items():
        if getattr(c, name) != defaults[name]:
            raise ValueError(f"Config.{name}={getattr(c, name)!r} has no effect with {setting}; "
                             f"leave it at its default {defaults[name]!r}")
    attention_setting(c.norm, c.n, c.logn_base)
    if c.position_rule is not None:
        position_rule_pair(c.position_rule)
    sliding_window(c.window, c.causal)
    if c.rope_scaling is not None and not uses_rope:
        raise ValueError(f"rope_scaling={c.rope_scaling} needs pos='rope' (or a RoPE layer); got pos={c.pos!r}")
    if c.rope_scaling is not None and c.window is not None:
        # a window of w keys never shows a RoPE layer a distance of w or more: nothing to rescale
        raise ValueError(f"rope_scaling={c.rope_scaling} has no effect on RoPE layers with window={c.window}; "
                         "leave rope_scaling=None")
    if uses_rope:
        rope_args(c.head_dim, c.rope_base, c.rope_scaling, scaling_class)


def unused_fields(c) -> dict:
    """The fields of Config ``c`` its block and position encoding never read -> the setting that
    ignores them: they must keep their defaults, and a printed Config leaves them out."""
    unused = {}
    if c.block == "transformer":
        unused.update(d_k="block='transformer'", expansion="block='transformer'")
    else:
        unused.update(gate="block='gau' (its output is gated by u already)")
    if all(pos == "nope" for pos, _ in c.layers):
        unused.update(rope_base=f"pos={c.pos!r}", window=f"pos={c.pos!r} (a window applies to the RoPE layers)")
    return unused


def layer_positions(pos, n_layer) -> None:
    """Config.pos: 'rope' or 'nope' for every layer, or a tuple of one of them per layer."""
    if isinstance(pos, str):
        one_of("pos", pos, POSITIONS)
        return
    if not isinstance(pos, tuple) or len(pos) != n_layer:
        raise ValueError(f"Config.pos must be 'rope', 'nope' or a tuple of one of them per layer ({n_layer} "
                         f"layers), e.g. ('rope',) * {n_layer - 1} + ('nope',); got {pos!r}")
    for one in pos:
        one_of("pos of a layer", one, POSITIONS)


def sliding_window(window, causal) -> None:
    """A sliding window: None (every key), or w >= 1 keys, in a causal model (a window looks back)."""
    if window is None:
        return
    positive_int("Config.window", window)
    if not causal:
        raise ValueError(f"Config.window={window} looks back from each query: it needs causal=True")


def config_dict(values, known) -> None:
    """What Config.from_dict reads: a dict of the ``known`` field names, vocab_size among them."""
    if not isinstance(values, dict):
        raise ValueError(f"Config.from_dict needs a dict (as to_dict() returns); got {type(values).__name__}")
    unknown = [key for key in values if key not in known]
    if unknown:
        raise ValueError(f"Config.from_dict: unknown key(s) {', '.join(map(repr, unknown))}; "
                         f"allowed: {', '.join(known)}")
    if "vocab_size" not in values:
        raise ValueError("Config.from_dict: the key 'vocab_size' is required")


def position_rule_pair(rule) -> None:
    """Config.position_rule: a pair (c, L), the slope c >= 0 of 1 + c ln(n_i / L) and a length L."""
    if not isinstance(rule, tuple) or len(rule) != 2:
        raise ValueError(f"position_rule must be a pair (c, L): slope and training length; got {rule!r}")
    finite_number("position_rule slope c", rule[0], at_least=0)
    positive_int("position_rule L", rule[1])


def position_rule(slope, L, T, dtype) -> None:
    """The per-position rule 1 + c ln(n_i / L): c >= 0, L a length, and its largest multiplier
    (at the last row of length T) within what ``dtype`` holds: c = 1e39 is a finite float, but
    its multipliers are inf, and the logits nan."""
    finite_number("position_rule slope c", slope, at_least=0)
    positive_int("position_rule L", L)
    storable_number("position_rule slope c", slope, dtype, where="the logit multipliers")
    largest = 1 + slope * max(0.0, math.log(max(T, 1) / L))
    if largest > torch.finfo(dtype).max:
        raise ValueError(f"position_rule slope c={slope!r} multiplies the logits at length {T} by {largest:.3g}, "
                         f"more than {dtype_name(dtype)} holds; give a smaller slope")


def sink_norm(sink, norm) -> None:
    """A sink logit adds a column to a softmax row: it needs norm='softmax'."""
    if sink is not None and norm != "softmax":
        raise ValueError(f"sink adds a column to a softmax: it needs norm='softmax'; got norm={norm!r}")


def attend_args(q, k, v, norm, n, window, causal, returns, sink=None, affine=None) -> None:
    """Everything attend() takes: tensors of matching shapes and one floating dtype, a valid
    setting, sink logits (H,) with a softmax, an affine pair (a, b) of (T, T) tensors, and which
    map to return. Host-only: no host-device sync."""
    attention_setting(norm, n, None)
    boolean("causal", causal)
    if window is not None:
        positive_int("window", window)
        if not causal:
            raise ValueError(f"window={window} looks back from each query: it needs causal=True")
    if returns is not None:
        one_of("returns", returns, RETURNS)
    if not all(torch.is_tensor(t) for t in (q, k, v)):
        raise ValueError(f"q, k and v must be tensors; got {', '.join(type(t).__name__ for t in (q, k, v))}")
    if q.ndim != 4 or k.shape != q.shape or v.ndim != 4 or v.shape[:3] != q.shape[:3]:
        raise ValueError(
            "attend expects q, k of shape (B, H, T, d) and v of shape (B, H, T, e); got "
            f"q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}"
        )
    if not (q.dtype == k.dtype == v.dtype and q.is_floating_point()):
        raise ValueError(f"q, k and v must be floating point, of one dtype; got {q.dtype}, {k.dtype}, {v.dtype}")
    if sink is not None:
        sink_norm(sink, norm)
        if not torch.is_tensor(sink) or sink.shape != (q.shape[1],):
            raise ValueError(f"sink must be a tensor of one logit per head, shape ({q.shape[1]},); got "
                             f"{tuple(sink.shape) if torch.is_tensor(sink) else type(sink).__name__}")
    if affine is not None:
        T = q.shape[2]
        if (not isinstance(affine, tuple) or len(affine) != 2
                or not all(torch.is_tensor(t) and t.shape == (T, T) for t in affine)):
            raise ValueError(f"affine must be a pair (a, b) of ({T}, {T}) tensors: logits a_ij S_ij + b_ij; "
                             f"got {type(affine).__name__}")


def lm_call(model, idx, setting: dict, returns) -> None:
    """What LM.forward takes: lm_input on the host, then lm_values (token ids in the vocabulary,
    finite multipliers), which costs a host-device sync: skipped in a GPU training step, whose ids
    are the corpus's and whose loss is checked at every step."""
    lm_input(model, idx, setting, returns)
    if idx.device.type == "cpu" or not model.training:
        lm_values(model, idx)


def lm_input(model, idx, setting: dict, returns) -> None:
    """Token ids of shape (B, T) on the model's device, at most max_len long; settings it can be
    evaluated under (EVAL_SETTINGS; Config checks their values)."""
    c = model.config
    if returns is not None:
        one_of("returns", returns, RETURNS)
    if not torch.is_tensor(idx) or idx.dtype not in (torch.int64, torch.int32):
        got = idx.dtype if torch.is_tensor(idx) else type(idx).__name__
        raise ValueError(f"idx must be a LongTensor of token ids; got {got}")
    if idx.ndim != 2:
        raise ValueError(f"idx must be a (B, T) LongTensor of token ids; got shape {tuple(idx.shape)}")
    if idx.device != model.device:
        raise ValueError(f"idx is on {idx.device} but the model is on {model.device}; "
                         "build it there or move it with idx.to(model.device)")
    if idx.shape[1] > c.max_len:
        raise ValueError(f"sequence length {idx.shape[1]} exceeds this model's max_len={c.max_len}")
    unknown = [name for name in setting if name not in EVAL_SETTINGS]
    if unknown:
        raise ValueError(f"a model is evaluated under another {', '.join(EVAL_SETTINGS)}; "
                         f"got {', '.join(map(repr, unknown))}")
    if setting.get("rope_scaling") is not None and "rope" not in ((c.pos,) if isinstance(c.pos, str) else c.pos):
        raise ValueError(f"rope_scaling={setting['rope_scaling']} needs a RoPE model; this one has pos={c.pos!r}")


def lm_values(model, idx) -> None:
    """Token ids within the vocabulary and finite multipliers, in one host-device sync: an id
    out of range is otherwise torch's bare "index out of range in self", and a nan multiplier
    zeros or nan weights, silently."""
    vocab = model.config.vocab_size
    if (((idx >= 0) & (idx < vocab)).all() & torch.isfinite(model.multiplier).all()).item():
        return
    bad = idx[(idx < 0) | (idx >= vocab)]
    if bad.numel():
        raise ValueError(f"token id {bad[0].item()} is out of range: ids must be in [0, {vocab}) "
                         f"(vocab_size={vocab}); were they made by another corpus's tokenizer than the "
                         "model was trained with?")
    raise ValueError(f"model.multiplier must be finite; got {model.multiplier.tolist()}")


def train_args(model, batch_stream, *, steps, lr, warmup, weight_decay, clip) -> None:
    """What training.train takes: a model with something to train, an iterator of batches, and
    its numbers."""
    positive_int("steps", steps)
    finite_number("lr", lr, above=0)
    integer("warmup", warmup, at_least=0)
    finite_number("weight_decay", weight_decay, at_least=0)
    finite_number("clip", clip, above=0)
    if not hasattr(batch_stream, "__next__"):
        raise ValueError("batch_stream must be an iterator of (x, y) batches, as minilm.batches() returns; "
                         f"got {type(batch_stream).__name__}")
    if not any(p.requires_grad for p in model.parameters()):
        raise ValueError("the model has no parameter that requires grad; nothing to train")


def recipe(r, fillers) -> None:
    """Every field of a training Recipe (``fillers``: the kinds of retrieval filler)."""
    one_of("Recipe.task", r.task, ("causal", "mlm"))
    if r.lengths is not None:
        positive_ints("Recipe.lengths", r.lengths)
    if (r.length is None) == (r.lengths is None):
        raise ValueError("give a Recipe exactly one of length (one length) or lengths (mixed lengths, "
                         f"with length=None); got length={r.length!r}, lengths={r.lengths!r}")
    if r.length is not None:
        positive_int("Recipe.length", r.length)
    positive_int("Recipe.steps", r.steps)  # 0 steps would cache an untrained model
    positive_int("Recipe.batch_size", r.batch_size)
    finite_number("Recipe.lr", r.lr, above=0)
    integer("Recipe.warmup", r.warmup, at_least=0)
    finite_number("Recipe.weight_decay", r.weight_decay, at_least=0)
    integer("Recipe.seed", r.seed)
    finite_number("Recipe.retrieval", r.retrieval, at_least=0, at_most=1)
    one_of("Recipe.filler", r.filler, fillers)
    if r.filler != "text" and not r.retrieval:
        raise ValueError(f"Recipe.filler={r.filler!r} fills retrieval windows, and retrieval=0 draws none; "
                         "set retrieval > 0 or leave filler='text'")
    if r.retrieval and r.task != "causal":
        raise ValueError(f"Recipe.retrieval needs task='causal' (the answer comes last); got task={r.task!r}")


# ----------------------------------------------------------------------------
# A model to train, or to measure on a corpus. A (config, recipe, corpus) is checked once, where
# it enters: pretrained and pretrained_many call ``job`` (and, on the model they build,
# ``init_weights``), the command line ``no_target_leakage``; the training loop, the batches and
# the cache below them check none of it again. This module imports nothing from minilm, so the
# classes an argument must be are passed in (``kinds``).
# ----------------------------------------------------------------------------


def job(config, recipe, corpus, init, kinds) -> None:
    """One model to train: a Config and a Recipe that agree (no_target_leakage), a Corpus of the
    config's vocabulary size, and ``init`` None or an LM; ``kinds`` = (Config, Recipe, Corpus, LM).
    Whether init's weights fit the model is checked on the model once it is built (init_weights)."""
    config_kind, recipe_kind, corpus_kind, model_kind = kinds
    if not isinstance(config, config_kind) or not isinstance(recipe, recipe_kind):
        raise ValueError(f"pretrained needs a Config and a Recipe; got {type(config).__name__} "
                         f"and {type(recipe).__name__}")
    if not isinstance(corpus, corpus_kind):
        raise ValueError(f"corpus must be a minilm.Corpus or None; got {type(corpus).__name__}")
    if init is not None and not isinstance(init, model_kind):
        raise ValueError(f"init must be a minilm.LM or None; got {type(init).__name__}")
    if config.vocab_size != corpus.tokenizer.vocab_size:
        raise ValueError(f"config.vocab_size={config.vocab_size} but the corpus has "
                         f"{corpus.tokenizer.vocab_size} symbols")
    no_target_leakage(config.causal, recipe.task)


def no_target_leakage(causal, task) -> None:
    """A bidirectional model (causal=False) sees every position of its input, the next token
    too: trained or measured on next-token prediction, it reads the answer (its loss falls far
    below a causal model's, and means nothing). Masked LM is its task."""
    if task == "causal" and not causal:
        raise ValueError("a bidirectional model (causal=False) on task='causal' (next token, or "
                         "retrieval) sees the token it predicts; use task='mlm' for it, or "
                         "Config(causal=True)")


def init_weights(init, model) -> None:
    """``init``, the weights a fine-tune starts from, fit ``model`` (LM(config), as built to
    train): the same tensor names and shapes (they may come from another config of the same
    sizes, e.g. another n)."""
    given, expected = init.state_dict(), model.state_dict()
    problem = None
    if given.keys() != expected.keys():
        names = sorted(given.keys() ^ expected.keys())
        more = " ..." if len(names) > 4 else ""
        problem = f"tensors {', '.join(names[:4])}{more} are in only one of init and LM(config)"
    else:
        for name, tensor in expected.items():
            if given[name].shape != tensor.shape:
                problem = (f"{name} is {tuple(given[name].shape)} in init but "
                           f"{tuple(tensor.shape)} in LM(config)")
                break
    if problem:
        raise ValueError(f"init has the weights of another model: {problem}; give init a model of "
                         "this config's sizes (vocab_size, d_model, n_layer, n_head, ...)")


def measurable(model, corpus, corpus_kind, task="causal") -> None:
    """What every measurement of ``model`` on ``corpus`` needs: the corpus is one (``corpus_kind``:
    Corpus), with the vocabulary the model was trained on (same_vocabulary), and a bidirectional
    model is never scored on next-token prediction, where it sees the answer (no_target_leakage)."""
    if not isinstance(corpus, corpus_kind):
        raise ValueError(f"corpus must be a minilm.Corpus; got {type(corpus).__name__}")
    same_vocabulary(model, corpus.tokenizer.symbols, f"corpus {corpus.name!r}")
    config = getattr(model, "config", None)  # a stand-in model (a test's oracle) may have none
    if config is not None:
        no_target_leakage(config.causal, task)


def tokenizer_of(model, tokenizer, tokenizer_kind, where: str) -> None:
    """``tokenizer`` is a corpus's (``tokenizer_kind``: CharTokenizer), of the symbols ``model`` was
    trained on (same_vocabulary; ``where`` names it in the message)."""
    if not isinstance(tokenizer, tokenizer_kind):
        raise ValueError("tokenizer must be a corpus's tokenizer (corpus.tokenizer); "
                         f"got {tokenizer!r}")
    same_vocabulary(model, tokenizer.symbols, where)


def same_vocabulary(model, symbols: str, where: str) -> None:
    """A model that knows its vocabulary (``model.vocabulary``: the symbols of the corpus it was
    trained on, set by ``pretrained``) is used only with a tokenizer of the same ``symbols``:
    another corpus's ids stand for other characters, and its loss would be meaningless, silently.
    A model without one (built by hand) is not checked."""
    vocabulary = getattr(model, "vocabulary", None)
    if vocabulary is None or vocabulary == symbols:
        return

    def described(symbols):
        digest = hashlib.sha256(symbols.encode()).hexdigest()[:8]
        return f"{len(symbols)} symbols, fingerprint {digest}"

    raise ValueError(f"the model was trained on another vocabulary ({described(vocabulary)}) "
                     f"than {where}'s ({described(symbols)}): its ids mean other characters; use "
                     "the corpus it was trained on (corpus=...)")
