"""Figures of the course's ideas (not of results), drawn from their equations and stored as SVG
in lessons/figures/, where the lessons' markdown shows them. No model is trained; a figure that
illustrates a method with made-up values says so in its title.

    python tools/figures.py            # redraw every figure
    python tools/figures.py --check    # exit 1 when a stored figure differs from its code

tests/test_figures.py runs the check, so a figure and the code that draws it cannot drift apart.
"""

from __future__ import annotations

import argparse
import io
import math
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402

from minilm import RopeScaling, length_rule  # noqa: E402
from minilm.model import rope_angles  # noqa: E402
from minilm.plots import course_style, draw_retrieval_prompt  # noqa: E402
from minilm.scaling import NOPE_FIT_C  # noqa: E402

FIGURES = Path(__file__).resolve().parent.parent / "lessons" / "figures"
L = 32                              # the training length of lessons 6-13
IN_RANGE = dict(color="0.92", zorder=0)
BLUE, ORANGE, GREEN, RED = "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"


def shade_training_range(ax, end, label="trained"):
    ax.axvspan(0, end, **IN_RANGE)
    ax.text(end, ax.get_ylim()[1], f" {label} up to L ", ha="right", va="top", fontsize=8,
            color="0.35")


def needle_share(ax):
    """a_needle(n) = e^{lambda S} / (e^{lambda S} + n - 1), S such that the share is 0.6 at L."""
    score = math.log(1.5 * (L - 1))
    n = torch.arange(L, 16 * L + 1, dtype=torch.float64)
    for name, lam, style in [("λ = 1", torch.ones_like(n), "-"),
                             ("λ = log_L n (Su)", n.log() / math.log(L), "--")]:
        weight = (lam * score).exp()
        ax.plot(n / L, weight / (weight + n - 1), style, label=name)
    ax.set(xscale="log", ylim=(0, 1), xlabel="length n / L",
           ylabel="the needle's share of its row")
    ax.set_xticks([1, 2, 4, 8, 16], ["1", "2", "4", "8", "16"])
    ax.minorticks_off()
    ax.legend(loc="lower left")


def divisor_and_row_sum(ax, k=6):
    """relu^2 / n: a row that attends to k keys sums to about k at any length; n grows with it."""
    n = torch.arange(L, 8 * L + 1, dtype=torch.float64)
    ax.plot(n / L, n, "-", color=RED, label="divisor n = the length")
    ax.plot(n / L, torch.full_like(n, L), "--", color=BLUE, label="divisor n = L, fixed")
    ax.plot(n / L, torch.full_like(n, k), ":", color=GREEN, label=f"row sum Z_i: about k = {k}")
    ax.set(yscale="log", xlabel="length n / L", ylabel="size (log scale)")
    ax.legend(loc="upper left")


def unseen_angles(ax, dim=16):
    """RoPE's slowest pair: the angle t * theta_i grows with t; past L it reaches new angles."""
    theta = rope_angles(2, dim)[1, -1].item()
    t = torch.arange(0, 4 * L + 1, dtype=torch.float64)
    ax.plot(t / L, t * theta, color=ORANGE)
    ax.text(2, 2 * L * theta, " the slowest pair's angle t θ", fontsize=8, va="top")
    ax.axhline(L * theta, color="0.4", lw=1, ls="--")
    ax.text(4, L * theta, "largest angle trained ", ha="right", va="bottom", fontsize=8)
    ax.set(xlabel="position t / L", ylabel="angle (radians)")
    ax.set_xlim(0, 4)
    shade_training_range(ax, 1)


def shrinking_count(ax):
    """NoPE under the causal mask: an average over i + 1 keys carries 1 / (i + 1)."""
    i = torch.arange(0, 4 * L, dtype=torch.float64)
    ax.plot(i / L, 1 / (i + 1), color=GREEN, label="1 / (i + 1)")
    ax.axhline(1 / L, color="0.4", lw=1, ls="--")
    ax.text(4, 1 / L, "smallest value trained ", ha="right", va="bottom", fontsize=8)
    ax.set(yscale="log", xlabel="position i / L", ylabel="what query i can read")
    ax.set_xlim(0, 4)
    shade_training_range(ax, 1)


def course_map():
    fig, axes = plt.subplots(2, 2, figsize=(9, 6.4))
    panels = [(divisor_and_row_sum, "(1) A divisor that grows (lessons 1-4)\n"
                                    "relu²/n: n follows the length, the row's sum does not"),
              (unseen_angles, "(2) Angles never trained (lessons 6-7)\n"
                              "RoPE past L: new rotation angles"),
              (needle_share, "(3) Distraction (lessons 5-12)\n"
                             "softmax: one logit among n ever more rivals"),
              (shrinking_count, "(4) Counts never seen (lesson 13)\n"
                                "NoPE counts positions through the causal mask")]
    for ax, (draw, title) in zip(axes.flat, panels):
        draw(ax)
        ax.set_title(title, fontsize=10, loc="left")
    fig.suptitle("Four ways attention fails past its training length L", fontsize=12)
    return fig


def row_sum_vs_n():
    fig, ax = plt.subplots(figsize=(6.4, 3.6))
    divisor_and_row_sum(ax)
    ax.set_title("relu²(S) / n: which n? The row's own sum stays near the k keys it attends to",
                 fontsize=10)
    return fig


def causal_counting():
    fig, (mask_ax, count_ax) = plt.subplots(1, 2, figsize=(8.4, 3.6),
                                            gridspec_kw={"width_ratios": [1, 1.5]})
    T = 8
    weights = torch.tril(torch.ones(T, T)) / torch.arange(1, T + 1).unsqueeze(1)
    image = mask_ax.imshow(weights.numpy(), cmap="Blues", vmin=0, vmax=1)
    mask_ax.set(xlabel="key j", ylabel="query i", xticks=range(T), yticks=range(T),
                title="uniform attention under the causal mask")
    mask_ax.grid(False)
    fig.colorbar(image, ax=mask_ax, label="weight 1 / (i + 1)", shrink=0.8)
    shrinking_count(count_ax)
    count_ax.set_title("the weight is a count: past L, one never seen", fontsize=10)
    return fig


def rope_scaling_angles(dim=16, s=4):
    """theta_i' / theta_i for each RoPE pair i under PI, NTK and YaRN at s = 4 (RopeScaling)."""
    fig, ax = plt.subplots(figsize=(6.8, 3.8))
    theta = rope_angles(2, dim)[1]
    pairs = torch.arange(dim // 2)
    for kind, style, color in [("pi", "s-", BLUE), ("ntk", "o--", ORANGE), ("yarn", "^:", GREEN)]:
        scaled = rope_angles(2, dim, scaling=RopeScaling(kind=kind, factor=s, train_len=L))[1]
        ax.plot(pairs, scaled / theta, style, color=color, label=kind.upper())
    ax.axhline(1, color="0.4", lw=1)
    ax.text(dim // 2 - 1, 1, "RoPE as trained", ha="right", va="bottom", fontsize=8)
    full_turn = pairs[2 * math.pi / theta <= L]
    ax.axvspan(-0.4, full_turn[-1] + 0.5, **IN_RANGE)
    ax.text(-0.3, 0.5, "these pairs turn\nfully within L:\nevery angle\nwas trained",
            fontsize=8, va="center", color="0.35")
    ax.set(yscale="log", xlabel="pair i (fast to slow)",
           ylabel="frequency θ'_i / θ_i (log scale)", xticks=pairs.tolist(),
           title=f"RoPE's frequencies run at s = {s} (d_k = {dim}, L = {L})")
    ax.set_yticks([1 / s, 0.5, 1], [f"1/{s}", "1/2", "1"])
    ax.minorticks_off()
    ax.legend(loc="center right")
    return fig


def seed_interval():
    """Illustrative values: the t interval of five seeds, and of their paired differences."""
    method_a = torch.tensor([0.62, 0.48, 0.71, 0.55, 0.40], dtype=torch.float64)
    method_b = method_a + torch.tensor([0.12, 0.09, 0.15, 0.10, 0.13], dtype=torch.float64)
    t_95_4 = 2.132  # t_{0.95, 4}: five seeds
    fig, (left, right) = plt.subplots(1, 2, figsize=(8.4, 3.6),
                                      gridspec_kw={"width_ratios": [1.4, 1]})

    def interval(ax, x, values, color, label):
        mean, half = values.mean().item(), t_95_4 * values.std().item() / math.sqrt(len(values))
        ax.plot([x] * len(values), values, "o", color=color, alpha=0.45, label=f"{label}: 5 seeds")
        ax.errorbar([x + 0.18], [mean], yerr=[half], fmt="D", color=color, capsize=5,
                    label=f"{label}: mean and 90% interval")

    interval(left, 0, method_a, BLUE, "A")
    interval(left, 1, method_b, ORANGE, "B")
    for a, b in zip(method_a, method_b):
        left.plot([0, 1], [a, b], color="0.75", lw=0.8, zorder=0)
    left.set(xticks=[0, 1], xticklabels=["method A", "method B"], xlim=(-0.5, 1.6),
             ylabel="score (illustrative)", title="two methods, the same five seeds")
    left.legend(fontsize=7, loc="lower right")
    interval(right, 0, method_b - method_a, GREEN, "B - A")
    right.axhline(0, color="0.4", lw=1)
    right.set(xticks=[0], xticklabels=["B - A, seed by seed"], xlim=(-0.6, 0.8),
              ylabel="paired difference", title="paired: the seeds' spread cancels")
    right.legend(fontsize=7, loc="lower right")
    return fig


def head_scaling():
    """Illustrative values: one lambda for every head, then a lambda_h per head trained from it."""
    heads = [f"{layer}.{head}" for layer in range(4) for head in range(4)]  # from 0, as in code
    start = length_rule("nope_fit", 4 * L, L)
    per_head = [1.35, 1.01, 1.62, 1.20, 1.97, 1.10, 1.45, 1.67,
                1.05, 1.30, 2.05, 1.15, 1.25, 1.40, 1.08, 1.52]
    fig, ax = plt.subplots(figsize=(7.6, 3.6))
    ax.bar(range(len(heads)), per_head, color=GREEN, label="after training: one λ_h per head")
    ax.axhline(start, color=ORANGE, ls="--", label="start: one uniform λ for every head")
    ax.axhline(1, color="0.3", lw=1.2, label="clamp: λ_h stays at or above 1")
    ax.set(xticks=range(len(heads)), xlabel="head (layer.head)", ylabel="logit multiplier",
           ylim=(0, 2.6),
           title="Head scaling at 4L, the model frozen (illustrative values)")
    ax.set_xticklabels(heads, fontsize=8)
    ax.legend(loc="upper left", ncol=2, fontsize=8)
    return fig


def fixed_or_length_n(k=6):
    """relu^2 / n: a row reading k keys sums to about k; the row's output scales like k / n."""
    T = torch.linspace(L / 8, 2 * L, 200, dtype=torch.float64)
    fig, ax = plt.subplots(figsize=(6.8, 3.6))
    ax.plot(T / L, k / T, "-", color=RED, label="n = the length: k / n moves with the length")
    ax.plot(T / L, torch.full_like(T, k / L), "--", color=BLUE,
            label="n = L, fixed: k / L as trained")
    ax.axvline(1, color="0.4", lw=1)
    ax.text(1.02, k / (L / 8) * 0.9, "trained at L", fontsize=8, va="top")
    ax.set(yscale="log", xlabel="length n / L", ylabel="a row's output scale, k / n (log)",
           title=f"relu²(S) / n for a row that reads k = {k} keys")
    ax.legend(loc="center right", fontsize=8)
    return fig


def three_fixes(k=6):
    """The scale of one row's output under each fix, against the length (a row reading k keys)."""
    T = torch.linspace(L / 8, 2 * L, 200, dtype=torch.float64)
    fig, ax = plt.subplots(figsize=(6.8, 3.8))
    ax.axvspan(1 / 8, 1, color="0.92", zorder=0)
    ax.text(0.15, 2.2, "mixed lengths: trained\nacross this range", fontsize=8, va="top")
    ax.plot(T / L, L * (k / T) / k, "-", color=RED, label="n = the length (no fix)")
    ax.plot(T / L, torch.ones_like(T), "-", color=BLUE, lw=5, alpha=0.45, label="n = L, fixed")
    ax.plot(T / L, torch.ones_like(T), ":", color=GREEN, lw=2.2,
            label="divided by the row's own sum (and softmax)")
    ax.set(yscale="log", xlabel="length n / L", ylim=(0.4, 10),
           ylabel="output scale, relative to training",
           title="Three fixes: keep a row's output at the scale it was trained at")
    ax.legend(loc="upper right")
    return fig


def retrieval_in_text():
    fig, ax = plt.subplots(figsize=(10, 2.6))
    draw_retrieval_prompt(ax, filler=" the module and th", key="273", cut=5)
    ax.set_title("Lesson 9's task with text as the filler: the rows that answer must still find "
                 "the needle, now among words", fontsize=10)
    return fig


def per_position_rule(s=8):
    """lambda per length (one for the whole row set) against lambda_i per row, at s = 8."""
    i = torch.arange(1, s * L + 1, dtype=torch.float64)
    fig, ax = plt.subplots(figsize=(6.8, 3.6))
    per_length = 1 + NOPE_FIT_C * math.log(s)
    per_row = 1 + NOPE_FIT_C * (i / L).log().clamp(min=0)
    ax.plot(i / L, torch.full_like(i, per_length), "--", color=ORANGE,
            label=f"per length: 1 + c ln s for every row (s = {s})")
    ax.plot(i / L, per_row, "-", color=GREEN, label="per row: 1 + c ln(n_i / L), 1 within L")
    ax.axvline(1, color="0.4", lw=1)
    ax.set(xlabel="row i: keys seen n_i / L", ylabel="logit multiplier λ",
           title=f"Two ways to apply one rule at {s}L (c = {NOPE_FIT_C})")
    ax.legend(loc="lower right")
    return fig


def entropy_invariance(train_len=64, k=4):
    """A row with k strong keys (logit S, a 0.6 share at L) among n - k at 0: its entropy."""
    n = torch.logspace(math.log10(train_len), math.log10(16 * train_len), 200, dtype=torch.float64)
    score = math.log(1.5 * (train_len - k) / k)   # k e^S / (k e^S + L - k) = 0.6
    fig, ax = plt.subplots(figsize=(6.8, 3.6))
    ax.plot(n / train_len, n.log(), ":", color="0.45", label="uniform attention: ln n")
    for name, lam, style, color in [("λ = 1", torch.ones_like(n), "-", BLUE),
                                    ("λ = log_L n", n.log() / math.log(train_len), "--", ORANGE)]:
        strong = (lam * score).exp()
        weights = torch.stack([strong, torch.ones_like(n)]) / (k * strong + n - k)
        entropy = -(k * weights[0] * weights[0].log() + (n - k) * weights[1] * weights[1].log())
        ax.plot(n / train_len, entropy, style, color=color, label=name)
    ax.set(xscale="log", xlabel="length n / L", ylabel="the row's entropy (nats)",
           title=f"{k} strong keys among n: log_L n slows the entropy's rise, it does not stop it")
    ax.set_xticks([1, 2, 4, 8, 16], ["1", "2", "4", "8", "16"])
    ax.minorticks_off()
    ax.legend(loc="upper left")
    return fig


DRAWINGS = {"course_map": course_map, "row_sum_vs_n": row_sum_vs_n,
            "causal_counting": causal_counting, "rope_scaling_angles": rope_scaling_angles,
            "seed_interval": seed_interval, "head_scaling": head_scaling,
            "fixed_or_length_n": fixed_or_length_n, "three_fixes": three_fixes,
            "retrieval_in_text": retrieval_in_text, "per_position_rule": per_position_rule,
            "entropy_invariance": entropy_invariance}


def svg(draw) -> bytes:
    """The figure as SVG bytes, the same on every run: fixed ids, no date, text kept as text."""
    course_style()
    plt.rcParams.update({"svg.hashsalt": "minilm-course", "svg.fonttype": "none"})
    fig = draw()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None})
    plt.close(fig)
    return buffer.getvalue()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="compare, do not write")
    args = parser.parse_args(argv)
    stale = []
    FIGURES.mkdir(exist_ok=True)
    for name, draw in DRAWINGS.items():
        path, data = FIGURES / f"{name}.svg", svg(draw)
        if args.check:
            if not path.exists() or path.read_bytes() != data:
                stale.append(name)
        else:
            path.write_bytes(data)
            print(f"drew {path.relative_to(FIGURES.parent.parent)}")
    if stale:
        print(f"stale figures (redraw with python tools/figures.py): {', '.join(stale)}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
