"""The model in one file, read top to bottom: Config, attention, RoPE, the blocks, the LM. Each
equation of a lesson is one short function, the equation in its docstring; argument checks live in
``validation.py`` (``check.*``). Shapes: B batch, H heads, T length, d query/key width (the lessons'
d_k), e value width; i queries, j keys. lambda (``LM.temperature``) *multiplies* the logits."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace

import torch
import torch.nn.functional as F
from einops import rearrange
from torch import nn

from . import validation as check
from .validation import plain_fields


# --- Config ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RopeScaling:
    """RoPE at ``factor`` s = target / ``train_len`` L. 'pi': every theta_i -> theta_i / s (t -> t / s);
    'ntk': base -> base * s^(dim / (dim - 2)) (the fastest pair kept, the slowest / s); 'yarn', as its
    authors' code (and Hugging Face's, and Wang et al.'s): pair i kept for i <= floor(c(32)), theta_i / s
    for i >= ceil(c(1)), a ramp linear in i between, where c(r) = dim ln(L / (2 pi r)) / (2 ln base)
    is the pair turning r times over L (clamped to [0, dim - 1]); logits x (0.1 ln s + 1)^2. (The
    YaRN paper's equation ramps linearly in r: another rule.)"""

    kind: str
    factor: float
    train_len: int

    def __post_init__(self):
        plain_fields(self)
        check.rope_scaling(self)


@dataclass(frozen=True)
class Config:
    """Everything that decides the architecture, checked here; frozen: ``replace(config, n_head=2)``."""

    vocab_size: int
    block: str = "transformer"   # "gau" or "transformer"
    d_model: int = 64
    n_layer: int = 2
    n_head: int = 4              # transformer only; a GAU has one head
    d_qk: int = 64               # GAU: the shared width d_k of z, q and k
    expansion: int = 2           # GAU: e = expansion * d_model; transformer: MLP width factor is 4
    norm: str = "softmax"        # "softmax", "relu2" or "relu2_norm"
    n: int | str | None = None   # relu2 only: a positive int, "length" or "row"
    logn_base: float | None = None
    pos: str = "rope"            # "rope" or "nope"
    causal: bool = True
    max_len: int = 8192          # the longest sequence the model accepts
    rope_base: float = 10000.0
    rope_scaling: RopeScaling | None = None  # PI, NTK or YaRN, to run RoPE past its training length
    learn_temperature: bool = False  # train lambda with the rest (with logn_base: Scalable-Softmax)

    def __post_init__(self):
        plain_fields(self)
        if isinstance(self.rope_scaling, dict):  # as read back from to_dict(); frozen: set once, here
            check.rope_scaling_dict(self.rope_scaling)
            object.__setattr__(self, "rope_scaling", RopeScaling(**self.rope_scaling))
        check.config(self, RopeScaling)

    @property
    def head_dim(self) -> int:
        return self.d_qk if self.block == "gau" else self.d_model // self.n_head

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> "Config":
        check.config_dict(values, [f.name for f in fields(cls)])  # a misspelled key is an error
        return cls(**values)


# --- Attention: every variant is a choice of how scores become weights ----------------------------
def keys_seen(T: int, causal: bool, device=None, dtype=torch.float32) -> torch.Tensor:
    """n_i, the number of keys query i sees: i + 1 when causal, T when not. Shape (T,)."""
    check.integer("T", T, at_least=0)
    if causal:
        return torch.arange(1, T + 1, device=device, dtype=dtype)
    return torch.full((T,), float(T), device=device, dtype=dtype)


def logn_factor(T: int, base: float, causal: bool, device=None, dtype=torch.float32) -> torch.Tensor:
    """Entropy invariance: row i's logits x log(n_i) / log(L), L = base. Shape (T,)."""
    check.finite_number("logn_base", base, above=1, why="the training length L")
    return keys_seen(T, causal, device, dtype).log() / math.log(base)


def position_temperature(T: int, slope: float, L: int, causal: bool, device=None,
                         dtype=torch.float32) -> torch.Tensor:
    """The per-position rule of Wang et al.'s code: row i's logits x lambda_i = 1 + c ln(n_i / L)
    where n_i > L, and x 1 within the training length L (c = slope). Shape (T,)."""
    check.position_rule(slope, L, T, dtype)
    return 1 + slope * (keys_seen(T, causal, device, dtype) / L).log().clamp(min=0)


def logit_multiplier(T: int, *, scale=None, logn_base=None, row_scale=None, causal=True, like=None):
    """m_hi = lambda_h (``scale``: one, or one per head) x log(n_i) / log(L) x r_i (``row_scale``),
    like ``like`` (dtype, device), broadcasting to (B, H, T, 1); 1 if none. Folded into q."""
    factors = []
    if scale is not None:
        factors.append(torch.as_tensor(scale, dtype=like.dtype, device=like.device).view(-1, 1, 1))
    if logn_base is not None:
        factors.append(logn_factor(T, logn_base, causal, like.device, like.dtype).view(-1, 1))
    if row_scale is not None:
        factors.append(row_scale.to(like).view(-1, 1))
    return math.prod(factors)


def attention_scores(q, k, *, causal=True) -> torch.Tensor:
    """Logits S_ij = q_i . k_j / sqrt(d), q holding its multiplier; -inf where j is not visible.
    ``'b h i d, b h j d -> b h i j'``: (B, H, T, T)."""
    scores = torch.einsum("b h i d, b h j d -> b h i j", q, k) / math.sqrt(q.shape[-1])
    if causal:
        T = q.shape[2]
        future = torch.ones(T, T, dtype=torch.bool, device=q.device).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
    return scores


def relu2_divisor(T: int, n, causal: bool, device=None) -> torch.Tensor:
    """Row i of relu^2 attention is divided by n fixed, T (n='length') or n_i (n='row'). (T, 1)."""
    if n == "row":
        return keys_seen(T, causal, device).view(T, 1)
    return torch.full((T, 1), float(T if n == "length" else n), device=device)


def relu2_weights(scores: torch.Tensor, n, causal: bool) -> torch.Tensor:
    """a_ij = relu(S_ij)^2 / n (see relu2_divisor), as (relu(S_ij) / sqrt(n))^2: the same number,
    which does not overflow where relu(S)^2 alone does."""
    root_n = relu2_divisor(scores.shape[-1], n, causal, scores.device).sqrt().to(scores)
    return (F.relu(scores) / root_n).square()


def relu_over_row_peak(scores: torch.Tensor):
    """(r, m): m_i = max_j relu(S_ij) and r_ij = relu(S_ij) / m_i, in [0, 1] (0 where m_i = 0)."""
    relu = F.relu(scores)
    peak = relu.amax(dim=-1, keepdim=True)
    return relu / torch.where(peak > 0, peak, torch.ones_like(peak)), peak


def relu2_norm_weights(scores: torch.Tensor) -> torch.Tensor:
    """a_ij = relu(S_ij)^2 / Z_i, Z_i = sum_j relu(S_ij)^2 (a row with Z_i = 0 gets 0), as
    r_ij^2 / sum_j r_ij^2 (relu_over_row_peak): the same number, and nothing overflows."""
    r = relu_over_row_peak(scores)[0].square()
    z = r.sum(dim=-1, keepdim=True)
    return r / torch.where(z > 0, z, torch.ones_like(z))


def attention_weights(scores: torch.Tensor, *, norm="softmax", causal=True, n=None) -> torch.Tensor:
    """Weights A from logits S: softmax a_ij = exp(S_ij) / sum_j exp(S_ij), relu2 or relu2_norm."""
    check.attention_setting(norm, n, None)
    return _weights(scores, norm, causal, n)


def _weights(scores, norm, causal, n):  # attention_weights on a setting checked before
    if norm == "softmax":
        return scores.softmax(dim=-1)
    return relu2_weights(scores, n, causal) if norm == "relu2" else relu2_norm_weights(scores)


def attend(q, k, v, *, norm="softmax", causal=True, n=None, scale=None, logn_base=None, row_scale=None,
           return_weights=False):
    """out_i = sum_j a_ij v_j, a = norm(S), S_ij = lambda * (log n_i / log L) * r_i * q_i . k_j / sqrt(d).

    norm='softmax': softmax_j(S_ij) over the visible keys;  'relu2': relu(S_ij)^2 / n (n a positive
    int, 'length' = T or 'row' = n_i);  'relu2_norm': relu(S_ij)^2 / sum_j relu(S_ij)^2.
    q, k: (B, H, T, d); v: (B, H, T, e). scale (lambda): None, a number or a (H,) tensor, *on top
    of* 1 / sqrt(d) (F.scaled_dot_product_attention's ``scale`` replaces it); logn_base: L or None;
    row_scale: None or a (T,) tensor r (position_temperature). Returns out (B, H, T, e), or with
    return_weights (out, weights (B, H, T, T))."""
    check.attend_args(q, k, v, norm, n, scale, logn_base, causal, row_scale)
    q = q * logit_multiplier(q.shape[2], scale=scale, logn_base=logn_base, row_scale=row_scale,
                             causal=causal, like=q)
    out, weights = attention(q, k, v, norm=norm, causal=causal, n=n,
                             inspect="weights" if return_weights else None)
    return (out, weights) if return_weights else out


def attention(q, k, v, *, norm, causal, n, inspect=None):
    """attend() with its multiplier folded into q, as the blocks call it (LM.forward checked the
    setting once): (out, the 'weights' A or 'scores' S that ``inspect`` asks for, else None)."""
    if norm == "softmax" and inspect != "weights":
        out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        return out, attention_scores(q, k, causal=causal) if inspect == "scores" else None
    scores = attention_scores(q, k, causal=causal)
    weights = _weights(scores, norm, causal, n)
    out = torch.einsum("b h i j, b h j e -> b h i e", weights, v)
    return out, {"weights": weights, "scores": scores}.get(inspect)


# --- Rotary position embedding (RoPE) --------------------------------------------------------------
YARN_BETA_FAST, YARN_BETA_SLOW = 32, 1  # YaRN keeps pairs turning > 32 times over L, interpolates < 1


def rope_frequencies(dim: int, base: float = 10000.0, scaling: RopeScaling | None = None, device=None,
                     dtype=torch.float32):
    """theta_i = base^(-2i/dim), i < dim/2, changed by ``scaling`` (see RopeScaling). (dim/2,)."""
    check.rope_args(dim, base, scaling, RopeScaling)
    exponents = torch.arange(0, dim, 2, device=device, dtype=dtype) / dim
    if scaling is None:
        return base ** -exponents
    s = scaling.factor
    if scaling.kind == "ntk":
        return (base * s ** (dim / (dim - 2))) ** -exponents
    theta = base ** -exponents
    if scaling.kind == "pi":
        return theta / s

    def pair_turning(r):  # c(r)
        return dim * math.log(scaling.train_len / (2 * math.pi * r)) / (2 * math.log(base))
    low = max(math.floor(pair_turning(YARN_BETA_FAST)), 0)
    high = min(math.ceil(pair_turning(YARN_BETA_SLOW)), dim - 1)
    ramp = ((torch.arange(dim // 2, device=device, dtype=dtype) - low) / ((high - low) or 0.001)).clamp(0, 1)
    return theta / s * ramp + theta * (1 - ramp)


def yarn_logit_scale(factor: float) -> float:
    """YaRN's attention temperature: logits x (0.1 ln s + 1)^2."""
    return (0.1 * math.log(factor) + 1) ** 2


def rope_angles(T: int, dim: int, base: float = 10000.0, device=None, scaling: RopeScaling | None = None,
                dtype=torch.float32):
    """theta_{t,i} = t * theta_i for position t and frequency i < dim/2. Shape (T, dim/2)."""
    check.integer("T", T, at_least=0)
    positions = torch.arange(T, device=device, dtype=dtype)
    return torch.outer(positions, rope_frequencies(dim, base, scaling, device, dtype))


def apply_rope(x: torch.Tensor, angles: torch.Tensor) -> torch.Tensor:
    """Rotate (x_{2i}, x_{2i+1}) at position t by theta_{t,i}, x (..., T, dim): q_m . k_n sees m - n."""
    check.rope_shapes(x, angles)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    cos, sin = angles.cos().to(x), angles.sin().to(x)
    rotated = torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)
    return rotated.flatten(-2)


# --- Blocks: (x, setting, RoPE angles, the layer's logit multiplier, inspect) -> (x, inspected) ---
class GAU(nn.Module):
    """Gated Attention Unit (FLASH, Hua et al. 2022), one head, pre-norm and residual:
    u = silu(X W_u), v = silu(X W_v) (width e);  z = silu(X W_z) (width d_k, FLASH's s);
    q = gamma_q * z + beta_q,  k = gamma_k * z + beta_k;
    A = relu^2(q k^T / sqrt(d_k)) / n (or any norm of attend);  O = (u * A v) W_o.
    A is Su's form (his posts, bert4keras); FLASH's pseudocode and lucidrains' FLASH-pytorch
    compute relu(q k^T / n + b)^2, with a relative position bias b."""

    def __init__(self, config: Config):
        super().__init__()
        d, e, s = config.d_model, config.expansion * config.d_model, config.d_qk
        self.ln = nn.LayerNorm(d)
        self.to_uv = nn.Linear(d, 2 * e)
        self.to_z = nn.Linear(d, s)
        # Scales start near 1: with FLASH's std 0.02 relu^2 scores start near 0, stuck above the bigram loss
        self.gamma = nn.Parameter(1 + 0.1 * torch.randn(2, s))
        self.beta = nn.Parameter(torch.zeros(2, s))
        self.to_out = nn.Linear(e, d)

    def forward(self, x, c: Config, angles, multiplier, inspect=None):
        h = self.ln(x)
        u, v = F.silu(self.to_uv(h)).chunk(2, dim=-1)                  # (B, T, e) each
        z = F.silu(self.to_z(h))                                        # (B, T, d_k)
        q, k = (z.unsqueeze(-2) * self.gamma + self.beta).unbind(dim=-2)
        if angles is not None:
            q, k = apply_rope(q, angles), apply_rope(k, angles)
        q, k, v = (t.unsqueeze(1) for t in (q, k, v))                   # one head: (B, 1, T, .)
        out, seen = attention(q * multiplier, k, v, norm=c.norm, causal=c.causal, n=c.n, inspect=inspect)
        return x + self.to_out(u * out.squeeze(1)), seen


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

    def forward(self, x, c: Config, angles, multiplier, inspect=None):
        qkv = rearrange(self.to_qkv(self.ln_attn(x)), "b t (three h d) -> three b h t d",
                        three=3, h=self.n_head)
        q, k, v = qkv.unbind(0)                                         # (B, H, T, d) each
        if angles is not None:
            q, k = apply_rope(q, angles), apply_rope(k, angles)
        out, seen = attention(q * multiplier, k, v, norm=c.norm, causal=c.causal, n=c.n, inspect=inspect)
        x = x + self.to_out(rearrange(out, "b h t d -> b t (h d)"))
        return x + self.mlp(self.ln_mlp(x)), seen


# --- The language model ----------------------------------------------------------------------------
class LM(nn.Module):
    """A character-level LM: embedding, n_layer blocks, final LayerNorm, tied output head. The same
    weights run under another setting: model(idx, n="length"), model(idx, logn_base=64), ...
    ``model.temperature`` (n_layer, n_head): lambda, 1 and frozen unless Config.learn_temperature."""

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
        self.vocabulary: str | None = None  # the symbols it was trained on (pretrained sets them)

    @property
    def device(self) -> torch.device:
        return self.embed.weight.device

    def num_parameters(self) -> int:
        return sum(p.numel() for name, p in self.named_parameters() if name != "temperature")

    def forward(self, idx, *, position_scale=None, return_weights=False, return_scores=False, **setting):
        """Logits (B, T, vocab); with return_weights (or return_scores) also one (B, H, T, T) map
        per layer of weights A (or logits S). ``setting``: n, logn_base or rope_scaling (None: off).
        position_scale=(c, L): row i's logits x 1 + c ln(n_i / L) past L (position_temperature)."""
        check.lm_input(self, idx, setting, position_scale, return_weights, return_scores)
        if idx.device.type == "cpu" or not self.training:  # on a GPU a sync: not in a training step,
            check.lm_values(self, idx)                        # whose ids are the corpus's, its loss checked
        c = replace(self.config, **setting) if setting else self.config  # Config checks the values
        T = idx.shape[1]
        lam, angles, row_scale = self.temperature, None, None
        if c.pos == "rope":
            angles = rope_angles(T, c.head_dim, c.rope_base, idx.device, c.rope_scaling, lam.dtype)
            if c.rope_scaling is not None and c.rope_scaling.kind == "yarn":
                lam = lam * yarn_logit_scale(c.rope_scaling.factor)
        if position_scale is not None:
            row_scale = position_temperature(T, *position_scale, c.causal, idx.device, lam.dtype)
        rows = logit_multiplier(T, logn_base=c.logn_base, row_scale=row_scale, causal=c.causal, like=lam)
        inspect = "weights" if return_weights else "scores" if return_scores else None
        x, maps = self.embed(idx), []                                   # (B, T, d_model)
        for block, lam_of_layer in zip(self.blocks, lam):
            x, seen = block(x, c, angles, lam_of_layer.view(-1, 1, 1) * rows, inspect)  # m: (H, T, 1)
            maps.append(seen)
        logits = self.ln_out(x) @ self.embed.weight.T                  # (B, T, vocab)
        return (logits, maps) if inspect else logits
