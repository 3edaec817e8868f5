"""The model in one file, read top to bottom: Config, attention, RoPE, the blocks, the LM. Each
equation of a lesson is one short function, the equation in its docstring; argument checks live in
``validation.py`` (``check.*``), one line at a public door. Shapes: B batch, H heads, T length,
d_k query/key width, e value width; i queries, j keys. The multiplier lambda (``LM.multiplier``)
and the row factors r_i (the log n factor, the per-position rule) multiply the logits:
S_ij = lambda_h r_i q_i . k_j / sqrt(d_k)."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields, replace

import torch
import torch.nn.functional as F
from einops import rearrange
from torch import nn

from . import validation as check
from .validation import plain_fields

YARN_BETA_FAST, YARN_BETA_SLOW = 32, 1  # YaRN keeps pairs turning > 32 times over L, interpolates < 1


# --- Config ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class RopeScaling:
    """RoPE at ``factor`` s = target / ``train_len`` L, as three rules for the frequencies theta_i:
    'pi':   theta_i' = theta_i / s;
    'ntk':  theta_i' = (base * s^(d_k / (d_k - 2)))^(-2i / d_k);
    'yarn': theta_i' = (1 - g_i) theta_i + g_i theta_i / s, g_i = clamp((i - lo) / (hi - lo), 0, 1),
            lo = floor(c(32)), hi = ceil(c(1)), c(r) = d_k ln(L / (2 pi r)) / (2 ln base) the pair
            turning r times over L; and the logits of its RoPE layers x (0.1 ln s + 1)^2.
    YaRN as its authors' code (and Hugging Face's, and Wang et al.'s) has it; the YaRN paper's
    equation ramps g linearly in r instead."""
    kind: str
    factor: float
    train_len: int

    def __post_init__(self):
        plain_fields(self)
        check.rope_scaling(self)

    @property
    def logit_factor(self) -> float:
        """YaRN's attention temperature (0.1 ln s + 1)^2 on a RoPE layer's logits; 1 for PI, NTK."""
        return (0.1 * math.log(self.factor) + 1) ** 2 if self.kind == "yarn" else 1.0

    def frequencies(self, exponents: torch.Tensor, base: float) -> torch.Tensor:
        """theta_i' from the exponents 2i / d_k, by the rule of ``kind`` (above)."""
        dim, s = 2 * len(exponents), self.factor
        if self.kind == "ntk":
            return (base * s ** (dim / (dim - 2))) ** -exponents
        theta = base ** -exponents
        if self.kind == "pi":
            return theta / s

        def pair_turning(r):  # c(r)
            return dim * math.log(self.train_len / (2 * math.pi * r)) / (2 * math.log(base))
        low = max(math.floor(pair_turning(YARN_BETA_FAST)), 0)
        high = min(math.ceil(pair_turning(YARN_BETA_SLOW)), dim - 1)
        i = torch.arange(dim // 2, device=exponents.device, dtype=exponents.dtype)
        ramp = ((i - low) / ((high - low) or 0.001)).clamp(0, 1)
        return theta / s * ramp + theta * (1 - ramp)


@dataclass(frozen=True)
class Config:
    """Everything that decides the architecture, checked here; frozen: ``replace(config, n_head=2)``.
    ``n``, ``logn_base``, ``position_rule`` and ``rope_scaling`` may also change per call:
    ``model(idx, logn_base=64)`` runs the same weights under that setting."""

    vocab_size: int
    block: str = "transformer"   # "gau" or "transformer"
    d_model: int = 64
    n_layer: int = 2
    n_head: int = 4              # transformer only; a GAU has one head
    d_k: int = 64                # GAU only: the shared width of z, q and k (FLASH calls it s)
    expansion: int = 2           # GAU only: e = expansion * d_model (a Transformer's MLP is 4x)
    norm: str = "softmax"        # "softmax", "relu2" or "relu2_norm"
    n: int | str | None = None   # relu2 only: a positive int, "length" or "row"
    logn_base: float | None = None      # L of the log n factor log(n_i) / log(L); None: off
    position_rule: tuple | None = None  # (c, L) of the per-position rule 1 + c ln(n_i / L)
    pos: str | tuple = "rope"    # "rope" or "nope" for every layer, or one per layer: ("rope", "nope")
    window: int | None = None    # RoPE layers see only their last ``window`` keys (sliding window)
    causal: bool = True
    max_len: int = 8192          # the longest sequence the model accepts
    rope_base: float = 10000.0
    rope_scaling: RopeScaling | None = None  # PI, NTK or YaRN, to run RoPE past its training length
    learn_multiplier: bool = False  # train lambda with the rest (with logn_base: Scalable-Softmax)
    sink: bool = False           # softmax only: a learned sink logit per layer and head (gpt-oss)
    gate: bool = False           # transformer only: the output gate sigmoid(LN(x) W_g) (Qiu et al.)
    scale_invariant: float | None = None  # tau of scale-invariant attention (Anson et al.); None: off

    def __post_init__(self):
        plain_fields(self)
        if isinstance(self.rope_scaling, dict):  # as read back from to_dict(); frozen: set once, here
            check.rope_scaling_dict(self.rope_scaling)
            object.__setattr__(self, "rope_scaling", RopeScaling(**self.rope_scaling))
        for name in ("pos", "position_rule"):  # a tuple, as JSON (the cache key) cannot write one
            if isinstance(getattr(self, name), list):
                object.__setattr__(self, name, tuple(getattr(self, name)))
        check.config(self, RopeScaling)

    @property
    def head_dim(self) -> int:
        return self.d_k if self.block == "gau" else self.d_model // self.n_head

    @property
    def layers(self) -> tuple:
        """(position encoding, window) of each layer: a window on the RoPE layers, none on NoPE's."""
        per_layer = (self.pos,) * self.n_layer if isinstance(self.pos, str) else self.pos
        return tuple((pos, self.window if pos == "rope" else None) for pos in per_layer)

    def __repr__(self) -> str:  # without the fields this block and position encoding never read
        unused = check.unused_fields(self)
        shown = (f"{f.name}={getattr(self, f.name)!r}" for f in fields(self) if f.name not in unused)
        return f"Config({', '.join(shown)})"

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: dict) -> "Config":
        check.config_dict(values, [f.name for f in fields(cls)])  # a misspelled key is an error
        return cls(**values)


# --- Attention: every variant is a choice of how scores become weights ----------------------------
def visible(T: int, causal: bool, window: int | None = None, device=None) -> torch.Tensor:
    """Which keys query i sees, (T, T) bool: every j; j <= i when causal; i - w < j <= i with a
    sliding window of w keys (itself included)."""
    i = torch.arange(T, device=device).view(-1, 1)
    j = torch.arange(T, device=device).view(1, -1)
    seen = (j <= i) if causal else torch.ones(T, T, dtype=torch.bool, device=device)
    return seen & (i - j < window) if window is not None else seen


def keys_seen(T: int, causal: bool, window: int | None = None, device=None, dtype=torch.float32):
    """n_i, the number of keys query i sees: i + 1 when causal, T when not, min(i + 1, w) with a
    window of w keys. Shape (T,)."""
    check.integer("T", T, at_least=0)
    if not causal:
        return torch.full((T,), float(T), device=device, dtype=dtype)
    n_i = torch.arange(1, T + 1, device=device, dtype=dtype)
    return n_i.clamp(max=window) if window is not None else n_i


def logn_factor(T: int, L: float, causal: bool, window=None, device=None, dtype=torch.float32):
    """The log n factor of entropy invariance: row i's logits x log(n_i) / log(L). Shape (T,)."""
    check.finite_number("logn_base", L, above=1, why="the training length L")
    return keys_seen(T, causal, window, device, dtype).log() / math.log(L)


def position_rule(T: int, c: float, L: int, causal: bool, window=None, device=None,
                  dtype=torch.float32) -> torch.Tensor:
    """The per-position rule of Wang et al.'s code: row i's logits x 1 + c ln(n_i / L) where
    n_i > L, and x 1 within the training length L. Shape (T,)."""
    check.position_rule(c, L, T, dtype)
    return 1 + c * (keys_seen(T, causal, window, device, dtype) / L).log().clamp(min=0)


def scale_invariant_logits(T: int, tau: float, device=None, dtype=torch.float32):
    """Scale-invariant attention (Anson et al. 2025, eqs. 14-16 with a_0 = 1, m_0 = 0): a logit
    at distance t = i - j becomes a_t S_ij + m_t, a_t = sqrt(1 + 2 ln(1 + t / tau)),
    m_t = -2 ln(1 + t / tau): far keys get sharper logits and a lower floor, so the weight a row
    gives each range of distances holds as the row grows. Returns (a, m), each (T, T)."""
    check.finite_number("scale_invariant", tau, above=0, why="tau, a distance in tokens")
    i = torch.arange(T, device=device, dtype=dtype)
    u = torch.log1p((i.view(-1, 1) - i.view(1, -1)).clamp(min=0) / tau)
    return (1 + 2 * u).sqrt(), -2 * u


def attention_scores(q, k, *, causal=True, window=None, affine=None) -> torch.Tensor:
    """Logits S_ij = q_i . k_j / sqrt(d_k), q holding its multiplier, or a_ij S_ij + b_ij with
    ``affine`` = (a, b), each (T, T); -inf where j is not visible. ``'b h i d, b h j d -> b h i j'``:
    (B, H, T, T)."""
    scores = torch.einsum("b h i d, b h j d -> b h i j", q, k) / math.sqrt(q.shape[-1])
    if affine is not None:
        scale, shift = affine
        scores = scores * scale + shift
    if causal or window is not None:
        scores = scores.masked_fill(~visible(q.shape[2], causal, window, q.device), float("-inf"))
    return scores


def relu2_weights(scores: torch.Tensor, n, causal: bool, window=None) -> torch.Tensor:
    """a_ij = relu(S_ij)^2 / n, row i divided by n fixed, T (n='length') or n_i (n='row'),
    computed as (relu(S_ij) / sqrt(n))^2: the same number, which does not overflow where
    relu(S)^2 alone does."""
    T = scores.shape[-1]
    if n == "row":
        n = keys_seen(T, causal, window, scores.device).view(T, 1)
    else:
        n = torch.full((T, 1), float(T if n == "length" else n), device=scores.device)
    return (F.relu(scores) / n.sqrt().to(scores)).square()


def relu2_norm_weights(scores: torch.Tensor) -> torch.Tensor:
    """a_ij = relu(S_ij)^2 / Z_i, Z_i = sum_j relu(S_ij)^2 (a row with Z_i = 0 gets 0), computed
    as r_ij^2 / sum_j r_ij^2 with r_ij = relu(S_ij) / max_j relu(S_ij) in [0, 1]: the same
    number, and nothing overflows."""
    relu = F.relu(scores)
    peak = relu.amax(dim=-1, keepdim=True)
    r = (relu / torch.where(peak > 0, peak, torch.ones_like(peak))).square()
    z = r.sum(dim=-1, keepdim=True)
    return r / torch.where(z > 0, z, torch.ones_like(z))


def attention_weights(scores: torch.Tensor, *, norm="softmax", causal=True, n=None, window=None,
                      sink=None):
    """Weights A from logits S: softmax a_ij = exp(S_ij) / sum_j exp(S_ij), relu2 or relu2_norm.
    With a sink logit s_h per head (softmax only): a_ij = exp(S_ij) / (exp(s_h) + sum_j exp(S_ij)),
    the softmax over the row and one more column, that column dropped: a row sums to less than 1,
    as relu2 / n with n fixed can (lesson 2). s_h = -inf is softmax without a sink."""
    check.attention_setting(norm, n, None)
    check.sink_norm(sink, norm)
    if sink is not None:
        column = sink.view(1, -1, 1, 1).expand(*scores.shape[:-1], 1).to(scores)
        return torch.cat((scores, column), dim=-1).softmax(dim=-1)[..., :-1]
    if norm == "softmax":
        return scores.softmax(dim=-1)
    return relu2_weights(scores, n, causal, window) if norm == "relu2" else relu2_norm_weights(scores)


def attend(q, k, v, *, norm="softmax", causal=True, n=None, window=None, sink=None, affine=None,
           returns=None):
    """out_i = sum_j a_ij v_j, a_i = norm(S_i) over the keys row i sees, S_ij = q_i . k_j / sqrt(d_k),
    q holding its multiplier (attend(q * m, k, v)). The one way into attention, checked here:
    every block calls it, and so do the lessons and the grader.

    norm='softmax': softmax_j(S_ij);  'relu2': relu(S_ij)^2 / n (n a positive int, 'length' = T or
    'row' = n_i);  'relu2_norm': relu(S_ij)^2 / sum_j relu(S_ij)^2. q, k: (B, H, T, d_k); v:
    (B, H, T, e); window: None or w, each query sees its last w keys; sink: None or (H,) sink
    logits (attention_weights); affine: None or (a, b), each (T, T): logits a_ij S_ij + b_ij.
    Returns (out (B, H, T, e), the (B, H, T, T) map ``returns`` asks for: 'weights' A or 'scores'
    S, else None). Plain softmax runs in PyTorch's fused kernel, which computes the same out as
    the explicit path (tests/test_attend.py compares them)."""
    check.attend_args(q, k, v, norm, n, window, causal, returns, sink, affine)
    if norm == "softmax" and returns != "weights" and sink is None and affine is None:
        mask = None if window is None else visible(q.shape[2], causal, window, q.device)
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=causal and mask is None)
        return out, attention_scores(q, k, causal=causal, window=window) if returns else None
    scores = attention_scores(q, k, causal=causal, window=window, affine=affine)
    weights = attention_weights(scores, norm=norm, causal=causal, n=n, window=window, sink=sink)
    out = torch.einsum("b h i j, b h j e -> b h i e", weights, v)
    return out, {"weights": weights, "scores": scores, None: None}[returns]


# --- Rotary position embedding (RoPE) --------------------------------------------------------------
def rope_angles(T: int, dim: int, base: float = 10000.0, scaling: RopeScaling | None = None,
                device=None, dtype=torch.float32) -> torch.Tensor:
    """theta_{t,i} = t * theta_i at position t, theta_i = base^(-2i/dim) for i < dim/2 (dim = d_k),
    changed by ``scaling`` (RopeScaling.frequencies). Shape (T, dim/2)."""
    check.integer("T", T, at_least=0)
    check.rope_args(dim, base, scaling, RopeScaling)
    exponents = torch.arange(0, dim, 2, device=device, dtype=dtype) / dim
    theta = base ** -exponents if scaling is None else scaling.frequencies(exponents, base)
    return torch.outer(torch.arange(T, device=device, dtype=dtype), theta)


def apply_rope(x: torch.Tensor, angles: torch.Tensor) -> torch.Tensor:
    """Rotate (x_{2i}, x_{2i+1}) at position t by theta_{t,i}, x (..., T, dim): q_m . k_n sees m - n."""
    check.rope_shapes(x, angles)
    x1, x2 = x[..., 0::2], x[..., 1::2]
    cos, sin = angles.cos().to(x), angles.sin().to(x)
    rotated = torch.stack((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)
    return rotated.flatten(-2)


# --- Blocks: each built with its layer's position encoding and window ------------------------------
class Layer(nn.Module):
    """What every block shares: its position encoding ('rope' or 'nope') and window, fixed when
    built, its sink logits (Config.sink: one per head, from 0), and the attention of its q, k, v
    under the call's setting ``c``."""
    logit_map = None  # an experiment's own (a, b) = logit_map(T, device, dtype): scorecard.designed

    def __init__(self, config: Config, pos: str, window: int | None):
        super().__init__()
        self.pos, self.window = pos, window
        self.sink = nn.Parameter(torch.zeros(config.n_head)) if config.sink else None

    def attention(self, q, k, v, c: Config, angles, lam, returns):
        """RoPE on q and k in a RoPE layer (with its scaling's logit factor), then attend(q x m):
        m_hi = lambda_h r_i, r_i the product of the setting's row factors (1 if none), over the
        keys row i sees."""
        if self.pos == "rope":
            q, k = apply_rope(q, angles), apply_rope(k, angles)
            if c.rope_scaling is not None:
                lam = lam * c.rope_scaling.logit_factor
        T, w, rows = q.shape[2], self.window, []
        if c.logn_base is not None:
            rows.append(logn_factor(T, c.logn_base, c.causal, w, lam.device, lam.dtype))
        if c.position_rule is not None:
            rows.append(position_rule(T, *c.position_rule, c.causal, w, lam.device, lam.dtype))
        m = lam.view(-1, 1, 1) * (math.prod(rows).view(-1, 1) if rows else 1)  # (H, T or 1, 1)
        affine = tuple(t.to(q) for t in self.logit_map(T, q.device, q.dtype)) if self.logit_map else None
        if c.scale_invariant is not None:
            affine = scale_invariant_logits(T, c.scale_invariant, q.device, q.dtype)
        return attend(q * m, k, v, norm=c.norm, causal=c.causal, n=c.n, window=w, sink=self.sink,
                      affine=affine, returns=returns)


class GAU(Layer):
    """Gated Attention Unit (FLASH, Hua et al. 2022), one head, pre-norm and residual:
    u = silu(X W_u), v = silu(X W_v) (width e);  z = silu(X W_z) (width d_k, FLASH's s);
    q = gamma_q * z + beta_q,  k = gamma_k * z + beta_k;
    A = relu^2(q k^T / sqrt(d_k)) / n (or any norm of attend);  O = (u * A v) W_o.
    A is Su's form (his posts, bert4keras); FLASH's pseudocode and lucidrains' FLASH-pytorch
    compute relu(q k^T / n + b)^2, with a relative position bias b."""

    def __init__(self, config: Config, pos: str, window: int | None):
        super().__init__(config, pos, window)
        d, e, d_k = config.d_model, config.expansion * config.d_model, config.d_k
        self.ln = nn.LayerNorm(d)
        self.to_uv = nn.Linear(d, 2 * e)
        self.to_z = nn.Linear(d, d_k)
        # Scales start near 1: with FLASH's std 0.02 relu^2 scores start near 0, stuck above the bigram loss
        self.gamma = nn.Parameter(1 + 0.1 * torch.randn(2, d_k))      # rows: gamma_q, gamma_k
        self.beta = nn.Parameter(torch.zeros(2, d_k))                  # rows: beta_q, beta_k
        self.to_out = nn.Linear(e, d)

    def forward(self, x, c: Config, angles, lam, returns=None):
        h = self.ln(x)
        u, v = F.silu(self.to_uv(h)).chunk(2, dim=-1)                  # (B, T, e) each
        z = F.silu(self.to_z(h))                                        # (B, T, d_k)
        q, k = (z.unsqueeze(-2) * self.gamma + self.beta).unbind(dim=-2)
        q, k, v = (t.unsqueeze(1) for t in (q, k, v))                   # one head: (B, 1, T, .)
        out, seen = self.attention(q, k, v, c, angles, lam, returns)
        return x + self.to_out(u * out.squeeze(1)), seen


class TransformerBlock(Layer):
    """Pre-norm Transformer block: x + MHA(LN(x)), then x + MLP(LN(x)) with a 4x GELU MLP. With
    Config.gate, the output gate of Qiu et al. (their G1, elementwise): each channel of the heads'
    output times sigmoid(LN(x) W_g + b_g) before W_o, so a head can write nothing (their gate has
    no b_g; ours has one, so that a test can open it fully: the block without a gate)."""

    def __init__(self, config: Config, pos: str, window: int | None):
        super().__init__(config, pos, window)
        d = config.d_model
        self.n_head = config.n_head
        self.ln_attn = nn.LayerNorm(d)
        self.to_qkv = nn.Linear(d, 3 * d)
        self.to_out = nn.Linear(d, d)
        self.ln_mlp = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))
        self.to_gate = nn.Linear(d, d) if config.gate else None

    def forward(self, x, c: Config, angles, lam, returns=None):
        h = self.ln_attn(x)
        q, k, v = rearrange(self.to_qkv(h), "b t (three h d) -> three b h t d",
                            three=3, h=self.n_head)                     # (B, H, T, d_k) each
        out, seen = self.attention(q, k, v, c, angles, lam, returns)
        out = rearrange(out, "b h t d -> b t (h d)")
        if self.to_gate is not None:
            out = out * torch.sigmoid(self.to_gate(h))
        x = x + self.to_out(out)
        return x + self.mlp(self.ln_mlp(x)), seen


# --- The language model ----------------------------------------------------------------------------
class LM(nn.Module):
    """A character-level LM: embedding, n_layer blocks, final LayerNorm, tied output head. The same
    weights run under another setting: model(idx, n="length"), model(idx, logn_base=64), ...
    ``model.multiplier`` (n_layer, n_head): lambda, 1 and frozen unless Config.learn_multiplier."""

    def __init__(self, config: Config):
        super().__init__()
        self.config = config
        block = GAU if config.block == "gau" else TransformerBlock
        self.embed = nn.Embedding(config.vocab_size, config.d_model)
        self.blocks = nn.ModuleList(block(config, pos, window) for pos, window in config.layers)
        self.ln_out = nn.LayerNorm(config.d_model)
        self.multiplier = nn.Parameter(torch.ones(config.n_layer, config.n_head),
                                       requires_grad=config.learn_multiplier)
        nn.init.normal_(self.embed.weight, std=0.02)
        self.vocabulary: str | None = None  # the symbols it was trained on (pretrained sets them)

    @property
    def device(self) -> torch.device:
        return self.embed.weight.device

    def num_parameters(self) -> int:
        return sum(p.numel() for name, p in self.named_parameters() if name != "multiplier")

    def forward(self, idx, *, returns=None, **setting):
        """Logits (B, T, vocab); with returns='weights' (or 'scores') also one (B, H, T, T) map per
        layer of weights A (or logits S). ``setting``: n, logn_base, position_rule or rope_scaling
        for this call (None: off). The row factors count the keys each layer's rows see, so on a
        windowed layer (w <= L) the per-position rule is 1 and the log n factor is ln(min(i + 1, w))
        / ln(L): they act on every layer, windowed ones included."""
        check.lm_call(self, idx, setting, returns)
        c = replace(self.config, **setting) if setting else self.config  # Config checks the values
        T = idx.shape[1]
        angles = None
        if any(block.pos == "rope" for block in self.blocks):
            angles = rope_angles(T, c.head_dim, c.rope_base, c.rope_scaling, idx.device,
                                 self.multiplier.dtype)
        x, maps = self.embed(idx), []                                   # (B, T, d_model)
        for block, lam in zip(self.blocks, self.multiplier):
            x, seen = block(x, c, angles, lam, returns)
            maps.append(seen)
        logits = self.ln_out(x) @ self.embed.weight.T                  # (B, T, vocab)
        return (logits, maps) if returns else logits
