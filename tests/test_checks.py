"""Every exercise checker accepts a right answer and rejects the stub and plausible wrong answers."""

import math

import pytest
import torch
import torch.nn.functional as F

from minilm.checks import check_relu2_attention, check_rope


def relu2_right(q, k, v, n, causal):
    T, d = q.shape[-2], q.shape[-1]
    scores = q @ k.transpose(-1, -2) / math.sqrt(d)
    visible = torch.ones(T, T).tril() if causal else torch.ones(T, T)
    divisor = {"length": T, "row": visible.sum(-1, keepdim=True)}.get(n, n) if isinstance(n, str) else n
    return (F.relu(scores) ** 2 * visible / divisor) @ v


def stub(*args, **kwargs):
    raise NotImplementedError()


RELU2_WRONG = {
    "n = length where fixed n was asked": lambda q, k, v, n, causal: relu2_right(q, k, v, "length" if not isinstance(n, str) else n, causal),
    "no causal mask": lambda q, k, v, n, causal: relu2_right(q, k, v, n, False),
    "softmax instead of relu²": lambda q, k, v, n, causal: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
    "no 1/sqrt(d)": lambda q, k, v, n, causal: relu2_right(q * math.sqrt(q.shape[-1]), k, v, n, causal),
    "relu instead of relu²": lambda q, k, v, n, causal: relu2_right(q, k, v, n, causal).sign() * relu2_right(q, k, v, n, causal).abs().sqrt(),
}


def rope_right(x, base=10000.0):
    T, dim = x.shape[-2:]
    theta = base ** (-torch.arange(0, dim, 2) / dim)
    angle = torch.arange(T)[:, None] * theta
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack((x1 * angle.cos() - x2 * angle.sin(), x1 * angle.sin() + x2 * angle.cos()), -1).flatten(-2)


def rope_halves(x):
    """The other common layout (rotate_half): pairs (i, i + dim/2) instead of (2i, 2i+1)."""
    T, dim = x.shape[-2:]
    theta = 10000.0 ** (-torch.arange(0, dim, 2) / dim)
    angle = torch.arange(T)[:, None] * theta
    x1, x2 = x[..., : dim // 2], x[..., dim // 2:]
    return torch.cat((x1 * angle.cos() - x2 * angle.sin(), x1 * angle.sin() + x2 * angle.cos()), -1)


ROPE_WRONG = {
    "rotate_half layout": rope_halves,
    "base 100 instead of 10000": lambda x: rope_right(x, base=100.0),
    "positions starting at 1": lambda x: rope_right(torch.cat([torch.zeros_like(x[..., :1, :]), x], -2))[..., 1:, :],
    "no rotation": lambda x: x,
}


def test_right_answers_pass(capsys):
    check_relu2_attention(relu2_right)
    check_rope(rope_right)
    assert "✓ relu² attention" in capsys.readouterr().out


@pytest.mark.parametrize("checker", [check_relu2_attention, check_rope])
def test_the_unsolved_stub_is_rejected_with_a_friendly_message(checker, capsys):
    with pytest.raises(AssertionError):
        checker(stub)
    assert "replace the stub" in capsys.readouterr().out


@pytest.mark.parametrize("wrong", RELU2_WRONG, ids=str)
def test_wrong_relu2_attention_is_rejected(wrong, capsys):
    with pytest.raises(AssertionError):
        check_relu2_attention(RELU2_WRONG[wrong])
    out = capsys.readouterr().out
    assert "✗" in out and ("expected" in out or "raised" in out)


@pytest.mark.parametrize("wrong", ROPE_WRONG, ids=str)
def test_wrong_rope_is_rejected(wrong):
    with pytest.raises(AssertionError):
        check_rope(ROPE_WRONG[wrong])


# --- the other checkers: a right answer, the stub, plausible wrong answers ------------------

import minilm.checks as C  # noqa: E402


def divisor_right(T, n, causal):
    if n == "row":
        return (torch.arange(1, T + 1.0) if causal else torch.full((T,), float(T))).view(T, 1)
    return torch.full((T, 1), float(T if n == "length" else n))


def prefix_gap_right(model, idx, T, **overrides):
    with torch.no_grad():
        return (model(idx[:, :T], **overrides) - model(idx, **overrides)[:, :T]).abs().max().item()


def entropy_right(weights):
    total = weights.sum(-1, keepdim=True)
    p = weights / torch.where(total > 0, total, torch.ones_like(total))
    return -(p * torch.where(p > 0, p.log(), torch.zeros_like(p))).sum(-1)


def log_normaliser_right(scores, norm):
    if norm == "softmax":
        return torch.logsumexp(scores, -1)
    return (F.relu(scores) ** 2).sum(-1).log()


def growth_right(ns, values):
    x, y = torch.tensor(ns, dtype=torch.float64).log(), torch.tensor(values, dtype=torch.float64).log()
    return float(((x - x.mean()) * (y - y.mean())).sum() / ((x - x.mean()) ** 2).sum())


def relu2_norm_right(q, k, v, causal):
    T = q.shape[-2]
    r = F.relu(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])) ** 2
    if causal:
        r = r * torch.ones(T, T).tril()
    z = r.sum(-1, keepdim=True)
    return (r / torch.where(z > 0, z, torch.ones_like(z))) @ v


def logn_right(T, L, causal):
    n = torch.arange(1, T + 1.0) if causal else torch.full((T,), float(T))
    return n.log() / math.log(L)


def ei_attention_right(q, k, v, L, causal):
    factor = logn_right(q.shape[-2], L, causal).view(-1, 1)
    return F.scaled_dot_product_attention(q * factor, k, v, is_causal=causal)


def probe_right(hidden, n_train):
    N, T, d = hidden.shape
    X = torch.cat([hidden, torch.ones(N, T, 1)], -1)
    y = torch.arange(T, dtype=torch.float).expand(N, T)
    w = torch.linalg.lstsq(X[:n_train].reshape(-1, d + 1), y[:n_train].reshape(-1, 1)).solution
    pred, truth = X[n_train:].reshape(-1, d + 1) @ w, y[n_train:].reshape(-1, 1)
    return 1 - ((pred - truth) ** 2).sum().item() / ((truth - truth.mean()) ** 2).sum().item()


def extension_right(position_loss, L, margin, bucket):
    reference = position_loss[L // 2: L].mean()
    for start in range(L, len(position_loss), bucket):
        if position_loss[start: start + bucket].mean() > reference + margin:
            return start / L
    return len(position_loss) / L


def fit_c_right(ratios, lambdas):
    x = [math.log(s) for s in ratios]
    return sum(a * (lam - 1) for a, lam in zip(x, lambdas)) / sum(a * a for a in x)


def head_scale_right(model, batches, steps, start, clamp=True):
    for p in model.parameters():
        p.requires_grad_(False)
    with torch.no_grad():
        model.temperature.fill_(start)
    model.temperature.requires_grad_(True)
    opt = torch.optim.AdamW([model.temperature], lr=0.05, weight_decay=0.0)
    for _ in range(steps):
        x, y = next(batches)
        loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
        if clamp:
            with torch.no_grad():
                model.temperature.clamp_(min=1.0)


def rules_right(rule, n, L):
    s = n / L
    return {"su": math.log(n) / math.log(L), "nope_fit": 1 + 0.397 * math.log(s),
            "qwen": max(1.0, math.log(n) / math.log(L)), "yarn": (0.1 * math.log(s) + 1) ** 2}[rule]


def _probe_without_bias(hidden, n_train):
    N, T, d = hidden.shape
    y = torch.arange(T, dtype=torch.float).expand(N, T)
    w = torch.linalg.lstsq(hidden[:n_train].reshape(-1, d), y[:n_train].reshape(-1, 1)).solution
    pred, truth = hidden[n_train:].reshape(-1, d) @ w, y[n_train:].reshape(-1, 1)
    return 1 - ((pred - truth) ** 2).sum().item() / ((truth - truth.mean()) ** 2).sum().item()


def _first_rise(position_loss, L, bucket, threshold):
    for start in range(L, len(position_loss), bucket):
        if position_loss[start: start + bucket].mean() > threshold:
            return start / L
    return len(position_loss) / L


def _no_clamp(model, batches, steps, start):
    head_scale_right(model, batches, steps, start, clamp=False)


def _clamp_only_at_the_end(model, batches, steps, start):
    head_scale_right(model, batches, steps, start, clamp=False)
    with torch.no_grad():
        model.temperature.clamp_(min=1.0)


def _all_weights(model, batches, steps, start):
    for p in model.parameters():
        p.requires_grad_(True)
    opt = torch.optim.AdamW(model.parameters(), lr=0.01)
    for _ in range(steps):
        x, y = next(batches)
        loss = F.cross_entropy(model(x).flatten(0, 1), y.flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()


def mixed_right(ids, batch_size, lengths, seed):
    import random
    pick, g = random.Random(seed), torch.Generator().manual_seed(seed)
    while True:
        T = pick.choice(lengths)
        starts = torch.randint(0, len(ids) - T, (batch_size,), generator=g)
        w = torch.stack([ids[s: s + T + 1] for s in starts.tolist()])
        yield w[:, :-1], w[:, 1:]


def _one_length(ids, batch_size, lengths, seed):
    return mixed_right(ids, batch_size, lengths[:1], seed)


def _unshifted(ids, batch_size, lengths, seed):
    return ((x, x.clone()) for x, _ in mixed_right(ids, batch_size, lengths, seed))


def _shuffled(ids, batch_size, lengths, seed):
    return ((x[:, torch.randperm(x.shape[1])], y) for x, y in mixed_right(ids, batch_size, lengths, seed))


CHECKERS = {
    "mixed lengths": (C.check_mixed_length_batches, mixed_right, {
        "always the first length": _one_length,
        "targets not shifted": _unshifted,
        "shuffled windows": _shuffled,
    }),
    "rule slopes": (C.check_rule_slopes, lambda rule, L: {"su": 1 / math.log(L), "qwen": 1 / math.log(L),
                                                          "nope_fit": 0.397, "yarn": 0.2}[rule], {
        "yarn's 0.1 (forgot the square)": lambda rule, L: {"su": 1 / math.log(L), "qwen": 1 / math.log(L),
                                                           "nope_fit": 0.397, "yarn": 0.1}[rule],
        "log base 10": lambda rule, L: {"su": 1 / math.log10(L), "qwen": 1 / math.log10(L),
                                        "nope_fit": 0.397, "yarn": 0.2}[rule],
    }),
    "row divisor": (C.check_row_divisor, divisor_right, {
        "row n ignores the causal mask": lambda T, n, causal: divisor_right(T, n, False),
        "n = length where fixed n was asked": lambda T, n, causal: divisor_right(T, "length" if not isinstance(n, str) else n, causal),
        "row n counts from 0": lambda T, n, causal: divisor_right(T, n, causal) - (n == "row") * causal,
    }),
    "prefix gap": (C.check_prefix_gap, prefix_gap_right, {
        "overrides dropped": lambda model, idx, T, **o: prefix_gap_right(model, idx, T),
        "compares with the last T positions": lambda model, idx, T, **o: (model(idx[:, :T], **o) - model(idx, **o)[:, -T:]).abs().max().item(),
    }),
    "entropy": (C.check_entropy, entropy_right, {
        "rows not normalised": lambda weights: -(torch.special.xlogy(weights, weights)).sum(-1),
        "log base 2": lambda weights: entropy_right(weights) / math.log(2),
    }),
    "log normaliser": (C.check_log_normaliser, log_normaliser_right, {
        "log of a plain exp sum (overflows)": lambda scores, norm: scores.exp().sum(-1).log() if norm == "softmax" else log_normaliser_right(scores, norm),
        "relu instead of relu²": lambda scores, norm: F.relu(scores).sum(-1).log() if norm == "relu2" else log_normaliser_right(scores, norm),
    }),
    "growth exponent": (C.check_growth_exponent, growth_right, {
        "slope of value vs n, not log-log": lambda ns, values: float(torch.tensor(values[-1] - values[0]) / (ns[-1] - ns[0])),
        "endpoints only": lambda ns, values: math.log(values[-1] / values[0]) / math.log(ns[-1] / ns[0]),
    }),
    "relu2 norm": (C.check_relu2_norm_attention, relu2_norm_right, {
        "no causal mask": lambda q, k, v, causal: relu2_norm_right(q, k, v, False),
        "NaN on zero rows": lambda q, k, v, causal: (lambda r: (r / r.sum(-1, keepdim=True)) @ v)(
            F.relu(q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])) ** 2 * (torch.ones(q.shape[-2], q.shape[-2]).tril() if causal else 1)),
        "softmax": lambda q, k, v, causal: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
    }),
    "logn factor": (C.check_logn_factor, logn_right, {
        "n = T for every row": lambda T, L, causal: logn_right(T, L, False),
        "log base e": lambda T, L, causal: logn_right(T, L, causal) * math.log(L),
    }),
    "entropy-invariant attention": (C.check_entropy_invariant_attention, ei_attention_right, {
        "factor on every row from T": lambda q, k, v, L, causal: ei_attention_right(q, k, v, L, False) if not causal else
            F.scaled_dot_product_attention(q * math.log(q.shape[-2]) / math.log(L), k, v, is_causal=True),
        "no factor": lambda q, k, v, L, causal: F.scaled_dot_product_attention(q, k, v, is_causal=causal),
    }),
    "position probe": (C.check_position_probe, probe_right, {
        "R² on the training sequences": lambda hidden, n_train: probe_right(torch.cat([hidden[:n_train], hidden[:n_train]]), n_train),
        "no bias column": lambda hidden, n_train: _probe_without_bias(hidden, n_train),
    }),
    "extension ratio": (C.check_extension_ratio, extension_right, {
        "reference over all of 0..L": lambda position_loss, L, margin, bucket: _first_rise(
            position_loss, L, bucket, position_loss[:L].mean() + margin),
        "first position, not first bucket": lambda position_loss, L, margin, bucket: _first_rise(
            position_loss, L, 1, position_loss[L // 2: L].mean() + margin),
    }),
    "fit c": (C.check_fit_c, fit_c_right, {
        "with an intercept": lambda ratios, lambdas: growth_right([math.e ** math.log(s) for s in ratios], [math.exp(l) for l in lambdas]),
        "log base 2": lambda ratios, lambdas: fit_c_right(ratios, lambdas) * math.log(2),
    }),
    "head scales": (C.check_head_scale_training, head_scale_right, {
        "no clamp": _no_clamp,
        "clamp only at the end": _clamp_only_at_the_end,
        "trains every weight": _all_weights,
    }),
    "length rules": (C.check_length_rules, rules_right, {
        "qwen without the max": lambda rule, n, L: math.log(n) / math.log(L) if rule == "qwen" else rules_right(rule, n, L),
        "yarn not squared": lambda rule, n, L: 0.1 * math.log(n / L) + 1 if rule == "yarn" else rules_right(rule, n, L),
    }),
}


@pytest.mark.parametrize("name", CHECKERS)
def test_checker_accepts_right_and_rejects_stub_and_wrong(name, capsys):
    checker, right, wrongs = CHECKERS[name]
    checker(right)
    assert "✓" in capsys.readouterr().out
    with pytest.raises(AssertionError):
        checker(stub)
    assert "replace the stub" in capsys.readouterr().out
    for label, wrong in wrongs.items():
        with pytest.raises(AssertionError):
            checker(wrong)
        assert "✗" in capsys.readouterr().out, label
