"""The model, in one file: attention, RoPE, the GAU and Transformer blocks, the LM.

Read top to bottom. Every equation a lesson uses is one short function here,
with the equation in its docstring, written as in the lesson.

Shapes: B batch, H heads, T sequence length, d the width of a query/key,
e the width of a value. ``i`` indexes queries, ``j`` keys.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields

import torch
import torch.nn.functional as F
from einops import rearrange
from torch import nn

from .validation import boolean, finite_number, integer, one_of, plain_fields, positive_int

NORMS = ("softmax", "relu2", "relu2_norm")
N_MODES = ("length", "row")  # besides a positive int (a fixed n)
BLOCKS = ("gau", "transformer")
POSITIONS = ("rope", "nope")
ROPE_SCALINGS = ("pi", "ntk", "yarn")


# ----------------------------------------------------------------------------
# Attention: every variant is a choice of how scores become weights.
# ----------------------------------------------------------------------------


def keys_seen(T: int, causal: bool, device=None) -> torch.Tensor:
    """n_i, the number of keys query i sees: i + 1 when causal, T when not. Shape (T,)."""
    integer("T", T, at_least=0)
    if causal:
        return torch.arange(1, T + 1, device=device, dtype=torch.float32)
    return torch.full((T,), float(T), device=device)


def logn_factor(T: int, base: float, causal: bool, device=None) -> torch.Tensor:
    """Entropy invariance: row i's logits are multiplied by log(n_i) / log(L), L = base. Shape (T,)."""
    finite_number("logn_base", base, above=1, why="the training length L")
    return keys_seen(T, causal, device).log() / math.log(base)


def position_temperature(T: int, slope: float, L: int, causal: bool, device=None) -> torch.Tensor:
    """The per-position rule of Wang et al.'s code: row i's logits are multiplied by
    lambda_i = 1 + a ln(n_i / L) where n_i > L, and by 1 within the training length L (a = slope).
    Shape (T,)."""
    finite_number("position_scale slope a", slope, at_least=0)
    positive_int("position_scale L", L)
    return 1 + slope * (keys_seen(T, causal, device) / L).log().clamp(min=0)


def check_attention_setting(norm, n, logn_base):
    """Raise ValueError unless (norm, n, logn_base) is a valid attention setting."""
    one_of("attention norm", norm, NORMS)
    if norm == "relu2":
        if not (isinstance(n, str) and n in N_MODES):
            try:
                positive_int("n", n)
            except ValueError:
                raise ValueError(
                    f"norm='relu2' needs n: a positive int (fixed n), 'length' or 'row'; got n={n!r}"
                ) from None
    elif n is not None:
        raise ValueError(f"n={n!r} only applies to norm='relu2'; norm={norm!r} takes no n")
    if logn_base is not None:
        # inf would make every log-n factor 0: uniform attention, never what was meant
        finite_number("logn_base", logn_base, above=1, why="the training length L")


def _check_attend_args(q, k, v, norm, n, scale, logn_base, causal, row_scale):
    check_attention_setting(norm, n, logn_base)
    boolean("causal", causal)
    if not all(torch.is_tensor(t) for t in (q, k, v)):
        raise ValueError(f"q, k and v must be tensors; got {', '.join(type(t).__name__ for t in (q, k, v))}")
    if q.ndim != 4 or k.shape != q.shape or v.ndim != 4 or v.shape[:3] != q.shape[:3]:
        raise ValueError(
            "attend expects q, k of shape (B, H, T, d) and v of shape (B, H, T, e); got "
            f"q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}"
        )
    if not (q.dtype == k.dtype == v.dtype and q.is_floating_point()):
        raise ValueError(f"q, k and v must be floating point, of one dtype; got {q.dtype}, {k.dtype}, {v.dtype}")
    if torch.is_tensor(scale) and scale.shape != (q.shape[1],):
        raise ValueError(
            f"a tensor scale holds one temperature per head, shape ({q.shape[1]},); got {tuple(scale.shape)}"
        )
    if row_scale is not None and (not torch.is_tensor(row_scale) or row_scale.shape != (q.shape[2],)):
        got = tuple(row_scale.shape) if torch.is_tensor(row_scale) else type(row_scale).__name__
        raise ValueError(f"row_scale holds one multiplier per query row, a tensor of shape ({q.shape[2]},); got {got}")


def _logit_multiplier(q, scale, logn_base, causal, row_scale=None):
    """Everything that multiplies q k^T row-wise: the temperature (per head), the log-n factor and
    a multiplier per row (``row_scale``, (T,)).

    Returned broadcastable to (B, H, T, 1), or None when it is 1. Folding it into q
    lets the fused kernel compute the same logits.
    """
    multiplier = None
    if torch.is_tensor(scale):
        multiplier = scale.view(-1, 1, 1).to(q)
    elif scale is not None:
        # nan or inf gives zeros from the fused CPU kernel for short rows and nan for long ones
        finite_number("scale", scale, why="a temperature: None, a number or a (H,) tensor")
        multiplier = torch.tensor(float(scale)).to(q)
    if logn_base is not None:
        logn = logn_factor(q.shape[2], logn_base, causal, q.device).to(q).view(-1, 1)
        multiplier = logn if multiplier is None else multiplier * logn
    if row_scale is not None:
        rows = row_scale.to(q).view(-1, 1)
        multiplier = rows if multiplier is None else multiplier * rows
    return multiplier


def attention_scores(q, k, *, causal=True, scale=None, logn_base=None, row_scale=None) -> torch.Tensor:
    """Logits S_ij = scale * (log n_i / log L) * r_i * q_i . k_j / sqrt(d), r = row_scale;
    invisible keys get -inf.

    ``'b h i d, b h j d -> b h i j'``. Shape (B, H, T, T).
    """
    d = q.shape[-1]
    multiplier = _logit_multiplier(q, scale, logn_base, causal, row_scale)
    if multiplier is not None:
        q = q * multiplier
    scores = torch.einsum("b h i d, b h j d -> b h i j", q, k) / math.sqrt(d)
    if causal:
        T = q.shape[2]
        future = torch.ones(T, T, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
    return scores


def softmax_weights(scores: torch.Tensor) -> torch.Tensor:
    """a_ij = exp(S_ij) / Z_i,  Z_i = sum_j exp(S_ij)."""
    return scores.softmax(dim=-1)


def relu2_divisor(T: int, n, causal: bool, device=None) -> torch.Tensor:
    """What row i of relu^2 attention is divided by: n fixed, T (n='length') or n_i (n='row'). Shape (T, 1)."""
    if n == "row":
        return keys_seen(T, causal, device).view(T, 1)
    return torch.full((T, 1), float(T if n == "length" else n), device=device)


def relu2_weights(scores: torch.Tensor, n, causal: bool) -> torch.Tensor:
    """a_ij = relu(S_ij)^2 / n, with n fixed, n = T ('length') or n = n_i ('row') (see relu2_divisor).

    Computed as (relu(S_ij) / sqrt(n))^2, the same number: relu(S)^2 alone overflows
    float16 from S = 256 even where the weight itself is representable."""
    root_n = relu2_divisor(scores.shape[-1], n, causal, scores.device).sqrt().to(scores)
    return (F.relu(scores) / root_n).square()


def _relu_over_row_peak(scores: torch.Tensor):
    """(r, m): m_i = max_j relu(S_ij) and r_ij = relu(S_ij) / m_i, in [0, 1] (r = 0 where m_i = 0)."""
    relu = F.relu(scores)
    peak = relu.amax(dim=-1, keepdim=True)
    return relu / torch.where(peak > 0, peak, torch.ones_like(peak)), peak


def relu2_norm_weights(scores: torch.Tensor) -> torch.Tensor:
    """a_ij = relu(S_ij)^2 / Z_i,  Z_i = sum_j relu(S_ij)^2; a row with Z_i = 0 gets zero weights.

    Computed as r_ij^2 / sum_j r_ij^2 with r_ij = relu(S_ij) / max_j relu(S_ij), the same
    number: every r_ij is in [0, 1], so nothing overflows (relu(S)^2 overflows float16 from
    S = 256, and its row sum earlier still)."""
    r, _ = _relu_over_row_peak(scores)
    r = r.square()
    z = r.sum(dim=-1, keepdim=True)
    return r / torch.where(z > 0, z, torch.ones_like(z))


def attention_weights(scores: torch.Tensor, *, norm="softmax", causal=True, n=None) -> torch.Tensor:
    """Turn logits S into weights A by the chosen normalisation. Masked keys (-inf) get weight 0."""
    check_attention_setting(norm, n, None)
    if norm == "softmax":
        return softmax_weights(scores)
    if norm == "relu2":
        return relu2_weights(scores, n, causal)
    return relu2_norm_weights(scores)


def log_row_sums(scores: torch.Tensor, *, norm="softmax") -> torch.Tensor:
    """log Z_i, the log of the normaliser each row would need: Z_i = sum_j exp(S_ij) for softmax
    (computed as a logsumexp, so large logits do not overflow), Z_i = sum_j relu(S_ij)^2 for relu^2
    (-inf for a row of zeros), computed as 2 log m_i + log sum_j (relu(S_ij) / m_i)^2 with
    m_i = max_j relu(S_ij), so it does not overflow either. norm='relu2_norm' is the same Z_i."""
    one_of("attention norm", norm, NORMS)
    if norm == "softmax":
        return scores.logsumexp(dim=-1)
    r, peak = _relu_over_row_peak(scores)
    return 2 * peak.squeeze(-1).log() + r.square().sum(dim=-1).log()


def attend(q, k, v, *, norm="softmax", causal=True, n=None, scale=None, logn_base=None, row_scale=None,
           return_weights=False):
    """out_i = sum_j a_ij v_j, with a = norm(S) and S_ij = scale * (log n_i / log L) * r_i * q_i . k_j / sqrt(d).

    norm='softmax':    a_ij = softmax_j(S_ij) over the visible keys
    norm='relu2':      a_ij = relu(S_ij)^2 / n   (n: a positive int, 'length' = T, or 'row' = n_i)
    norm='relu2_norm': a_ij = relu(S_ij)^2 / sum_j relu(S_ij)^2

    q, k: (B, H, T, d); v: (B, H, T, e). scale: None, a finite float, or a (H,) tensor: it
    multiplies the logits *on top of* 1 / sqrt(d) (unlike the ``scale`` of PyTorch's
    F.scaled_dot_product_attention, which replaces 1 / sqrt(d)).
    logn_base: L, or None for no log-n factor. row_scale: None, or a (T,) tensor r of one
    multiplier per query row (see position_temperature). Returns out (B, H, T, e), and with
    return_weights=True the pair (out, weights (B, H, T, T)), in the dtype of q.
    float16 and bfloat16 are computed in float32 and cast back, as the fused kernel does.
    """
    _check_attend_args(q, k, v, norm, n, scale, logn_base, causal, row_scale)
    if torch.is_tensor(scale) and not torch.isfinite(scale).all().item():  # one host-device sync
        raise ValueError(f"scale must be finite (one temperature per head); got {scale.tolist()}")
    return _attend(q, k, v, norm=norm, causal=causal, n=n, scale=scale, logn_base=logn_base,
                   row_scale=row_scale, return_weights=return_weights)


LOW_PRECISION = (torch.float16, torch.bfloat16)


def _attend(q, k, v, *, norm, causal, n, scale, logn_base, row_scale=None, return_weights=False):
    """attend() on checked arguments (LM.forward checks its temperatures once, not once per layer)."""
    # The fused kernel computes softmax(q' k^T / sqrt(d)) v; folding the multiplier
    # into q' gives exactly the logits above, rounded the same way on both paths.
    multiplier = _logit_multiplier(q, scale, logn_base, causal, row_scale)
    if multiplier is not None:
        q = q * multiplier
    if norm == "softmax" and not return_weights:
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    dtype = q.dtype
    if dtype in LOW_PRECISION:  # q k^T, exp and row sums overflow float16 long before the weights do
        q, k, v = q.float(), k.float(), v.float()
    scores = attention_scores(q, k, causal=causal)
    weights = attention_weights(scores, norm=norm, causal=causal, n=n)
    out = torch.einsum("b h i j, b h j e -> b h i e", weights, v)
    return (out.to(dtype), weights.to(dtype)) if return_weights else out.to(dtype)


# ----------------------------------------------------------------------------
# Rotary position embedding (RoPE)
# ----------------------------------------------------------------------------


@dataclass(frozen=True)
class RopeScaling:
    """Run RoPE at ``factor`` s = (target length) / ``train_len``, by one of three rules.

    'pi'   position interpolation: positions t -> t / s, i.e. every theta_i -> theta_i / s
    'ntk'  NTK-aware: base -> base * s^(dim / (dim - 2)); the fastest frequency is unchanged,
           the slowest is divided by exactly s
    'yarn' YaRN: frequency i turns r_i = L / (2 pi / theta_i) times over the training length L;
           gamma_i = clamp((r_i - 1) / (32 - 1), 0, 1), theta_i -> (1 - gamma_i) theta_i / s + gamma_i theta_i
           (fast frequencies kept, slow ones interpolated), and the logits are multiplied by
           (0.1 ln s + 1)^2 (see yarn_logit_scale)
    """

    kind: str
    factor: float
    train_len: int

    def __post_init__(self):
        plain_fields(self)
        one_of("RoPE scaling", self.kind, ROPE_SCALINGS)
        # inf would turn the frequencies into 0 or nan
        finite_number("RoPE scaling factor", self.factor, at_least=1, why="target / training length")
        positive_int("RoPE scaling train_len", self.train_len)


YARN_ALPHA, YARN_BETA = 1.0, 32.0  # YaRN's ramp: below 1 turn interpolate fully, above 32 keep


def _check_rope_args(dim, base, scaling):
    positive_int("RoPE dim", dim)
    if dim % 2:
        raise ValueError(f"RoPE rotates pairs of dimensions; the query width {dim} must be even")
    finite_number("rope_base", base, above=1, why="theta_i = base^(-2i/dim) must fall with i")
    if scaling is not None and not isinstance(scaling, RopeScaling):
        raise ValueError(f"rope_scaling must be None or a RopeScaling(kind, factor, train_len); got {scaling!r}")
    if scaling is not None and scaling.kind == "ntk" and dim == 2:
        # base * s^(dim / (dim - 2)): one frequency pair leaves nothing to rescale but the fastest
        raise ValueError("NTK-aware RoPE scaling needs a query width > 2 (it divides by dim - 2); got 2")


def rope_frequencies(dim: int, base: float = 10000.0, scaling: RopeScaling | None = None, device=None):
    """theta_i = base^(-2i/dim), i < dim/2, changed by ``scaling`` (see RopeScaling). Shape (dim/2,)."""
    _check_rope_args(dim, base, scaling)
    exponents = torch.arange(0, dim, 2, device=device, dtype=torch.float32) / dim
    if scaling is None:
        return base ** -exponents
    s = scaling.factor
    if scaling.kind == "ntk":
        return (base * s ** (dim / (dim - 2))) ** -exponents
    theta = base ** -exponents
    if scaling.kind == "pi":
        return theta / s
    turns = scaling.train_len * theta / (2 * math.pi)
    gamma = ((turns - YARN_ALPHA) / (YARN_BETA - YARN_ALPHA)).clamp(0, 1)
    return (1 - gamma) * theta / s + gamma * theta


def yarn_logit_scale(factor: float) -> float:
    """YaRN's attention temperature: logits x (0.1 ln s + 1)^2."""
    return (0.1 * math.log(factor) + 1) ** 2


def rope_angles(T: int, dim: int, base: float = 10000.0, device=None, scaling: RopeScaling | None = None):
    """theta_{t,i} = t * theta_i for position t and frequency i < dim/2. Shape (T, dim/2)."""
    integer("T", T, at_least=0)
    positions = torch.arange(T, device=device, dtype=torch.float32)
    return torch.outer(positions, rope_frequencies(dim, base, scaling, device))


def apply_rope(x: torch.Tensor, angles: torch.Tensor) -> torch.Tensor:
    """Rotate each pair (x_{2i}, x_{2i+1}) at position t by theta_{t,i}; then q_m . k_n depends on m - n only.

    x: (..., T, dim); angles: (T, dim/2).
    """
    if angles.shape != (x.shape[-2], x.shape[-1] // 2):
        raise ValueError(f"angles must be (T, dim/2) = {(x.shape[-2], x.shape[-1] // 2)} for x of shape "
                         f"{tuple(x.shape)}; got {tuple(angles.shape)}")
    x1, x2 = x[..., 0::2], x[..., 1::2]
    cos, sin = angles.cos().to(x), angles.sin().to(x)
    rotated = torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)
    return rotated.flatten(-2)


# ----------------------------------------------------------------------------
# Config and blocks
# ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Config:
    """Everything that decides the architecture. Invalid combinations fail here, at construction.

    Frozen: a field changed afterwards would skip these checks, and change what a model already
    built from the config computes; make another with ``dataclasses.replace(config, n_head=2)``."""

    vocab_size: int
    block: str = "transformer"   # "gau" or "transformer"
    d_model: int = 64
    n_layer: int = 2
    n_head: int = 4              # transformer only; a GAU has one head
    d_qk: int = 64               # GAU: the shared width s of z, q and k
    expansion: int = 2           # GAU: e = expansion * d_model; transformer: MLP width factor is 4
    norm: str = "softmax"        # "softmax", "relu2" or "relu2_norm"
    n: int | str | None = None   # relu2 only: a positive int, "length" or "row"
    logn_base: float | None = None
    pos: str = "rope"            # "rope" or "nope"
    causal: bool = True
    max_len: int = 8192          # the longest sequence the model accepts
    rope_base: float = 10000.0
    rope_scaling: RopeScaling | None = None  # PI, NTK or YaRN, to run RoPE past its training length
    learn_temperature: bool = False  # train model.temperature with the rest (with logn_base: Scalable-Softmax)

    def __post_init__(self):
        plain_fields(self)
        for name in ("vocab_size", "d_model", "n_layer", "n_head", "d_qk", "expansion", "max_len"):
            positive_int(f"Config.{name}", getattr(self, name))
        one_of("block", self.block, BLOCKS)
        one_of("pos", self.pos, POSITIONS)
        boolean("Config.causal", self.causal)
        boolean("Config.learn_temperature", self.learn_temperature)
        if self.block == "gau" and self.n_head != 1:
            raise ValueError(f"a GAU has a single head; set n_head=1 (got n_head={self.n_head})")
        if self.block == "transformer" and self.d_model % self.n_head:
            raise ValueError(f"d_model={self.d_model} is not divisible by n_head={self.n_head}")
        self._refuse_ignored_settings()
        check_attention_setting(self.norm, self.n, self.logn_base)
        if isinstance(self.rope_scaling, dict):  # as read back from to_dict()
            if set(self.rope_scaling) != {"kind", "factor", "train_len"}:
                raise ValueError("Config.rope_scaling as a dict needs exactly the keys 'kind', 'factor', "
                                 f"'train_len'; got {self.rope_scaling!r}")
            object.__setattr__(self, "rope_scaling", RopeScaling(**self.rope_scaling))  # frozen: set once, here
        if self.rope_scaling is not None and self.pos != "rope":
            raise ValueError(f"rope_scaling={self.rope_scaling} needs pos='rope'; got pos={self.pos!r}")
        if self.pos == "rope":
            head_dim = self.d_qk if self.block == "gau" else self.d_model // self.n_head
            _check_rope_args(head_dim, self.rope_base, self.rope_scaling)

    def _refuse_ignored_settings(self):
        """A field the chosen block or position does not use must keep its default: set to
        anything else it would do nothing, silently (and still change the cache key)."""
        ignored = {}  # field -> the setting that ignores it
        if self.block == "transformer":
            ignored.update(d_qk="block='transformer'", expansion="block='transformer'")
        if self.pos == "nope":
            ignored.update(rope_base="pos='nope'")
        defaults = {f.name: f.default for f in fields(self)}
        for name, setting in ignored.items():
            if getattr(self, name) != defaults[name]:
                raise ValueError(f"Config.{name}={getattr(self, name)!r} has no effect with {setting}; "
                                 f"leave it at its default {defaults[name]!r}")

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> "Config":
        """The inverse of to_dict(). A misspelled key is an error, not a silently default field."""
        if not isinstance(values, dict):
            raise ValueError(f"Config.from_dict needs a dict (as to_dict() returns); got {type(values).__name__}")
        known = [f.name for f in fields(cls)]
        unknown = [key for key in values if key not in known]
        if unknown:
            raise ValueError(f"Config.from_dict: unknown key(s) {', '.join(map(repr, unknown))}; "
                             f"allowed: {', '.join(known)}")
        if "vocab_size" not in values:
            raise ValueError("Config.from_dict: the key 'vocab_size' is required")
        return cls(**values)


class GAU(nn.Module):
    """Gated Attention Unit (FLASH, Hua et al. 2022), one head, pre-norm and residual.

    u = silu(X W_u), v = silu(X W_v)  (width e)
    z = silu(X W_z)                    (width s)
    q = gamma_q * z + beta_q,  k = gamma_k * z + beta_k
    A = relu^2(q k^T / sqrt(s)) / n    (or any norm of attend)
    O = (u * A v) W_o
    """

    def __init__(self, config: Config):
        super().__init__()
        d, e, s = config.d_model, config.expansion * config.d_model, config.d_qk
        self.ln = nn.LayerNorm(d)
        self.to_uv = nn.Linear(d, 2 * e)
        self.to_z = nn.Linear(d, s)
        # Scales start near 1: with FLASH's std 0.02 the relu^2 scores start near 0
        # and the model gets stuck above the bigram loss.
        self.gamma = nn.Parameter(1 + 0.1 * torch.randn(2, s))
        self.beta = nn.Parameter(torch.zeros(2, s))
        self.to_out = nn.Linear(e, d)

    def forward(self, x, attn: dict, angles, inspect=None):
        h = self.ln(x)
        u, v = F.silu(self.to_uv(h)).chunk(2, dim=-1)
        z = F.silu(self.to_z(h))
        q, k = (z.unsqueeze(-2) * self.gamma + self.beta).unbind(dim=-2)
        if angles is not None:
            q, k = apply_rope(q, angles), apply_rope(k, angles)
        # One head: add H = 1 for attend.
        q, k, v = (t.unsqueeze(1) for t in (q, k, v))
        out, extra = _attend_or_inspect(q, k, v, attn, inspect)
        return x + self.to_out(u * out.squeeze(1)), extra


class TransformerBlock(nn.Module):
    """Pre-norm Transformer block: x + MHA(LN(x)), then x + MLP(LN(x)) with a 4x GELU MLP."""

    def __init__(self, config: Config):
        super().__init__()
        d = config.d_model
        self.n_head = config.n_head
        self.ln_attn = nn.LayerNorm(d)
        self.to_qkv = nn.Linear(d, 3 * d)
        self.to_out = nn.Linear(d, d)
        self.ln_mlp = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

    def forward(self, x, attn: dict, angles, inspect=None):
        qkv = rearrange(self.to_qkv(self.ln_attn(x)), "b t (three h d) -> three b h t d",
                        three=3, h=self.n_head)
        q, k, v = qkv.unbind(0)
        if angles is not None:
            q, k = apply_rope(q, angles), apply_rope(k, angles)
        out, extra = _attend_or_inspect(q, k, v, attn, inspect)
        x = x + self.to_out(rearrange(out, "b h t d -> b t (h d)"))
        return x + self.mlp(self.ln_mlp(x)), extra


def _attend_or_inspect(q, k, v, attn: dict, inspect):
    """attend(), plus what the caller asked to inspect: 'weights', 'scores' or None."""
    if inspect == "weights":
        return _attend(q, k, v, **attn, return_weights=True)
    out = _attend(q, k, v, **attn)
    if inspect == "scores":
        return out, attention_scores(q, k, causal=attn["causal"], scale=attn["scale"],
                                     logn_base=attn["logn_base"], row_scale=attn["row_scale"])
    return out, None


# ----------------------------------------------------------------------------
# The language model
# ----------------------------------------------------------------------------

_FROM_CONFIG = object()  # "not given": use the config's value


class LM(nn.Module):
    """A character-level LM: embedding, n_layer blocks, final LayerNorm, tied output head.

    model(idx) -> logits (B, T, vocab_size). The same weights can be evaluated under
    another attention setting: model(idx, n="length"), model(idx, n=128),
    model(idx, logn_base=64). ``model.temperature`` (n_layer, n_head) is every
    layer's ``scale``: the logits are *multiplied* by it (an inverse temperature, lambda in
    the NoPE paper; > 1 sharpens attention). It starts at 1 and is frozen unless a caller
    unfreezes it. (Not to be confused with generate(temperature=), which *divides* the
    output logits when sampling.)
    """

    def __init__(self, config: Config):
        super().__init__()
        self.config = config
        block = GAU if config.block == "gau" else TransformerBlock
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.blocks = nn.ModuleList(block(config) for _ in range(config.n_layer))
        self.ln_out = nn.LayerNorm(config.d_model)
        self.temperature = nn.Parameter(torch.ones(config.n_layer, config.n_head),
                                        requires_grad=config.learn_temperature)
        nn.init.normal_(self.embed.weight, std=0.02)
        # The symbols of the tokenizer it was trained with, set by pretrained(): measuring it on a
        # corpus of other symbols is then an error (data.check_vocabulary). None: not checked.
        self.vocabulary: str | None = None

    @property
    def device(self) -> torch.device:
        """Where the weights live: every tensor fed to the model must be built on (or moved to) it."""
        return self.embed.weight.device

    @property
    def head_dim(self) -> int:
        c = self.config
        return c.d_qk if c.block == "gau" else c.d_model // c.n_head

    def num_parameters(self) -> int:
        return sum(p.numel() for name, p in self.named_parameters() if name != "temperature")

    def forward(self, idx, *, n=_FROM_CONFIG, logn_base=_FROM_CONFIG, rope_scaling=_FROM_CONFIG,
                position_scale=None, return_weights=False, return_scores=False):
        """Logits (B, T, vocab). With return_weights (or return_scores) also a list, one
        (B, H, T, T) tensor per layer, of attention weights (or logits S).

        n, logn_base, rope_scaling: evaluate these weights under another setting (None turns
        logn_base or rope_scaling off). position_scale=(a, L): multiply row i's logits by
        1 + a ln(n_i / L) past the training length L (position_temperature), on top of the rest."""
        c = self.config
        if return_weights and return_scores:
            raise ValueError("ask for return_weights or return_scores, not both")
        if not torch.is_tensor(idx) or idx.dtype not in (torch.int64, torch.int32):
            got = idx.dtype if torch.is_tensor(idx) else type(idx).__name__
            raise ValueError(f"idx must be a LongTensor of token ids; got {got}")
        if idx.ndim != 2:
            raise ValueError(f"idx must be a (B, T) LongTensor of token ids; got shape {tuple(idx.shape)}")
        if idx.device != self.device:
            raise ValueError(f"idx is on {idx.device} but the model is on {self.device}; "
                             "build it there or move it with idx.to(model.device)")
        T = idx.shape[1]
        if T > c.max_len:
            raise ValueError(f"sequence length {T} exceeds this model's max_len={c.max_len}")
        # One host-device sync for both checks: an id out of range is otherwise torch's bare
        # "index out of range in self", a nan temperature zeros or nan weights, silently.
        if not (((idx >= 0) & (idx < c.vocab_size)).all() & torch.isfinite(self.temperature).all()).item():
            self._explain_bad_input(idx)
        attn = dict(
            norm=c.norm,
            causal=c.causal,
            n=c.n if n is _FROM_CONFIG else n,
            logn_base=c.logn_base if logn_base is _FROM_CONFIG else logn_base,
            row_scale=None,
        )
        if position_scale is not None:
            if not isinstance(position_scale, tuple) or len(position_scale) != 2:
                raise ValueError(f"position_scale must be a pair (a, L): slope and training length; got {position_scale!r}")
            attn["row_scale"] = position_temperature(T, *position_scale, c.causal, idx.device)
        check_attention_setting(c.norm, attn["n"], attn["logn_base"])  # once, not in every layer
        inspect = "weights" if return_weights else "scores" if return_scores else None
        scaling = c.rope_scaling if rope_scaling is _FROM_CONFIG else rope_scaling
        if scaling is not None and c.pos != "rope":
            raise ValueError(f"rope_scaling={scaling} needs a RoPE model; this one has pos={c.pos!r}")
        angles = None
        temperature = self.temperature
        if c.pos == "rope":
            angles = rope_angles(T, self.head_dim, c.rope_base, idx.device, scaling)
            if scaling is not None and scaling.kind == "yarn":
                temperature = temperature * yarn_logit_scale(scaling.factor)
        x = self.embed(idx)
        inspected = []
        for layer, block in enumerate(self.blocks):
            x, extra = block(x, {**attn, "scale": temperature[layer]}, angles, inspect)
            inspected.append(extra)
        logits = self.ln_out(x) @ self.embed.weight.T
        if return_weights or return_scores:
            return logits, inspected
        return logits

    def _explain_bad_input(self, idx):
        """Raise the ValueError that forward()'s combined check found a reason for."""
        vocab = self.config.vocab_size
        bad = idx[(idx < 0) | (idx >= vocab)]
        if bad.numel():
            raise ValueError(f"token id {bad[0].item()} is out of range: ids must be in [0, {vocab}) "
                             f"(vocab_size={vocab}); were they made by another corpus's tokenizer than the "
                             "model was trained with?")
        raise ValueError(f"model.temperature must be finite; got {self.temperature.tolist()}")
