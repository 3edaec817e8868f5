"""The exercises' grader: each ``grade_*`` function runs a student's function and minilm's own
(or a direct computation, where minilm has none) on several inputs (shapes, causal and not, edge
cases) and prints a friendly line when they agree (as in nn-zero-to-hero's ``cmp``, which prints
one comparison and which the lessons use too). On the first mismatch it raises ``GradeFailed``,
which a notebook shows as one line (which input, what was expected, what came back) and nothing
else: no traceback into this file, no reference code.

What comes back is examined before its values: a tensor where minilm returns one (not a list),
of the right shape, on the CPU, and not of a lower precision than minilm's (float16 would
differ in the fourth digit, and the line says so, not just "expected 1.81884, got 1.81836").
A function that changes its input in place (``weights /= ...``) fails, as its caller's tensor
would silently change. Each case (a call of the student's function, or drawing the batches of
a stream) has a time limit, CASE_SECONDS, where the platform has SIGALRM and the grader runs in
the main thread (a script or a Jupyter kernel, on Linux and macOS): a function that never
returns fails with its own line instead of waiting forever.
"""

from __future__ import annotations

import math
import signal
import sys
import sysconfig
import threading
import time
import traceback
from contextlib import contextmanager
from pathlib import Path

import torch

import minilm
from minilm.data import batches, default_corpus
from minilm.measure import (
    entropy, exact_match, extension_ratio, growth_exponent, log_row_sums, needle_mass,
    position_probe_r2, prefix_gap, seed_interval, t_quantile,
)
from minilm.model import (
    GAU, LM, Config, apply_rope, attend, attention_scores, attention_weights, keys_seen,
    logn_factor, position_rule, rope_angles, visible,
)
from minilm.scaling import fit_log_slope, fit_per_position, length_rule
from minilm.training import lm_loss
from minilm.validation import dtype_name


def cmp(label: str, ours: torch.Tensor, reference: torch.Tensor, *, atol: float = 1e-5,
        rtol: float = 1e-4) -> bool:
    """Print whether ``ours`` matches ``reference`` (exactly, within tolerance, or not) and
    return it."""
    ours, reference = torch.as_tensor(ours).detach(), torch.as_tensor(reference).detach()
    if ours.shape != reference.shape:
        print(f"{label:<28} WRONG shape: got {tuple(ours.shape)}, "
              f"expected {tuple(reference.shape)}")
        return False
    exact = torch.equal(ours, reference)
    close = exact or torch.allclose(ours.double(), reference.double(), atol=atol, rtol=rtol)
    verdict = "exact" if exact else "close" if close else "WRONG"
    diff = (ours.double() - reference.double()).abs().max().item() if ours.numel() else 0.0
    print(f"{label:<28} {verdict:<6} max difference {diff:.1e}")
    return close


class GradeFailed(AssertionError):
    """A failed grade. In a notebook it renders as its one-line message only."""

    def _render_traceback_(self):  # IPython shows these lines instead of a traceback
        return [f"\u2717 {self}"]


def _fail(task: str, message: str):
    raise GradeFailed(f"{task}: {message}") from None


def _described(value) -> str:
    """What a value is, as a line of the grader says it: type, shape, dtype and device of a
    tensor."""
    if torch.is_tensor(value):
        return (f"a tensor of shape {tuple(value.shape)}, {dtype_name(value.dtype)}, "
                f"on {value.device}")
    if isinstance(value, (list, tuple)):
        return f"a {type(value).__name__} of {len(value)} item{'s' if len(value) != 1 else ''}"
    if isinstance(value, (bool, int, float)):
        return f"the {type(value).__name__} {value!r}"
    return f"a {type(value).__name__}"


LOW_PRECISION = (torch.float16, torch.bfloat16)


def _as_tensor(task: str, number: int, description: str, got, reference) -> torch.Tensor:
    """What the student returned, as a tensor, compared in kind with what minilm's own function
    returned (``reference``): a sentence instead of a torch error when it cannot be one, or is
    not a tensor where minilm returns one (a single number may be a number), is on another
    device, or of a lower precision or another kind (bool for numbers)."""
    where = f"case {number} ({description})"
    if got is None:
        _fail(task, f"{where}: your function returned None. Did you forget `return`?")
    expected = torch.as_tensor(reference)
    if torch.is_tensor(reference) and reference.ndim > 0 and not torch.is_tensor(got):
        _fail(task, f"{where}: expected {_described(reference)}, got {_described(got)}: "
                    "return a tensor")
    try:
        tensor = torch.as_tensor(got)
    except (TypeError, ValueError, RuntimeError):
        _fail(task, f"{where}: your function returned {_described(got)}; "
                    "return a tensor or a number")
    if tensor.device != expected.device:
        _fail(task, f"{where}: expected a tensor on {expected.device}, got {_described(tensor)}: "
                    "keep the result on the inputs' device")
    if tensor.dtype in LOW_PRECISION and expected.dtype not in LOW_PRECISION:
        _fail(task, f"{where}: expected {dtype_name(expected.dtype)} values, got "
                    f"{_described(tensor)}: compute in the inputs' precision")
    if (tensor.dtype == torch.bool) != (expected.dtype == torch.bool) and (
            tensor.is_floating_point() or expected.is_floating_point()):
        kind = "True/False" if expected.dtype == torch.bool else "numbers"
        _fail(task, f"{where}: expected {kind} ({dtype_name(expected.dtype)}), "
                    f"got {_described(tensor)}")
    if tensor.shape != expected.shape:
        _fail(task, f"{where}: expected shape {tuple(expected.shape)}, "
                    f"got {tuple(tensor.shape)}")
    return tensor


# Code that is not the student's: minilm, this grader, every installed package and the
# standard library.
LIBRARY_FOLDERS = tuple(dict.fromkeys(
    [str(Path(minilm.__file__).resolve().parent), str(Path(__file__).resolve().parent)]
    + [str(Path(sysconfig.get_paths()[name]).resolve())
       for name in ("purelib", "platlib", "stdlib")]))


def _students_line(error: BaseException) -> str:
    """Where the student's own code raised: the innermost frame outside minilm, the grader, the
    installed packages and the standard library (a notebook cell), as "line N: <source>"; ""
    when every frame is library code."""
    for frame in reversed(traceback.extract_tb(error.__traceback__)):
        if not str(Path(frame.filename).resolve()).startswith(LIBRARY_FOLDERS):
            source = f": {frame.line.strip()}" if frame.line else ""
            return f"\n  in your code, line {frame.lineno}{source}"
    return ""


CASE_SECONDS = 30  # the time limit of one case (see the module's docstring)


class _OutOfTime(BaseException):
    """Raised in the student's code when a case runs past CASE_SECONDS (a BaseException: their
    ``except Exception`` does not swallow it). Its argument: the token of the limit that ran
    out."""


@contextmanager
def _time_limit(seconds: float):
    """Raise _OutOfTime(token) in the block after ``seconds`` (``token``: what this yields), where
    SIGALRM can interrupt it (the main thread of a POSIX system); elsewhere the block runs without
    a limit. The real-time timer and the SIGALRM handler found here (the caller's own, or an outer
    limit's) are kept: if that timer is due first, its alarm goes to that handler and the block
    goes on; on exit the handler is back and the timer armed for what is left of it. Time that a
    debugger stops the block for does not count (_debugging)."""
    token = object()
    if not hasattr(signal, "SIGALRM") or threading.current_thread() is not threading.main_thread():
        yield token
        return
    started = time.monotonic()
    old_delay, old_interval = signal.getitimer(signal.ITIMER_REAL)
    deadline = started + seconds
    other = started + old_delay if old_delay > 0 else None  # when the timer found here goes off

    def arm():
        due = deadline if other is None else min(deadline, other)
        signal.setitimer(signal.ITIMER_REAL, max(due - time.monotonic(), 1e-6))

    def on_alarm(signum, frame):
        nonlocal deadline, other, old_interval
        now = time.monotonic()
        if other is not None and now >= other - 1e-3:  # the alarm of the timer found here
            # a periodic timer goes off again
            other = now + old_interval if old_interval > 0 else None
            _pass_on(previous, signum, frame)
            now = time.monotonic()
            delay, interval = signal.getitimer(signal.ITIMER_REAL)
            if delay > 0:  # that handler set its timer again
                other, old_interval = now + delay, interval
            arm()
        elif _debugging():  # stopped at a breakpoint(): the limit counts again from now
            deadline = now + seconds
            arm()
        else:
            raise _OutOfTime(token)

    previous = signal.getsignal(signal.SIGALRM)
    try:
        signal.signal(signal.SIGALRM, on_alarm)
        try:
            arm()
            yield token
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    finally:  # even when the alarm went off just as the block ended
        # a handler not set from Python reads as None: put the default back
        signal.signal(signal.SIGALRM, signal.SIG_DFL if previous is None else previous)
        if other is not None:
            signal.setitimer(signal.ITIMER_REAL, max(other - time.monotonic(), 1e-6),
                             old_interval)


def _pass_on(handler, signum, frame) -> None:
    """What SIGALRM would have done without the time limit: run its handler, or nothing
    (SIG_IGN), or the default action (SIG_DFL, or a handler not set from Python): end the
    process."""
    if callable(handler):
        handler(signum, frame)
    elif handler != signal.SIG_IGN:
        signal.signal(signal.SIGALRM, signal.SIG_DFL)
        signal.raise_signal(signal.SIGALRM)


def _debugging() -> bool:
    """A debugger traces this thread (breakpoint(), pdb, an IDE's): the time a student spends in
    it is theirs, not the case's. Coverage's tracer is no debugger."""
    trace = sys.gettrace()
    return trace is not None and not type(
        getattr(trace, "__self__", trace)).__module__.startswith("coverage")


def _limited(task: str, what: str, run):
    """``run()`` within CASE_SECONDS; past it, one line saying ``what`` did not finish."""
    limit = None
    try:
        with _time_limit(CASE_SECONDS) as limit:
            return run()
    except _OutOfTime as error:
        if error.args[0] is not limit:  # an outer limit's: for it to report
            raise
        _fail(task, f"{what} did not finish within {CASE_SECONDS} s (each case has that limit): "
                    "an endless loop, or a wait that never ends?")


def _snapshot(value):
    """A copy of an input, to tell whether the student's function changed it in place: a tensor,
    a list (of numbers or tensors), a model's weights; None for what is not compared."""
    if torch.is_tensor(value):
        return value.detach().clone()
    if isinstance(value, torch.nn.Module):
        return [t.detach().clone() for t in value.state_dict().values()]
    if isinstance(value, list):
        return [_snapshot(v) if torch.is_tensor(v) else v for v in value]
    return None


def _unchanged(value, before) -> bool:
    if before is None:
        return True
    if isinstance(value, torch.nn.Module):
        value = list(value.state_dict().values())
    if torch.is_tensor(before):
        return _same(value, before)
    return len(value) == len(before) and all(map(_same, value, before))


def _same(a, b) -> bool:
    """Equal tensors (or items of a list), nan where nan was (a masked score of -inf stays
    -inf)."""
    if not torch.is_tensor(b):
        return not torch.is_tensor(a) and (a == b or _is_nan(a) and _is_nan(b))
    return (torch.is_tensor(a) and a.shape == b.shape and a.dtype == b.dtype
            and torch.equal(a.detach().isnan(), b.isnan())
            and torch.equal(a.detach().nan_to_num(), b.nan_to_num()))


def _is_nan(value) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _call(task: str, student, number: int, description: str, kwargs: dict, *,
          inputs_kept: bool = True):
    """student(**kwargs), with the time limit; a student's error, or (``inputs_kept``) an input
    it changed in place, as one line."""
    before = {name: _snapshot(value) for name, value in kwargs.items()} if inputs_kept else {}
    where = f"case {number} ({description})"
    try:
        got = _limited(task, f"{where}: your function", lambda: student(**kwargs))
    except GradeFailed:
        raise
    except NotImplementedError:
        _fail(task, "your function still raises NotImplementedError: replace the stub with your "
                    "code.")
    except Exception as error:  # a student's bug: which input triggered it, which line of theirs
        _fail(task, f"{where} raised {type(error).__name__}: {error}{_students_line(error)}")
    for name, copy in before.items():
        if not _unchanged(kwargs[name], copy):
            _changed_in_place(task, f"{where}: your function", name)
    return got


def _changed_in_place(task: str, who: str, name: str):
    _fail(task, f"{who} changed its input {name} in place (e.g. `{name} /= ...` or "
                f"`{name}[...] = ...`); compute a new tensor instead (`{name} = {name} / ...`), "
                f"as the caller's {name} must stay as it was")


def run_cases(task: str, student, reference, cases, *, atol: float = 1e-5, rtol: float = 1e-4,
              names: tuple[str, ...] | None = None) -> None:
    """Call ``student(**case)`` and ``reference(**case)`` on every case; stop at the first
    mismatch. ``names``: what each element of a returned tuple is, to name the one that
    differs."""
    for number, (description, kwargs) in enumerate(cases, 1):
        returned = reference(**kwargs)
        expected = torch.as_tensor(returned)
        got = _as_tensor(task, number, description,
                         _call(task, student, number, description, kwargs), returned)
        if not torch.allclose(got.double(), expected.double(), atol=atol, rtol=rtol,
                              equal_nan=True):
            where = (got.double() - expected.double()).abs().nan_to_num(math.inf).argmax()
            index = tuple(int(i) for i in torch.unravel_index(where, expected.shape))
            at = f" at index {index}" if index else ""   # a scalar has no index to name
            if names and len(index) == 1:
                at = f" in the {names[index[0]]}"
            _fail(task, f"case {number} ({description}){at}: expected {_shown(expected[index])}, "
                        f"got {_shown(got[index])}")
    print(f"\u2713 {task}: all {len(cases)} cases match minilm.")


def _shown(value: torch.Tensor) -> str:
    """One element as the student would write it: True/False for a boolean, else 5 decimals."""
    return str(bool(value)) if value.dtype == torch.bool else f"{float(value):.5f}"


def _qkv(B, H, T, d, e, seed, *, nonpositive=False):
    g = torch.Generator().manual_seed(seed)
    q, k = torch.randn(B, H, T, d, generator=g), torch.randn(B, H, T, d, generator=g)
    v = torch.randn(B, H, T, e, generator=g)
    if nonpositive:  # every score q_i . k_j <= 0
        q, k = q.abs(), -k.abs()
    return q, k, v


SHAPES = [(1, 1, 5, 4, 3), (2, 3, 7, 8, 5), (1, 2, 16, 6, 6)]


def grade_relu2_attention(student) -> None:
    """student(q, k, v, n, causal) -> relu(q k^T / sqrt(d))^2 / n applied to v, with n a positive
    int (fixed), 'length' (n = T) or 'row' (n = keys query i sees)."""
    cases = [(f"B,H,T,d,e={shape}, causal={causal}, n={n!r}",
              dict(q=q, k=k, v=v, n=n, causal=causal))
             for seed, shape in enumerate(SHAPES)
             for q, k, v in [_qkv(*shape, seed)]
             for causal in (True, False) for n in (64, "length", "row")]
    q, k, v = _qkv(2, 1, 6, 4, 3, 99, nonpositive=True)
    cases.append(("all scores <= 0: the output must be 0",
                  dict(q=q, k=k, v=v, n="row", causal=True)))
    run_cases("relu² attention", student,
              lambda q, k, v, n, causal: attend(q, k, v, norm="relu2", n=n, causal=causal)[0],
              cases)


def grade_rope(student) -> None:
    """student(x) -> x rotated by RoPE, x of shape (..., T, dim), base 10000."""
    cases = []
    for seed, shape in enumerate([(6, 4), (2, 9, 8), (1, 2, 20, 16)]):
        x = torch.randn(*shape, generator=torch.Generator().manual_seed(seed))
        cases.append((f"x of shape {shape}", dict(x=x)))
    run_cases("RoPE", student, lambda x: apply_rope(x, rope_angles(x.shape[-2], x.shape[-1])),
              cases)


def grade_gau_parameter_count(student) -> None:
    """student(d, s, expansion) -> the number of parameters of one GAU block (weights, biases,
    gamma, beta and its LayerNorm), as minilm builds it."""
    # d != s first, so a mistake in the width of gamma/beta shows before a case where d = s hides it
    cases = [(f"d={d}, s={s}, expansion={e}", dict(d=d, s=s, expansion=e))
             for d, s, e in [(32, 16, 2), (48, 8, 1), (64, 64, 2), (128, 128, 3)]]

    def reference(d, s, expansion):
        config = Config(vocab_size=2, block="gau", n_head=1, d_model=d, d_k=s,
                        expansion=expansion)
        return torch.tensor(sum(p.numel() for p in GAU(config, "rope", None).parameters()))

    run_cases("GAU parameter count", student, reference, cases, atol=0, rtol=0)


def _scores(B, H, T, seed, *, causal, nonpositive_rows=False):
    q, k, _ = _qkv(B, H, T, 8, 1, seed, nonpositive=nonpositive_rows)
    return attention_scores(q, k, causal=causal)


def _row_divisor(T, n, causal):
    """What row i of relu^2 attention is divided by, (T, 1): n, T (n='length') or n_i
    (n='row'), as minilm.model.relu2_weights divides it."""
    if n == "row":
        return keys_seen(T, causal).view(T, 1)
    return torch.full((T, 1), float(T if n == "length" else n))


def grade_row_divisor(student) -> None:
    """student(T, n, causal) -> a (T, 1) tensor: what row i of relu^2 attention is divided by."""
    cases = [(f"T={T}, n={n!r}, causal={causal}", dict(T=T, n=n, causal=causal))
             for T in (1, 7, 32) for n in (64, "length", "row") for causal in (True, False)]
    run_cases("row divisor", student, _row_divisor, cases)


def _tiny_relu2_lm(seed):
    torch.manual_seed(seed)
    return LM(Config(vocab_size=11, block="gau", n_head=1, d_model=16, n_layer=2, d_k=8,
                     norm="relu2", n=24)).eval()


def grade_prefix_gap(student) -> None:
    """student(model, idx, T, **overrides) -> max |model(idx[:, :T]) - model(idx)[:, :T]| (a
    float)."""

    cases = []
    # seeds 5 and 20: the largest difference is negative in one, positive in the other, so a
    # gap without abs() fails whichever way round it subtracts
    for seed, T, n in [(0, 8, 24), (1, 8, "length"), (2, 5, "row"), (3, 12, "length"),
                       (5, 8, "length"), (20, 8, "length")]:
        idx = torch.randint(0, 11, (2, 24), generator=torch.Generator().manual_seed(seed))
        cases.append((f"T={T}, n={n!r}, seed {seed}",
                      dict(model=_tiny_relu2_lm(seed), idx=idx, T=T, n=n)))
    run_cases("prefix gap", student, prefix_gap, cases, atol=1e-5, rtol=1e-3)


def grade_entropy(student) -> None:
    """student(weights) -> entropy of every row (last dimension), rows normalised to sum 1
    first, 0 log 0 = 0, a row of zeros has entropy 0."""
    cases = []
    for seed, causal in enumerate((True, False)):
        scores = _scores(2, 3, 9, seed, causal=causal)
        cases.append((f"softmax weights, causal={causal}",
                      dict(weights=attention_weights(scores, causal=causal))))
        cases.append((f"relu² / n weights, causal={causal}",
                      dict(weights=attention_weights(scores, norm="relu2", n=16, causal=causal))))
    cases.append(("a row of zeros", dict(weights=torch.zeros(2, 5))))
    cases.append(("one-hot rows", dict(weights=torch.eye(4))))
    run_cases("attention entropy", student, lambda weights: entropy(weights), cases)


def grade_log_normaliser(student) -> None:
    """student(scores, norm) -> log Z_i per row: log sum_j exp(S_ij) ('softmax') or
    log sum_j relu(S_ij)^2 ('relu2'); masked scores are -inf and contribute nothing."""
    cases = []
    for seed, causal in enumerate((True, False)):
        scores = _scores(2, 2, 7, seed, causal=causal)
        for norm in ("softmax", "relu2"):
            cases.append((f"norm={norm}, causal={causal}", dict(scores=scores, norm=norm)))
    cases.append(("large logits (overflow test)",
                  dict(scores=torch.tensor([[100.0, 99.0, -5.0]]), norm="softmax")))
    run_cases("log normaliser", student, lambda scores, norm: log_row_sums(scores, norm=norm),
              cases)


def grade_growth_exponent(student) -> None:
    """student(ns, values) -> b of the least-squares fit log(value) = a + b log(n)."""
    ns = [8, 16, 32, 64, 128]
    cases = [("value = 3 n", dict(ns=ns, values=[3.0 * n for n in ns])),
             ("constant", dict(ns=ns, values=[5.0] * 5)),
             ("noisy", dict(ns=ns, values=[2.0, 2.9, 3.1, 4.4, 5.0])),
             ("three points", dict(ns=[10, 100, 1000], values=[1.0, 10.0, 30.0]))]
    run_cases("growth exponent", student, growth_exponent, cases)


def grade_relu2_norm_attention(student) -> None:
    """student(q, k, v, causal) -> relu(S)^2 / sum_j relu(S_ij)^2 applied to v; a row whose
    scores are all <= 0 gives zeros (never NaN)."""
    cases = [(f"B,H,T,d,e={shape}, causal={causal}", dict(q=q, k=k, v=v, causal=causal))
             for seed, shape in enumerate(SHAPES) for q, k, v in [_qkv(*shape, seed)]
             for causal in (True, False)]
    q, k, v = _qkv(1, 2, 6, 4, 3, 7, nonpositive=True)
    cases.append(("all scores <= 0: zeros, not NaN", dict(q=q, k=k, v=v, causal=False)))
    run_cases("normalised relu² attention", student,
              lambda q, k, v, causal: attend(q, k, v, norm="relu2_norm", causal=causal)[0], cases)


def grade_logn_factor(student) -> None:
    """student(T, L, causal) -> a (T,) tensor: log(n_i) / log(L), n_i the keys row i sees."""
    cases = [(f"T={T}, L={L}, causal={causal}", dict(T=T, L=L, causal=causal))
             for T, L in [(8, 8), (20, 4), (5, 64)] for causal in (True, False)]
    run_cases("log n factor", student, lambda T, L, causal: logn_factor(T, L, causal), cases)


def _entropy_invariant_attention(q, k, v, L, causal):
    """softmax(log_L(n_i) q k^T / sqrt(d)) v: the log n factor folded into q, row by row."""
    factor = logn_factor(q.shape[-2], L, causal).view(-1, 1)
    return attend(q * factor, k, v, causal=causal)[0]


def grade_entropy_invariant_attention(student) -> None:
    """student(q, k, v, L, causal) -> softmax(log_L(n_i) q k^T / sqrt(d)) v."""
    cases = [(f"B,H,T,d,e={shape}, L={L}, causal={causal}",
              dict(q=q, k=k, v=v, L=L, causal=causal))
             for seed, shape in enumerate(SHAPES) for q, k, v in [_qkv(*shape, seed)]
             for L in (4, 64) for causal in (True, False)]
    run_cases("entropy-invariant attention", student, _entropy_invariant_attention, cases)


def _simplex_self_weight_by_softmax(n: int, rho: float, beta: float) -> torch.Tensor:
    """A_00 of softmax(beta Y Y^T) for an explicitly built regular simplex: the n unit vectors
    y_i = sqrt(1 - rho) e_i + sqrt(rho) u (u orthogonal to every e_i), whose pairwise inner
    product is rho. No closed form here, so the grader compares the student's algebra with what
    attention computes."""
    tokens = torch.cat([math.sqrt(1 - rho) * torch.eye(n, dtype=torch.float64),
                        torch.full((n, 1), math.sqrt(rho), dtype=torch.float64)], 1)
    return torch.softmax(beta * tokens @ tokens[0], -1)[0]


def grade_simplex_self_weight(student) -> None:
    """student(n, rho, beta) -> the weight a token keeps on itself when n unit tokens with
    pairwise inner product rho attend to each other (itself included) with scores
    beta <y_i, y_j>: A_ii = 1 / (1 + (n - 1) exp(-beta (1 - rho)))."""
    cases = [(f"n={n}, rho={rho}, beta={beta:g}", dict(n=n, rho=rho, beta=beta))
             for n, rho, beta in [(2, 0.0, 1.0), (5, 0.5, 2.0), (64, 0.5, 2 * math.log(64)),
                                  (64, 0.25, 3.0), (300, 0.9, 20.0), (1000, 0.5, 0.0),
                                  (16, 0.0, 30.0)]]
    run_cases("simplex self-weight", student, _simplex_self_weight_by_softmax, cases)


def grade_position_probe(student) -> None:
    """student(hidden, n_train) -> R^2 on sequences n_train.. of a least-squares probe (with a
    bias) fitted on sequences ..n_train, from hidden (N, T, d) to the position 0..T-1."""
    cases = []
    for seed, (N, T, d, signal) in enumerate([(20, 8, 6, 1.0), (30, 16, 10, 0.1),
                                              (12, 5, 3, 0.0)]):
        g = torch.Generator().manual_seed(seed)
        position = torch.arange(T, dtype=torch.float).expand(N, T)
        hidden = torch.randn(N, T, d, generator=g)
        hidden[..., 0] += signal * position
        cases.append((f"N={N}, T={T}, d={d}, signal {signal}",
                      dict(hidden=hidden, n_train=N * 3 // 4)))
    run_cases("position probe", student, position_probe_r2, cases, atol=1e-4)


def grade_extension_ratio(student) -> None:
    """student(position_loss, L, margin, bucket) -> where the loss first rises above its
    in-range level (mean over positions L/2..L) + margin, in buckets from L on, divided by L;
    T / L if never."""
    g = torch.Generator().manual_seed(0)
    flat = 1 + 0.01 * torch.rand(64, generator=g)
    rising = flat.clone()
    rising[40:] += 0.5
    slow = flat + torch.cat([torch.zeros(16), torch.linspace(0, 1, 48)])
    realistic = slow.clone()
    realistic[:6] += torch.linspace(2, 0.2, 6)  # a real LM: high loss with little context
    cases = [("high loss at the first positions, as in a real model",
              dict(position_loss=realistic, L=16, margin=0.1, bucket=4)),
             ("never rises", dict(position_loss=flat, L=16, margin=0.1, bucket=4)),
             ("a step at 2.5 L", dict(position_loss=rising, L=16, margin=0.1, bucket=4)),
             ("a slow ramp", dict(position_loss=slow, L=16, margin=0.1, bucket=4)),
             ("a slow ramp, margin 0.3, bucket 8",
              dict(position_loss=slow, L=16, margin=0.3, bucket=8))]

    def reference(position_loss, L, margin, bucket):
        return extension_ratio(position_loss, L, margin=margin, bucket=bucket)

    run_cases("extension ratio", student, reference, cases)


def grade_fit_c(student) -> None:
    """student(ratios, lambdas) -> c of the least-squares fit lambda = 1 + c ln s (no
    intercept)."""
    cases = [("the paper's rule of thumb", dict(ratios=[2, 4, 8], lambdas=[1.2, 1.5, 1.8])),
             ("exact c = 0.5", dict(ratios=[2, 3, 5],
                                    lambdas=[1 + 0.5 * math.log(s) for s in (2, 3, 5)])),
             ("two seeds", dict(ratios=[2, 4, 8, 2, 4, 8],
                                lambdas=[1.2, 1.7, 1.9, 1.2, 1.5, 1.9]))]
    run_cases("fit of c", student, fit_log_slope, cases)


def grade_head_scale_training(student) -> None:
    """student(model, batches, steps, start) trains the per-head multipliers only, from
    ``start``, clamped at >= 1 after every step. Graded by what must hold: no other weight
    changes, no forward pass ever sees a multiplier below 1 (the clamp acts after *every* step),
    the multipliers move, and the loss on the training batches goes down."""
    task = "head-scale training"
    corpus = default_corpus()
    torch.manual_seed(0)
    model = LM(Config(vocab_size=corpus.tokenizer.vocab_size, d_model=16, n_layer=2, n_head=2,
                      pos="nope"))
    before = {name: p.detach().clone() for name, p in model.named_parameters()}
    fixed = [next(batches(corpus, task="causal", batch_size=4, length=32, seed=s))
             for s in range(4)]

    def loss():
        with torch.no_grad():
            return sum(lm_loss(model(x), y).item() for x, y in fixed) / len(fixed)

    with torch.no_grad():
        model.multiplier.fill_(1.0)
    start_loss = loss()
    seen = []
    hook = model.register_forward_pre_hook(
        lambda m, args: seen.append(float(m.multiplier.detach().min())))
    try:
        _call(task, student, 1, "a 2-layer NoPE model, 40 steps",
              dict(model=model, batches=iter(fixed * 10), steps=40, start=1.0), inputs_kept=False)
    finally:
        hook.remove()
    for name, p in model.named_parameters():
        if name != "multiplier" and not torch.equal(p.detach(), before[name]):
            _fail(task, f"{name} changed: only model.multiplier may train")
    if min(seen, default=1.0) < 1 - 1e-6:
        _fail(task, f"a forward pass saw a multiplier of {min(seen):.3f} < 1: clamp after every "
                    "step")
    t = model.multiplier.detach()
    if torch.equal(t, torch.ones_like(t)):
        _fail(task, "no multiplier moved from its start: did the optimiser step?")
    if not loss() < start_loss:
        _fail(task, f"the loss did not go down ({start_loss:.4f} -> {loss():.4f})")
    print(f"✓ {task}: only the multipliers trained, never below 1, loss {start_loss:.4f} -> "
          f"{loss():.4f}.")


def grade_length_rules(student) -> None:
    """student(rule, n, L) -> the multiplier on the logits at n keys for a model trained at L:
    'su' log_L n; 'nope_fit' 1 + 0.397 ln(n / L); 'qwen' max(1, log_L n); 'yarn'
    (0.1 ln(n / L) + 1)^2 (minilm.scaling.length_rule)."""
    cases = [(f"rule={rule!r}, n={n}, L={L}", dict(rule=rule, n=n, L=L))
             for rule in ("su", "nope_fit", "qwen", "yarn")
             for n, L in [(512, 512), (4096, 512), (64, 2048)]
             if not (rule in ("nope_fit", "yarn") and n < L)]
    run_cases("length rules", student, length_rule, cases)


def grade_mixed_length_batches(student) -> None:
    """student(ids, batch_size, lengths, seed) -> an endless iterator (or iterable) of (x, y)
    causal batches, each batch of one length drawn from ``lengths``, y = x shifted by one,
    windows taken from ids (unchanged: a generator's body runs as it is drawn from, so ids is
    compared after that too)."""
    task = "mixed-length batches"
    ids = torch.arange(1000) % 97
    kept = ids.clone()
    lengths = (8, 16, 32)
    description = f"batch_size 4, lengths {lengths}"
    stream = _call(task, student, 1, description,
                   dict(ids=ids, batch_size=4, lengths=lengths, seed=0))
    if stream is None:
        _fail(task, "your function returned None. Did you forget `return` (or `yield`)?")
    if hasattr(stream, "__len__") or not (hasattr(stream, "__iter__")
                                          or hasattr(stream, "__next__")):  # a list, a tensor
        _fail(task, f"the stream must be endless: your function returned {_described(stream)}; "
                    "return an iterator that never ends (a generator: "
                    "`while True: ... yield x, y`)")
    drawn = _limited(task, "drawing 60 batches from your stream",
                     lambda: _draw(task, stream, 60))
    if not _same(ids, kept):  # a generator's body runs only now, as it is drawn from
        _changed_in_place(task, "drawing from your stream: your function", "ids")
    seen = set()
    for number, batch in enumerate(drawn, 1):
        if not (isinstance(batch, (tuple, list)) and len(batch) == 2
                and all(torch.is_tensor(t) for t in batch)):
            items = ""
            if isinstance(batch, (tuple, list)) and batch:
                items = f" ({', '.join(_described(t) for t in batch[:2])})"
            _fail(task, f"batch {number}: expected a pair (x, y) of tensors of shape (4, T), "
                        f"got {_described(batch)}{items}")
        x, y = batch
        if (x.device.type != "cpu" or y.device.type != "cpu" or x.is_floating_point()
                or y.is_floating_point()):
            _fail(task, f"batch {number}: expected token ids (int64) on the cpu, got x "
                        f"{_described(x)} and y {_described(y)}")
        if x.ndim != 2 or x.shape != y.shape or x.shape[0] != 4 or x.shape[1] not in lengths:
            _fail(task, f"batch {number}: x {tuple(x.shape)}, y {tuple(y.shape)}; expected "
                        f"(4, T) with T in {lengths}")
        if not torch.equal(x[:, 1:], y[:, :-1]):
            _fail(task, f"batch {number}: y must be x shifted by one position")
        starts = x[:, 0]
        expected = (starts[:, None] + torch.arange(x.shape[1] + 1)) % 97
        if not torch.equal(torch.cat([x, y[:, -1:]], 1), expected):
            _fail(task, f"batch {number}: the rows are not consecutive windows of ids")
        seen.add(x.shape[1])
    if seen != set(lengths):
        _fail(task, f"60 batches used lengths {sorted(seen)}; every one of {lengths} should "
                    "appear")
    print(f"✓ {task}: 60 batches, lengths {sorted(seen)}, targets shifted, windows of the text.")


def _draw(task: str, stream, count: int) -> list:
    """The first ``count`` items of a student's stream; one line if it ends or raises first."""
    drawn = []
    try:
        # an iterable that is not an iterator starts its stream with iter()
        iterator = stream if hasattr(stream, "__next__") else iter(stream)
        for _ in range(count):
            drawn.append(next(iterator))
    except StopIteration:
        _fail(task, f"the stream must be endless: it stopped after {len(drawn)} batches (a "
                    "generator needs `while True:` around its `yield`)")
    except Exception as error:
        _fail(task, f"drawing batch {len(drawn) + 1} from your stream raised "
                    f"{type(error).__name__}: {error}{_students_line(error)}")
    return drawn


def grade_rule_slopes(student) -> None:
    """student(rule, L) -> c, the slope d(multiplier)/d(ln s) at s = 1 of each length rule."""

    def numeric_slope(rule, L):  # a one-sided difference of minilm's rules at s = 1 (s > 1)
        h = 1e-4
        return (length_rule(rule, math.exp(h) * L, L) - length_rule(rule, L, L)) / h

    cases = [(f"rule={rule!r}, L={L}", dict(rule=rule, L=L))
             for rule in ("su", "nope_fit", "qwen", "yarn") for L in (512, 2048)]
    run_cases("rule slopes", student, numeric_slope, cases, atol=1e-3, rtol=1e-3)


def grade_exact_match(student) -> None:
    """student(logits, y) -> (B,) bool: the rows whose key greedy decoding writes exactly (the
    argmax right at each of the key's digits, the last RETRIEVAL_DIGITS positions)."""
    g = torch.Generator().manual_seed(0)
    cases = []
    for number, (B, T, V) in enumerate([(6, 12, 10), (8, 20, 104), (3, 9, 5)]):
        y = torch.full((B, T), -100)
        y[:, -3:] = torch.randint(0, V, (B, 3), generator=g)
        logits = torch.randn(B, T, V, generator=g)
        right = logits.clone()
        right.scatter_(-1, y.clamp(min=0).unsqueeze(-1), 50.0)  # argmax = target everywhere
        mixed = right.clone()
        mixed[0, -1] = torch.randn(V, generator=g)    # row 0: last digit may be wrong
        mixed[1, -3, y[1, -3]] = -50.0                # row 1: first digit wrong
        mixed[2, 0] = 0.0                             # row 2: a non-answer position does not count
        cases += [(f"B,T,V={B, T, V}, every digit right", dict(logits=right, y=y)),
                  (f"B,T,V={B, T, V}, one wrong digit in rows 0-1", dict(logits=mixed, y=y)),
                  (f"B,T,V={B, T, V}, random logits", dict(logits=logits, y=y))]
    run_cases("exact match", student, exact_match, cases)


def grade_needle_mass(student) -> None:
    """student(rows, needle) -> the attention mass on positions needle_b .. needle_b + 3 of each
    row."""
    g = torch.Generator().manual_seed(1)
    cases = []
    for B, T in [(4, 12), (3, 40), (2, 7)]:
        rows = torch.softmax(torch.randn(B, T, generator=g), -1)
        needle = torch.randint(0, T - 3, (B,), generator=g)
        cases.append((f"B,T={B, T}, rows (B, T)", dict(rows=rows, needle=needle)))
        heads = torch.softmax(torch.randn(B, 2, 3, T, generator=g), -1)
        cases.append((f"B,T={B, T}, rows (B, layers, heads, T)", dict(rows=heads, needle=needle)))
    cases.append(("needle at position 0",
                  dict(rows=torch.full((2, 8), 1 / 8), needle=torch.zeros(2, dtype=torch.long))))
    run_cases("needle mass", student, needle_mass, cases)


def grade_per_position_fit(student) -> None:
    """student(table, grid, L, bucket) -> c of lambda(i) = 1 + c ln(i / L), from the best lambda
    of each bucket of positions past L (i: the bucket's mean position, counted from 1)."""
    g = torch.Generator().manual_seed(2)
    grid = [round(1 + 0.1 * k, 1) for k in range(12)]
    cases = []
    for L, T, c in [(16, 128, 0.4), (8, 64, 0.25), (32, 96, 0.6)]:
        planted = 1 + c * torch.log(torch.arange(1, T + 1) / L)
        table = ((torch.tensor(grid)[:, None] - planted[None]) ** 2
                 + 0.01 * torch.rand(len(grid), T, generator=g))
        cases.append((f"L={L}, T={T}, planted c={c}",
                      dict(table=table, grid=grid, L=L, bucket=L // 4)))

    def reference(table, grid, L, bucket):
        return fit_per_position(table, grid, L, bucket=bucket)["c"]

    run_cases("per-position fit", student, reference, cases, atol=1e-6)


def grade_position_rule(student) -> None:
    """student(T, c, L, causal) -> the (T,) per-position multiplier 1 + c ln(n_i / L) past L,
    else 1."""
    cases = [(f"T={T}, c={c}, L={L}, causal={causal}", dict(T=T, c=c, L=L, causal=causal))
             for T, c, L in [(40, 0.397, 16), (8, 0.5, 16), (33, 0.7, 32), (64, 0.0, 8)]
             for causal in (True, False)]
    run_cases("per-position multiplier", student,
              lambda T, c, L, causal: position_rule(T, c, L, causal), cases)


def grade_seed_interval(student) -> None:
    """student(values, level, t_quantile) -> (mean, low, high): the t interval of the mean over
    seeds."""
    g = torch.Generator().manual_seed(3)
    cases = []
    for n, level in [(5, 0.9), (2, 0.95), (8, 0.8), (3, 0.9)]:
        values = (0.6 + 0.1 * torch.randn(n, generator=g, dtype=torch.float64)).tolist()
        cases.append((f"{n} seeds, level {level}",
                      dict(values=values, level=level, t_quantile=t_quantile)))
    run_cases("interval over seeds", student,
              lambda values, level, t_quantile: seed_interval(values, level=level),
              cases, atol=1e-9,
              names=("mean", "lower end of the interval", "upper end of the interval"))


def _needle_share_by_softmax(n, needle_keys, needle_logit, lam):
    """The needle's share, by a softmax over an explicit row of needle_keys logits needle_logit
    and n - needle_keys logits 0."""
    logits = torch.cat([torch.full((needle_keys,), float(needle_logit), dtype=torch.float64),
                        torch.zeros(n - needle_keys, dtype=torch.float64)])
    return torch.softmax(lam * logits, 0)[:needle_keys].sum()


def grade_needle_share(student) -> None:
    """student(n, needle_keys, needle_logit, lam) -> the softmax weight on the needle_keys keys
    of logit needle_logit among n - needle_keys of logit 0."""
    cases = [(f"n={n}, needle_keys={k}, needle_logit={s}, lam={lam}",
              dict(n=n, needle_keys=k, needle_logit=s, lam=lam))
             for n, k, s, lam in [(32, 4, 3.0, 1.0), (256, 4, 3.0, 1.0), (256, 4, 3.0, 1.6),
                                  (64, 1, 0.5, 2.0), (1000, 10, 5.0, 0.5)]]
    run_cases("needle share", student, _needle_share_by_softmax, cases, atol=1e-9)


def grade_lambda_holding_share(student) -> None:
    """student(n, needle_keys, needle_logit, share) -> the lambda at which the needle's share of
    n keys is ``share``."""
    cases = [(f"n={n}, needle_keys={k}, needle_logit={s}, share={m}",
              dict(n=n, needle_keys=k, needle_logit=s, share=m))
             for n, k, s, m in [(32, 4, 3.0, 0.6), (256, 4, 3.0, 0.6), (4096, 4, 2.0, 0.5),
                                (100, 10, 1.0, 0.9)]]

    def reference(n, needle_keys, needle_logit, share):  # bisection on the softmax itself
        low, high = -50.0, 50.0
        for _ in range(200):
            middle = (low + high) / 2
            below = _needle_share_by_softmax(n, needle_keys, needle_logit, middle) < share
            low, high = (middle, high) if below else (low, middle)
        return torch.tensor((low + high) / 2, dtype=torch.float64)

    run_cases("temperature that holds the share", student, reference, cases, atol=1e-7)


def grade_sliding_window_mask(student) -> None:
    """student(T, window) -> (T, T) bool: query i sees key j (causal; with a window of w keys,
    i - w < j <= i; window None: every j <= i)."""
    cases = [(f"T={T}, window={w}", dict(T=T, window=w))
             for T, w in [(1, 1), (6, 1), (8, 3), (8, 8), (5, 20), (12, 4), (7, None)]]
    run_cases("sliding-window mask", student, lambda T, window: visible(T, True, window), cases,
              atol=0, rtol=0)


def _reach(layers, T):
    """Which input positions j can change the output at position i, through every layer: the
    boolean product of the layers' visibility masks (each includes i itself: the residual
    path)."""
    reach = torch.eye(T, dtype=torch.bool)
    for _, window in layers:
        reach = (visible(T, True, window).double() @ reach.double()) > 0
    return reach


def grade_reach(student) -> None:
    """student(layers, T) -> (T, T) bool: output i depends on input j through the stack
    ``layers`` ((pos, window) per layer, as Config.layers)."""
    stacks = {"one window of 3": (("rope", 3),),
              "three windows of 4": (("rope", 4),) * 3,
              "hybrid, window 4": (("rope", 4), ("nope", None), ("rope", 4), ("nope", None)),
              "HWFA, window 3": (("rope", 3),) * 3 + (("nope", None),),
              "global only": (("nope", None),) * 2}
    cases = [(f"{name}, T={T}", dict(layers=layers, T=T))
             for name, layers in stacks.items() for T in (6, 16)]
    run_cases("reach through the layers", student, _reach, cases, atol=0, rtol=0)


def _design_failure(design, L: int):
    """Why the logit map ``design`` (T, device, dtype) -> (a, b) cannot be run as a design of a
    model trained at L, in one sentence; None when it can: (a, b) two (T, T) tensors; within L
    the same weights as the trained model (softmax of the plain logits); no row's weights
    changing when the sequence grows (a row that did would see how long its future is); no row
    without a key. Checked on random logits, the rows of each length a prefix of the longest's."""
    longest = 16 * L   # the scorecard's longest length
    scores = torch.randn(3, longest, longest, generator=torch.Generator().manual_seed(0))
    weights = {}
    for T in (L // 2, L, 2 * L, 3 * L + 5, longest):
        got = design(T, torch.device("cpu"), torch.float32)
        if got is None:
            return "your function returned None. Did you forget `return`?"
        if (not isinstance(got, (tuple, list)) or len(got) != 2
                or not all(torch.is_tensor(t) and t.shape == (T, T) for t in got)):
            return (f"at T = {T} it returned {_described(got)}; return a pair (a, b) of "
                    f"({T}, {T}) tensors")
        a, b = (t.detach().float() for t in got)
        hidden = ~visible(T, causal=True)
        plain = scores[:, :T, :T].masked_fill(hidden, float("-inf"))
        weights[T] = (plain * a + b).masked_fill(hidden, float("-inf")).softmax(-1)
        if weights[T].isnan().any():
            row = int(weights[T].isnan().any(-1).any(0).nonzero()[0])
            return (f"at T = {T} row {row}'s weights are not numbers (nan): every b of the row -inf "
                    "leaves it no key, and an a or b of inf or nan spoils it")
        if T <= L and not torch.allclose(weights[T], plain.softmax(-1), atol=1e-5):
            row = int((weights[T] - plain.softmax(-1)).abs().amax(-1).amax(0).argmax())
            return (f"it changes the model in range: at T = {T} (<= L = {L}) row {row}'s weights "
                    "differ from the trained model's; keep a = 1 and b = 0 within L")
    for T in (L // 2, L, 2 * L, 3 * L + 5):
        grown = weights[longest][:, :T, :T]
        if not torch.allclose(weights[T], grown, atol=1e-5):
            row = int((weights[T] - grown).abs().amax(-1).amax(0).argmax())
            return (f"it breaks causality: row {row}'s weights change when the sequence grows "
                    f"from {T} to {longest} tokens, so position {row} would see how long its "
                    "future is (use i, j and L, not T)")
    return None


def grade_design(student, L: int = 32) -> None:
    """student(T, device, dtype) -> (a, b): a design of one's own, logits a_ij S_ij + b_ij, for
    a causal model trained at L. One line: OK, or what breaks causality or the model in range."""
    task = "your design"
    try:
        problem = _limited(task, "your function", lambda: _design_failure(student, L))
    except GradeFailed:
        raise
    except NotImplementedError:
        _fail(task, "your function still raises NotImplementedError: replace the stub with your code.")
    except Exception as error:
        _fail(task, f"it raised {type(error).__name__}: {error}{_students_line(error)}")
    if problem:
        _fail(task, problem)
    print(f"\u2713 {task}: causal, and the trained model within L = {L}: ready for the scorecard.")
