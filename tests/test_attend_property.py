"""attend() over random settings: every norm and n, causal or not, scales, log-n, T to 2048, in float32.

What must hold everywhere: outputs and weights are finite wherever the exact result is
representable in the dtype, masked (future) keys get exactly 0, rows sum as their norm
says, and the fused softmax kernel agrees with the explicit path. Fixed seeds, a few seconds.
"""

import math
import random

import pytest
import torch

from minilm.measure import log_row_sums
from minilm.model import attend, attention_scores, logn_factor
from minilm.validation import NORMS

TOLERANCE = {torch.float32: 1e-4}  # relative, per dtype (no profile or lesson runs in a lower precision)
N_CASES = 60


def draw(seed):
    """One random setting: (q, k, v, keyword arguments of attend), q, k, v in the drawn dtype."""
    rng = random.Random(seed)
    norm = rng.choice(NORMS)
    n = rng.choice(["length", "row", 1, 16, 64, 4096]) if norm == "relu2" else None
    T = rng.choice([1, 2, 8, 9, 16, 2048]) if rng.random() < 0.3 else round(2 ** rng.uniform(0, 11))
    B, H = (1, 1) if T > 256 else (rng.randint(1, 2), rng.randint(1, 3))
    d, e = rng.choice([4, 8, 16, 32]), rng.choice([1, 4, 8])
    dtype = rng.choice(list(TOLERANCE))
    scale = rng.choice([None, 1.0, "float", "tensor"])
    if scale == "float":
        scale = 10 ** rng.uniform(-1, 1)
    elif scale == "tensor":
        scale = torch.tensor([10 ** rng.uniform(-1, 1) for _ in range(H)])
    logn_base = rng.choice([None, 10 ** rng.uniform(math.log10(1.5), math.log10(4096))])
    # q.k / sqrt(d) has standard deviation magnitude^2: logits from ~0.1 to beyond 1000
    magnitude = 10 ** rng.uniform(-0.5, 1)
    g = torch.Generator().manual_seed(seed)
    q, k = (magnitude * torch.randn(B, H, T, d, generator=g) for _ in range(2))
    v = torch.randn(B, H, T, e, generator=g)
    causal = rng.random() < 0.5
    # the multiplier m_hi = lambda_h x log(n_i) / log(L), folded into q as a block does
    lam = torch.as_tensor(1.0 if scale is None else scale).reshape(-1, 1, 1)
    rows = logn_factor(T, logn_base, causal).view(-1, 1) if logn_base else 1
    settings = dict(norm=norm, n=n, causal=causal)
    return (q * (lam * rows)).to(dtype), k.to(dtype), v.to(dtype), settings


@pytest.mark.parametrize("seed", range(N_CASES))
def test_attend_properties_hold_for_random_settings(seed):
    q, k, v, settings = draw(seed)
    dtype, T, tol = q.dtype, q.shape[2], TOLERANCE[q.dtype]
    out, weights = attend(q, k, v, returns="weights", **settings)
    assert out.dtype == weights.dtype == dtype
    # the exact result, from the same (rounded) inputs in float64
    out64, weights64 = attend(q.double(), k.double(), v.double(), returns="weights", **settings)
    limit = torch.finfo(dtype).max / 4
    assert weights[weights64.abs() < limit].isfinite().all(), settings
    assert out[out64.abs() < limit].isfinite().all(), settings

    if settings["causal"]:
        future = torch.ones(T, T, dtype=torch.bool).triu(1)
        assert (weights[..., future] == 0).all(), settings

    sums = weights.double().sum(-1)
    if settings["norm"] == "softmax":
        torch.testing.assert_close(sums, torch.ones_like(sums), rtol=0, atol=tol * 4)
    else:  # relu2_norm: 1, or 0 for a row of scores <= 0; relu2: sum_j relu(S_ij)^2 / n
        sums64 = weights64.sum(-1)
        finite = sums64 < limit
        torch.testing.assert_close(sums[finite], sums64[finite], rtol=tol * 4, atol=1e-6)

    if settings["norm"] == "softmax":
        # both paths accumulate q k^T in float32, in different orders: logits differ by eps * |S|
        S = attention_scores(q.double(), k.double(), causal=settings["causal"])
        slack = 4 * torch.finfo(torch.float32).eps * S.masked_fill(S.isinf(), 0).abs().max().item()
        fused, _ = attend(q, k, v, **settings)
        torch.testing.assert_close(fused.double(), out.double(), rtol=tol, atol=tol + slack)


def test_relu2_norm_stays_finite_where_relu2_of_the_logits_overflows():
    # relu(S)^2 overflows float32 for logits past 1.8e19; and log Z of relu^2 rows past 256 in float16
    q = torch.ones(1, 1, 3, 16)
    _, weights = attend(q * 1e19, q, q, norm="relu2_norm", causal=False, returns="weights")
    torch.testing.assert_close(weights, torch.full_like(weights, 1 / 3))
    scores = torch.full((2, 3), 300.0, dtype=torch.float16)
    expected = math.log(3 * 300.0 ** 2)
    assert (log_row_sums(scores, norm="relu2").float() - expected).abs().max() < 0.02
