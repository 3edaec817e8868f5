"""Every grade_* function of the grader accepts the exercise's own solution and rejects the
unsolved stub and plausible wrong answers (so no grade can pass vacuously)."""

import math
import random
import signal
import sys
import time

import jupytext
import pytest
import torch
import torch.nn.functional as F

import course.grader as G
from notebooks import EXERCISE_SOURCES  # tools/ is on the path (conftest.py)


def load_solutions() -> dict:
    """Every function an exercise asks for, as its solution defines it."""
    solutions = {}
    for source in sorted(EXERCISE_SOURCES.glob("*.py")):
        namespace = {}
        code = [cell.source for cell in jupytext.read(source).cells if cell.cell_type == "code"]
        exec(code[0], namespace)  # the imports
        for cell in code[1:]:
            if cell.startswith("def "):
                exec(cell, namespace)
                name = cell.split("(", 1)[0][4:]
                solutions[name] = namespace[name]
    return solutions


S = load_solutions()


def stub(*args, **kwargs):
    raise NotImplementedError()


# --- plausible wrong answers, mostly the solution with one classic mistake -------------------

def relu2_softmax(q, k, v, n, causal):
    return F.scaled_dot_product_attention(q, k, v, is_causal=causal)


def rope_rotate_half(x):
    """The other common layout: pairs (i, i + dim/2) instead of (2i, 2i+1)."""
    T, dim = x.shape[-2:]
    angle = torch.arange(T)[:, None] * 10000.0 ** (-torch.arange(0, dim, 2) / dim)
    x1, x2 = x[..., : dim // 2], x[..., dim // 2:]
    return torch.cat((x1 * angle.cos() - x2 * angle.sin(), x1 * angle.sin() + x2 * angle.cos()), -1)


def relu2_norm_with_nan(q, k, v, causal):
    T = q.shape[-2]
    r = F.relu(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])) ** 2
    if causal:
        r = r * torch.ones(T, T).tril()
    return (r / r.sum(-1, keepdim=True)) @ v


def mixed_one_length(ids, batch_size, lengths, seed):
    return S["mixed_length_batches"](ids, batch_size, lengths[:1], seed)


def mixed_unshifted(ids, batch_size, lengths, seed):
    return ((x, x.clone()) for x, _ in S["mixed_length_batches"](ids, batch_size, lengths, seed))


def mixed_shuffled(ids, batch_size, lengths, seed):
    return ((x[:, torch.randperm(x.shape[1])], y) for x, y in S["mixed_length_batches"](ids, batch_size, lengths, seed))


def probe_without_bias(hidden, n_train):
    N, T, d = hidden.shape
    y = torch.arange(T, dtype=torch.float).expand(N, T)
    w = torch.linalg.lstsq(hidden[:n_train].reshape(-1, d), y[:n_train].reshape(-1, 1)).solution
    predicted, truth = hidden[n_train:].reshape(-1, d) @ w, y[n_train:].reshape(-1, 1)
    return 1 - ((predicted - truth) ** 2).sum().item() / ((truth - truth.mean()) ** 2).sum().item()


def first_rise(position_loss, L, bucket, threshold):
    for start in range(L, len(position_loss), bucket):
        if position_loss[start: start + bucket].mean() > threshold:
            return start / L
    return len(position_loss) / L


def adamw_steps(model, params, batches, steps, lr):
    optimizer = torch.optim.AdamW(params, lr=lr, weight_decay=0.0)
    for _ in range(steps):
        x, y = next(batches)
        loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def head_scales_without_clamp(model, batches, steps, start):
    for p in model.parameters():
        p.requires_grad_(False)
    with torch.no_grad():
        model.multiplier.fill_(start)
    model.multiplier.requires_grad_(True)
    adamw_steps(model, [model.multiplier], batches, steps, lr=0.05)


def head_scales_clamped_at_the_end(model, batches, steps, start):
    head_scales_without_clamp(model, batches, steps, start)
    with torch.no_grad():
        model.multiplier.clamp_(min=1.0)


def head_scales_all_weights(model, batches, steps, start):
    adamw_steps(model, list(model.parameters()), batches, steps, lr=0.01)


def not_length(n):
    return "length" if not isinstance(n, str) else n


GRADERS = {  # grade_* function: (the solution's function, {wrong answer: function})
    "grade_relu2_attention": ("relu2_attention", {
        "n = length where fixed n was asked": lambda q, k, v, n, causal: S["relu2_attention"](q, k, v, not_length(n), causal),
        "no causal mask": lambda q, k, v, n, causal: S["relu2_attention"](q, k, v, n, False),
        "softmax instead of relu²": relu2_softmax,
        "no 1/sqrt(d)": lambda q, k, v, n, causal: S["relu2_attention"](q * math.sqrt(q.shape[-1]), k, v, n, causal),
    }),
    "grade_rope": ("rope", {
        "rotate_half layout": rope_rotate_half,
        "no rotation": lambda x: x,
        "positions starting at 1": lambda x: S["rope"](torch.cat([torch.zeros_like(x[..., :1, :]), x], -2))[..., 1:, :],
    }),
    "grade_gau_parameter_count": ("gau_parameter_count", {
        "no LayerNorm": lambda d, s, expansion: S["gau_parameter_count"](d, s, expansion) - 2 * d,
        "no biases": lambda d, s, expansion: S["gau_parameter_count"](d, s, expansion) - (2 * expansion * d + s + d),
        "e = d": lambda d, s, expansion: S["gau_parameter_count"](d, s, 1),
    }),
    "grade_row_divisor": ("row_divisor", {
        "row n ignores the causal mask": lambda T, n, causal: S["row_divisor"](T, n, False),
        "n = length where fixed n was asked": lambda T, n, causal: S["row_divisor"](T, not_length(n), causal),
        "row n counts from 0": lambda T, n, causal: S["row_divisor"](T, n, causal) - (n == "row") * causal,
    }),
    "grade_prefix_gap": ("prefix_gap", {
        "overrides dropped": lambda model, idx, T, **overrides: S["prefix_gap"](model, idx, T),
        "compared with the last T positions": lambda model, idx, T, **o: (model(idx[:, :T], **o) - model(idx, **o)[:, -T:]).abs().max().item(),
        "abs() forgotten": lambda model, idx, T, **o: (model(idx[:, :T], **o) - model(idx, **o)[:, :T]).max().item(),
        "abs() forgotten, the other way round": lambda model, idx, T, **o: (model(idx, **o)[:, :T] - model(idx[:, :T], **o)).max().item(),
    }),
    "grade_entropy": ("entropy", {
        "rows not normalised": lambda weights: -(torch.special.xlogy(weights, weights)).sum(-1),
        "log base 2": lambda weights: S["entropy"](weights) / math.log(2),
    }),
    "grade_log_normaliser": ("log_normaliser", {
        "log of a plain sum of exp (overflows)": lambda scores, norm: scores.exp().sum(-1).log() if norm == "softmax" else S["log_normaliser"](scores, norm),
        "relu instead of relu²": lambda scores, norm: F.relu(scores).sum(-1).log() if norm == "relu2" else S["log_normaliser"](scores, norm),
    }),
    "grade_growth_exponent": ("growth_exponent", {
        "slope on a linear scale": lambda ns, values: (values[-1] - values[0]) / (ns[-1] - ns[0]),
        "endpoints only": lambda ns, values: math.log(values[-1] / values[0]) / math.log(ns[-1] / ns[0]),
    }),
    "grade_relu2_norm_attention": ("relu2_norm_attention", {
        "no causal mask": lambda q, k, v, causal: S["relu2_norm_attention"](q, k, v, False),
        "NaN on rows of zeros": relu2_norm_with_nan,
        "softmax": lambda q, k, v, causal: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
    }),
    "grade_mixed_length_batches": ("mixed_length_batches", {
        "always the first length": mixed_one_length,
        "targets not shifted": mixed_unshifted,
        "shuffled windows": mixed_shuffled,
    }),
    "grade_logn_factor": ("logn_factor", {
        "n = T for every row": lambda T, L, causal: S["logn_factor"](T, L, False),
        "natural log of n": lambda T, L, causal: S["logn_factor"](T, L, causal) * math.log(L),
    }),
    "grade_entropy_invariant_attention": ("entropy_invariant_attention", {
        "no factor": lambda q, k, v, L, causal: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
        "factor log T on every row": lambda q, k, v, L, causal: F.scaled_dot_product_attention(
            q * math.log(q.shape[-2]) / math.log(L), k, v, is_causal=causal),
    }),
    "grade_simplex_self_weight": ("simplex_self_weight", {
        "n rivals instead of n - 1": lambda n, rho, beta: 1 / (1 + n * math.exp(-beta * (1 - rho))),
        "the gap (1 - rho) left out": lambda n, rho, beta: 1 / (1 + (n - 1) * math.exp(-beta)),
        "its own score taken as rho too (uniform)": lambda n, rho, beta: 1 / n,
    }),
    "grade_position_probe": ("position_probe_r2", {
        "R² on the training sequences": lambda hidden, n_train: S["position_probe_r2"](torch.cat([hidden[:n_train]] * 2), n_train),
        "no bias column": probe_without_bias,
    }),
    "grade_extension_ratio": ("extension_ratio", {
        "reference over all of 0..L": lambda position_loss, L, margin, bucket: first_rise(position_loss, L, bucket, position_loss[:L].mean() + margin),
        "first position, not first bucket": lambda position_loss, L, margin, bucket: first_rise(position_loss, L, 1, position_loss[L // 2: L].mean() + margin),
    }),
    "grade_fit_c": ("fit_c", {
        "log base 2": lambda ratios, lambdas: S["fit_c"](ratios, lambdas) * math.log(2),
        "mean of (lambda - 1) / ln s": lambda ratios, lambdas: sum((lam - 1) / math.log(s) for s, lam in zip(ratios, lambdas)) / len(ratios),
    }),
    "grade_head_scale_training": ("train_head_scales", {
        "no clamp": head_scales_without_clamp,
        "clamp only at the end": head_scales_clamped_at_the_end,
        "trains every weight": head_scales_all_weights,
    }),
    "grade_length_rules": ("length_rule", {
        "qwen without the max": lambda rule, n, L: math.log(n) / math.log(L) if rule == "qwen" else S["length_rule"](rule, n, L),
        "yarn not squared": lambda rule, n, L: 0.1 * math.log(n / L) + 1 if rule == "yarn" else S["length_rule"](rule, n, L),
    }),
    "grade_exact_match": ("exact_match", {
        "any digit right": lambda logits, y: (logits[:, -3:].argmax(-1) == y[:, -3:]).any(-1),
        "the last digit only": lambda logits, y: logits[:, -1].argmax(-1) == y[:, -1],
    }),
    "grade_needle_mass": ("needle_mass", {
        "the digits without the @": lambda rows, needle: S["needle_mass"](rows, needle + 1) - 0,
        "one position short": lambda rows, needle: S["needle_mass"](rows, needle) - rows.gather(
            -1, (needle + 3).view(-1, *[1] * (rows.ndim - 1)).expand(*rows.shape[:-1], 1)).squeeze(-1),
    }),
    "grade_per_position_fit": ("per_position_fit", {
        "positions counted from 0": lambda table, grid, L, bucket: per_position_fit_from_zero(table, grid, L, bucket),
        "the highest loss as the best": lambda table, grid, L, bucket: S["per_position_fit"](-table, grid, L, bucket),
    }),
    "grade_position_rule": ("position_rule", {
        "no floor at 1 (below L too)": lambda T, c, L, causal: 1 + c * torch.log(
            (torch.arange(1, T + 1).float() if causal else torch.full((T,), float(T))) / L),
        "positions counted from 0": lambda T, c, L, causal: S["position_rule"](T, c, L, causal)
        if not causal
        else torch.where(torch.arange(T) > L, 1 + c * torch.log(torch.arange(T).clamp(min=1) / L), torch.ones(T)),
    }),
    "grade_seed_interval": ("seed_interval", {
        "a normal 1.645 instead of t": lambda values, level, t_quantile: S["seed_interval"](
            values, level, lambda p, df: 1.6448536269514722 if p == 0.95 else t_quantile(p, df)),
        "the population sd (divide by n)": lambda values, level, t_quantile: seed_interval_population_sd(
            values, level, t_quantile),
    }),
    "grade_needle_share": ("needle_share", {
        "n instead of n - k filler keys": lambda n, needle_keys, needle_logit, lam: needle_keys * math.exp(
            lam * needle_logit) / (needle_keys * math.exp(lam * needle_logit) + n),
        "the temperature on the filler too, divided": lambda n, needle_keys, needle_logit, lam: needle_keys * math.exp(
            needle_logit / lam) / (needle_keys * math.exp(needle_logit / lam) + (n - needle_keys)),
    }),
    "grade_lambda_holding_share": ("lambda_holding_share", {
        "forgot the k needle keys": lambda n, needle_keys, needle_logit, share: math.log(
            share * (n - needle_keys) / (1 - share)) / needle_logit,
        "share and 1 - share swapped": lambda n, needle_keys, needle_logit, share: math.log(
            (1 - share) * (n - needle_keys) / (share * needle_keys)) / needle_logit,
    }),
    "grade_rule_slopes": ("rule_slope", {
        "yarn's 0.1 (forgot the square)": lambda rule, L: 0.1 if rule == "yarn" else S["rule_slope"](rule, L),
        "log base 10": lambda rule, L: 1 / math.log10(L) if rule in ("su", "qwen") else S["rule_slope"](rule, L),
    }),
    "grade_sliding_window_mask": ("sliding_window_mask", {
        "a window of w + 1 keys (i - j <= w)": lambda T, window: S["sliding_window_mask"](
            T, None if window is None else window + 1),
        "no causal mask inside the window": lambda T, window: (
            torch.arange(T).view(-1, 1) - torch.arange(T).view(1, -1)).abs() < (T if window is None else window),
    }),
    "grade_design": ("window_of_L", {
        "a window of L / 4": lambda T, device, dtype: window_of(8)(T, device, dtype),
        "log T / log L on every row": lambda T, device, dtype: (
            torch.full((T, T), max(1.0, math.log(T) / math.log(32))), torch.zeros(T, T)),
    }),
    "grade_reach": ("reach", {
        "no residual path (the layers' masks alone)": lambda layers, T: reach_without_residual(layers, T),
        "every layer global": lambda layers, T: S["reach"]([(pos, None) for pos, _ in layers], T),
    }),
}


def reach_without_residual(layers, T):
    """The product of the masks with the diagonal taken out: a layer that forgets its own input."""
    depends = torch.eye(T, dtype=torch.bool)
    for _, window in layers:
        mask = S["sliding_window_mask"](T, window) & ~torch.eye(T, dtype=torch.bool)
        depends = (mask.float() @ depends.float()) > 0
    return depends


def seed_interval_population_sd(values, level, t_quantile):
    x = torch.as_tensor(values, dtype=torch.float64)
    half = t_quantile((1 + level) / 2, len(x) - 1) * x.std(unbiased=False).item() / math.sqrt(len(x))
    return x.mean().item(), x.mean().item() - half, x.mean().item() + half


def per_position_fit_from_zero(table, grid, L, bucket):
    xs, lams = [], []
    for start in range(L, table.shape[1], bucket):
        position = torch.arange(start, min(start + bucket, table.shape[1])).float().mean().item()
        xs.append(math.log(position / L))
        lams.append(grid[int(table[:, start : start + bucket].mean(1).argmin())])
    return sum(x * (lam - 1) for x, lam in zip(xs, lams)) / sum(x * x for x in xs)


def test_every_grade_function_is_covered():
    assert set(GRADERS) == {name for name in dir(G) if name.startswith("grade_")}


@pytest.mark.parametrize("grade_name", GRADERS)
def test_grade_accepts_the_solution(grade_name, capsys):
    getattr(G, grade_name)(S[GRADERS[grade_name][0]])
    assert "✓" in capsys.readouterr().out


@pytest.mark.parametrize("grade_name", GRADERS)
def test_grade_rejects_the_stub_with_a_friendly_message(grade_name):
    with pytest.raises(G.GradeFailed, match="replace the stub"):
        getattr(G, grade_name)(stub)


WRONG = [(grade, label) for grade, (_, wrongs) in GRADERS.items() for label in wrongs]


@pytest.mark.parametrize("grade_name,label", WRONG, ids=[f"{c}: {w}" for c, w in WRONG])
def test_grade_rejects_a_plausible_wrong_answer(grade_name, label):
    random.seed(0)
    with pytest.raises(G.GradeFailed) as failure:
        getattr(G, grade_name)(GRADERS[grade_name][1][label])
    assert failure.value._render_traceback_() == [f"\u2717 {failure.value}"]


# grade_head_scale_training's function trains the model in place, returning nothing
RETURNING = [name for name in GRADERS if name != "grade_head_scale_training"]


@pytest.mark.parametrize("grade_name", RETURNING)
def test_a_function_that_returns_none_is_told_to_return(grade_name):
    with pytest.raises(G.GradeFailed, match="returned None. Did you forget `return`") as failure:
        getattr(G, grade_name)(lambda *args, **kwargs: None)
    assert "Traceback" not in str(failure.value)


def test_a_wrong_type_gets_a_sentence():
    with pytest.raises(G.GradeFailed, match="returned a str; return a tensor or a number"):
        G.grade_growth_exponent(lambda ns, values: "0.5")


def test_the_gau_count_fails_first_on_a_case_with_d_not_equal_to_s():
    # gamma and beta sized by d instead of s: 4d numbers instead of 4s
    def width_d(d, s, expansion):
        return S["gau_parameter_count"](d, s, expansion) - 4 * s + 4 * d

    with pytest.raises(G.GradeFailed, match=r"case 1 \(d=32, s=16"):
        G.grade_gau_parameter_count(width_d)


def test_a_crash_in_the_students_code_shows_the_students_line():
    # compiled under a file name that is no library's, its source registered with linecache, as
    # IPython does for a notebook cell
    import linecache

    cell = "def relu2_attention(q, k, v, n, causal):\n    scores = q @ k  # forgot the transpose\n    return scores @ v\n"
    linecache.cache["<notebook cell>"] = (len(cell), None, cell.splitlines(True), "<notebook cell>")
    namespace = {}
    exec(compile(cell, "<notebook cell>", "exec"), namespace)
    with pytest.raises(G.GradeFailed) as failure:
        G.grade_relu2_attention(namespace["relu2_attention"])
    message = str(failure.value)
    assert "raised RuntimeError" in message
    assert "in your code, line 2: scores = q @ k  # forgot the transpose" in message
    assert "Traceback" not in message and "minilm" not in message.split("in your code")[1]


def test_a_boolean_result_is_reported_as_true_or_false():
    with pytest.raises(G.GradeFailed, match=r"expected (True|False), got (True|False)$"):
        G.grade_exact_match(GRADERS["grade_exact_match"][1]["the last digit only"])


def test_a_scalar_result_names_no_index():
    with pytest.raises(G.GradeFailed) as failure:
        G.grade_growth_exponent(lambda ns, values: 0.123)
    assert "index" not in str(failure.value) and "expected" in str(failure.value)


# --- what comes back, examined before its values: one line each, no traceback from the grader ---

def entropy_as(convert):
    return lambda weights: convert(S["entropy"](weights))


@pytest.mark.parametrize("student, words", [
    (entropy_as(lambda h: h.tolist()), ["expected a tensor of shape (2, 3, 9), float32, on cpu", "got a list of 2 items"]),
    (entropy_as(lambda h: h.half()), ["expected float32 values", "float16"]),
    (entropy_as(lambda h: h.to("meta")), ["expected a tensor on cpu", "on meta"]),
    (entropy_as(lambda h: h > 0), ["expected numbers (float32)", "bool"]),
], ids=["list", "float16", "another device", "bool"])
def test_what_came_back_is_named_with_what_was_expected(student, words):
    fails_saying(G.grade_entropy, student, words)


def fails_saying(grade, student, words):
    """``grade(student)`` fails with one line that holds every one of ``words``."""
    with pytest.raises(G.GradeFailed) as failure:
        grade(student)
    for word in words:
        assert word in str(failure.value), (word, str(failure.value))


def test_a_function_that_changes_its_input_in_place_fails():
    def normalises_in_place(weights):
        weights /= weights.sum(-1, keepdim=True).clamp(min=1e-30)   # the answer is right, the input is gone
        return -torch.special.xlogy(weights, weights).sum(-1)

    with pytest.raises(G.GradeFailed, match="your function changed its input weights in place"):
        G.grade_entropy(normalises_in_place)


def test_a_list_changed_in_place_fails_too():
    def rescales_in_place(ns, values):
        values[:] = [2 * v for v in values]   # the exponent is the same, the caller's list is not
        return S["growth_exponent"](ns, values)

    with pytest.raises(G.GradeFailed, match="changed its input values in place"):
        G.grade_growth_exponent(rescales_in_place)


def test_a_list_holding_nan_is_unchanged_when_its_values_are():
    nan = float("nan")
    assert G._unchanged([1.0, nan, torch.tensor([nan])],
                        G._snapshot([1.0, float("nan"), torch.tensor([nan])]))
    # another nan object, the same value (was: changed)
    assert G._unchanged([1.0, float("nan")], [1.0, nan])
    # controls
    assert not G._unchanged([1.0, 2.0], [1.0, nan]) and not G._unchanged([torch.tensor(1.0)], [1.0])


def one_length(ids, batch_size, lengths, seed):
    return S["mixed_length_batches"](ids, batch_size, lengths[:1], seed)


def finite_stream(ids, batch_size, lengths, seed):
    stream = S["mixed_length_batches"](ids, batch_size, lengths, seed)
    return (next(stream) for _ in range(10))


@pytest.mark.parametrize("student, words", [
    (lambda ids, batch_size, lengths, seed: [next(S["mixed_length_batches"](ids, batch_size, lengths, seed))] * 60,
     ["the stream must be endless", "returned a list of 60 items"]),
    (finite_stream, ["the stream must be endless", "stopped after 10 batches"]),
    (lambda ids, batch_size, lengths, seed: ([x.tolist(), y.tolist()] for x, y in
                                             S["mixed_length_batches"](ids, batch_size, lengths, seed)),
     ["batch 1: expected a pair (x, y) of tensors", "a list of 2 items"]),
    (lambda ids, batch_size, lengths, seed: (x for x, _ in S["mixed_length_batches"](ids, batch_size, lengths, seed)),
     ["batch 1: expected a pair (x, y) of tensors", "got a tensor of shape (4,"]),
], ids=["a list of batches", "a finite generator", "lists", "one tensor"])
def test_a_stream_of_the_wrong_kind_gets_one_line(student, words):
    fails_saying(G.grade_mixed_length_batches, student, words)


class EndlessBatches:
    """An endless iterable that is not an iterator: each iter() starts the stream anew."""

    def __init__(self, ids, batch_size, lengths, seed):
        self.arguments = (ids, batch_size, lengths, seed)

    def __iter__(self):
        return S["mixed_length_batches"](*self.arguments)


def test_an_endless_iterable_that_is_not_an_iterator_is_a_stream(capsys):
    G.grade_mixed_length_batches(EndlessBatches)  # was: 'the stream must be endless'
    assert "\u2713 mixed-length batches" in capsys.readouterr().out


def test_a_generator_that_changes_ids_as_it_is_drawn_from_fails():
    def zeroes_ids(ids, batch_size, lengths, seed):  # its body runs only when the first batch is drawn
        stream = S["mixed_length_batches"](ids.clone(), batch_size, lengths, seed)
        ids.zero_()  # the batches are right, the caller's ids are gone
        yield from stream

    with pytest.raises(G.GradeFailed, match="drawing from your stream: your function changed "
                                            "its input ids in place"):
        G.grade_mixed_length_batches(zeroes_ids)


def test_a_function_that_never_returns_meets_the_time_limit(monkeypatch):
    import time

    monkeypatch.setattr(G, "CASE_SECONDS", 0.3)
    started = time.monotonic()
    with pytest.raises(G.GradeFailed,
                       match=r"case 1 \(.*\): your function did not finish within 0.3 s"):
        G.grade_growth_exponent(lambda ns, values: time.sleep(3600))
    assert time.monotonic() - started < 10


def test_a_stream_that_never_yields_meets_the_time_limit(monkeypatch):
    monkeypatch.setattr(G, "CASE_SECONDS", 0.3)

    def stuck(ids, batch_size, lengths, seed):
        while True:
            pass
        yield

    with pytest.raises(G.GradeFailed,
                       match="drawing 60 batches from your stream did not finish within 0.3 s"):
        G.grade_mixed_length_batches(stuck)


# --- the time limit keeps what it finds: the caller's timer and handler, an outer limit ----------

needs_alarm = pytest.mark.skipif(not hasattr(signal, "SIGALRM"), reason="the time limit needs SIGALRM")


@pytest.fixture
def callers_alarm():
    """The caller's own SIGALRM handler (it counts its alarms), put back with no timer afterwards."""
    fired = []
    before = signal.signal(signal.SIGALRM, lambda signum, frame: fired.append(signum))
    try:
        yield fired
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)


@needs_alarm
def test_a_grade_keeps_the_callers_own_timer_and_handler(callers_alarm):
    handler = signal.getsignal(signal.SIGALRM)
    signal.setitimer(signal.ITIMER_REAL, 30.0, 7.0)
    G.grade_growth_exponent(S["growth_exponent"])
    remaining, interval = signal.getitimer(signal.ITIMER_REAL)
    assert signal.getsignal(signal.SIGALRM) is handler
    assert 20.0 < remaining <= 30.0 and interval == 7.0, (remaining, interval)  # was cancelled: 0.0
    assert callers_alarm == []


@needs_alarm
def test_the_callers_timer_due_during_a_case_goes_to_its_handler_and_the_case_goes_on(callers_alarm, monkeypatch):
    monkeypatch.setattr(G, "CASE_SECONDS", 5)

    def slow(ns, values):
        time.sleep(0.3)
        return S["growth_exponent"](ns, values)

    signal.setitimer(signal.ITIMER_REAL, 0.1)
    G.grade_growth_exponent(slow)
    assert callers_alarm == [signal.SIGALRM]


@needs_alarm
def test_an_inner_time_limit_keeps_the_outer_one():
    with pytest.raises(G._OutOfTime) as out:
        with G._time_limit(0.3) as outer:
            with G._time_limit(10):
                pass
            time.sleep(3)  # was: the inner limit had cancelled the outer one
    assert out.value.args[0] is outer


@needs_alarm
def test_an_outer_limit_that_runs_out_inside_an_inner_one_is_the_outers():
    with pytest.raises(G._OutOfTime) as out:
        with G._time_limit(0.2) as outer:
            with G._time_limit(10):
                time.sleep(3)
    assert out.value.args[0] is outer


@needs_alarm
def test_a_handler_not_set_from_python_is_left_as_the_default(monkeypatch):
    real_signal, real_getsignal = signal.signal, signal.getsignal
    before = real_signal(signal.SIGALRM, signal.SIG_DFL)
    try:  # a handler installed by C code: Python's signal module reports it as None
        monkeypatch.setattr(signal, "getsignal", lambda signum: None)
        monkeypatch.setattr(signal, "signal", lambda signum, handler: [real_signal(signum, handler), None][1])
        G.grade_growth_exponent(S["growth_exponent"])  # was: TypeError, restoring None
        assert real_getsignal(signal.SIGALRM) == signal.SIG_DFL
    finally:
        real_signal(signal.SIGALRM, before)


@needs_alarm
def test_the_handler_is_put_back_when_the_alarm_goes_off_as_the_block_ends(callers_alarm, monkeypatch):
    handler, real_setitimer = signal.getsignal(signal.SIGALRM), signal.setitimer

    def alarm_just_before_disarming(which, delay, *interval):
        real_setitimer(which, delay, *interval)
        if delay == 0:  # as if the alarm went off just before: its handler raises here
            raise G._OutOfTime(None)

    monkeypatch.setattr(signal, "setitimer", alarm_just_before_disarming)
    with pytest.raises(G._OutOfTime):
        with G._time_limit(10):
            pass
    assert signal.getsignal(signal.SIGALRM) is handler  # was: the limit's handler stayed


@needs_alarm
def test_time_stopped_in_a_debugger_does_not_count(monkeypatch):
    monkeypatch.setattr(G, "CASE_SECONDS", 0.2)
    calls = []

    def debugged(ns, values):  # as breakpoint() leaves it while the student steps through the code
        calls.append(1)
        if len(calls) == 1:
            sys.settrace(lambda frame, event, arg: None)
            try:
                time.sleep(0.7)
            finally:
                sys.settrace(None)
        return S["growth_exponent"](ns, values)

    G.grade_growth_exponent(debugged)  # was: 'did not finish within 0.2 s'
    # control: without a debugger
    with pytest.raises(G.GradeFailed, match="did not finish within 0.2 s"):
        G.grade_growth_exponent(lambda ns, values: time.sleep(3))


def shifted(element, by=0.1):
    """A seed interval with one of (mean, low, high) off by ``by``."""
    def student(values, level, t_quantile):
        found = list(S["seed_interval"](values, level, t_quantile))
        found[element] += by
        return tuple(found)
    return student


@pytest.mark.parametrize("element, words", [(0, ["in the mean"]),
                                            (1, ["in the lower end of the interval"]),
                                            (2, ["in the upper end of the interval"])])
def test_a_wrong_interval_end_is_named_not_indexed(element, words):
    fails_saying(G.grade_seed_interval, shifted(element), words)


# --- exercise 15: a design of one's own, as a logit map (a, b) -----------------------------------
def window_of(L):
    def design(T, device, dtype):
        i = torch.arange(T, device=device).view(-1, 1)
        a = torch.ones(T, T, device=device, dtype=dtype)
        return a, torch.zeros(T, T, device=device, dtype=dtype).masked_fill(i - i.view(1, -1) >= L, float("-inf"))
    return design


def test_a_causal_design_that_keeps_the_model_in_range_passes(capsys):
    G.grade_design(window_of(32), 32)
    assert "causal, and the trained model within L = 32" in capsys.readouterr().out


@pytest.mark.parametrize("design, words", [
    (lambda T, device, dtype: (torch.full((T, T), max(1.0, math.log(T) / math.log(32))),
                               torch.zeros(T, T)), ["breaks causality", "grows from"]),
    (lambda T, device, dtype: (torch.ones(T, T),
                               -0.1 * (torch.arange(T).view(-1, 1) - torch.arange(T)).float()),
     ["changes the model in range"]),
    (lambda T, device, dtype: (torch.ones(T, T), torch.full((T, T), float("-inf"))),
     ["not numbers (nan)", "leaves it no key"]),
    (lambda T, device, dtype: (torch.full((T, T), max(1.0, math.log(T) / math.log(128))),
                               torch.zeros(T, T)), ["breaks causality"]),   # acts only past 4L
    (lambda T, device, dtype: torch.ones(T, T), ["return a pair (a, b)"]),
    (window_of(8), ["changes the model in range"]),   # a window shorter than L cuts rows within L
])
def test_a_design_that_breaks_causality_or_the_model_in_range_is_told_in_one_line(design, words):
    fails_saying(lambda student: G.grade_design(student, 32), design, words)
