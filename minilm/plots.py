"""One look for every lesson's plots, readable in JupyterLab at its default width.

    from minilm.plots import course_style, heatmap, interval_bars
    course_style()                     # once, in a lesson's first code cell

Used by the lessons only: ``import minilm`` does not load matplotlib. What it fixes once, so no
lesson sets it again: the figure size and resolution, font sizes a reader can read (legends too),
a light grid, no top and right spines, and a layout that keeps labels inside the figure.
"""

from __future__ import annotations

import matplotlib.pyplot as plt

STYLE = {
    "figure.figsize": (7.0, 3.8),
    "figure.dpi": 100,
    "figure.constrained_layout.use": True,
    "font.size": 10,
    "axes.titlesize": 11,
    "axes.labelsize": 10,
    "legend.fontsize": 9,
    "legend.framealpha": 0.9,
    "xtick.labelsize": 9,
    "ytick.labelsize": 9,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "lines.linewidth": 1.8,
    "lines.markersize": 5,
    "errorbar.capsize": 3,
    "image.cmap": "viridis",
}


def course_style() -> None:
    """Set the course's matplotlib style (STYLE) for the rest of the session. In a notebook, plots
    are stored at twice their pixel size ("retina") and shown at their size: sharp on a
    high-density screen, in JupyterLab and on the site."""
    plt.rcParams.update(STYLE)
    if "matplotlib_inline" in plt.get_backend():
        from matplotlib_inline.backend_inline import set_matplotlib_formats
        set_matplotlib_formats("retina")


def heatmap(ax, values, *, xlabel: str, ylabel: str, colorbar: str | None, xticks=None, yticks=None,
            vmin=None, vmax=None, cmap=None, annotate: str | None = None, origin="upper"):
    """values (rows, columns) as an image with labelled axes and a labelled colorbar; ``xticks``
    and ``yticks`` label the columns and rows; ``annotate`` (a format such as "{:.2f}") writes each
    value in its cell, in black or white, whichever reads on that cell's colour. A grid of
    heatmaps on one scale shares one colorbar: pass ``colorbar=None`` and add it for the grid,
    ``fig.colorbar(image, ax=axes, label=...)``."""
    values = [[float(v) for v in row] for row in values]
    image = ax.imshow(values, vmin=vmin, vmax=vmax, cmap=cmap, origin=origin, aspect="auto")
    ax.set(xlabel=xlabel, ylabel=ylabel)
    ax.grid(False)
    if xticks is not None:
        ax.set_xticks(range(len(xticks)), [str(t) for t in xticks])
    if yticks is not None:
        ax.set_yticks(range(len(yticks)), [str(t) for t in yticks])
    if annotate is not None:
        low, high = image.get_clim()
        for i, row in enumerate(values):
            for j, value in enumerate(row):
                light = (value - low) / ((high - low) or 1) > 0.6  # viridis is light at its top
                ax.text(j, i, annotate.format(value), ha="center", va="center", fontsize=9,
                        color="black" if light else "white")
    if colorbar is not None:
        ax.figure.colorbar(image, ax=ax, label=colorbar)
    return image


def interval_bars(ax, x, intervals, **style):
    """Means with their intervals as error bars: ``intervals`` holds (mean, low, high) triples,
    as seed_interval returns them."""
    means = [m for m, _, _ in intervals]
    below = [m - low for m, low, _ in intervals]
    above = [high - m for m, _, high in intervals]
    return ax.errorbar(x, means, yerr=[below, above], **style)


def _box(ax, x, y, text, color, width=1.3, height=0.55):
    from matplotlib.patches import FancyBboxPatch
    ax.add_patch(FancyBboxPatch((x - width / 2, y - height / 2), width, height, boxstyle="round,pad=0.04",
                                facecolor=color, edgecolor="0.3", linewidth=1))
    ax.text(x, y, text, ha="center", va="center", fontsize=9)


def _arrow(ax, start, end, text=None):
    ax.annotate("", xy=end, xytext=start, arrowprops=dict(arrowstyle="->", color="0.25", lw=1.2))
    if text:
        ax.text((start[0] + end[0]) / 2 + 0.08, (start[1] + end[1]) / 2, text, fontsize=8, color="0.3")


def draw_gau(ax=None):
    """A picture of one Gated Attention Unit (lesson 1): X to u, v and z, z to q and k by a
    per-dimension scale and offset, q and k to A, then O = (u * A v) W_o, added to X."""
    if ax is None:
        _, ax = plt.subplots(figsize=(9.5, 4.2))
    blue, green, orange, gray = "#cfe2f3", "#d9ead3", "#fce5cd", "#eeeeee"
    _box(ax, 0.0, 0.0, "X  (T, d_model)", gray, width=1.6)
    _box(ax, 1.9, 0.0, "LayerNorm", gray)
    for y, name in ((1.5, "u = silu(X W_u)"), (0.5, "v = silu(X W_v)"), (-1.0, "z = silu(X W_z)")):
        _box(ax, 4.1, y, name, green, width=2.0)
        _arrow(ax, (2.55, 0.0), (3.1, y))
    _box(ax, 6.3, -0.45, "q = γ_q z + β_q", orange, width=1.9)
    _box(ax, 6.3, -1.55, "k = γ_k z + β_k", orange, width=1.9)
    _arrow(ax, (5.1, -1.0), (5.35, -0.45))
    _arrow(ax, (5.1, -1.0), (5.35, -1.55))
    _box(ax, 8.7, -1.0, "A = relu²(q kᵀ / √d_k) / n", blue, width=2.6)
    _arrow(ax, (7.25, -0.45), (7.4, -0.9))
    _arrow(ax, (7.25, -1.55), (7.4, -1.1))
    _box(ax, 8.7, 0.5, "A v", blue, width=1.0)
    _arrow(ax, (8.7, -0.72), (8.7, 0.22))
    _arrow(ax, (5.1, 0.5), (8.2, 0.5))
    _box(ax, 8.7, 1.5, "u ⊙ (A v)", green, width=1.5)
    _arrow(ax, (8.7, 0.78), (8.7, 1.22))
    _arrow(ax, (5.1, 1.5), (7.95, 1.5))
    _box(ax, 10.9, 1.5, "O = (u ⊙ A v) W_o", green, width=2.3)
    _arrow(ax, (9.45, 1.5), (9.75, 1.5))
    _box(ax, 10.9, 0.0, "X + O", gray, width=1.2)
    _arrow(ax, (10.9, 1.22), (10.9, 0.28))
    _arrow(ax, (0.8, 0.0), (1.25, 0.0))
    ax.plot([0.0, 0.0, 11.9, 11.9], [-0.28, -2.3, -2.3, 0.0], color="0.6", lw=1, ls="--")  # the residual
    _arrow(ax, (11.9, 0.0), (11.5, 0.0))
    ax.text(5.9, -2.2, "residual: X is added back", fontsize=8, color="0.45", ha="center")
    ax.text(4.1, 2.2, "width e (gates and values)", fontsize=8, ha="center", color="0.3")
    ax.text(6.3, 0.12, "width d_k, one head", fontsize=8, ha="center", color="0.3")
    ax.set(xlim=(-1.0, 12.3), ylim=(-2.6, 2.5), title="One Gated Attention Unit")
    ax.axis("off")
    return ax


def draw_retrieval_prompt(ax=None, *, filler: str = "kqzfbwmhx", key: str = "273", cut: int = 4):
    """A picture of a retrieval prompt (lessons 9-12): filler, the needle (a marker and the key)
    at some depth, more filler, the question and the key; the loss is on the key's digits after the
    question, and the rows that predict them must read the needle, far back."""
    from matplotlib.patches import FancyArrowPatch, Rectangle
    if ax is None:
        _, ax = plt.subplots(figsize=(10, 2.6))
    text = filler[:cut] + "@" + key + filler[cut:] + "?" + key
    answer_start = len(text) - len(key)
    colors = {"filler": "#eeeeee", "needle": "#fce5cd", "question": "#cfe2f3", "answer": "#d9ead3"}
    for i, char in enumerate(text):
        kind = ("answer" if i >= answer_start else "question" if i == answer_start - 1
                else "needle" if cut <= i <= cut + len(key) else "filler")
        ax.add_patch(Rectangle((i, 0), 0.94, 1, facecolor=colors[kind], edgecolor="0.5"))
        ax.text(i + 0.47, 0.5, char, ha="center", va="center", family="monospace", fontsize=11)
    for row in range(answer_start - 1, len(text) - 1):  # the rows whose next character is a digit
        ax.add_patch(FancyArrowPatch((row + 0.47, 1.02), (cut + 1.4, 1.02), connectionstyle="arc3,rad=0.3",
                                     arrowstyle="->", mutation_scale=10, color="tab:red", lw=1))
    ax.text(cut + len(key) / 2 + 0.5, -0.45, "needle: marker and key", ha="center", fontsize=9)
    ax.text(answer_start + 0.5, -0.45, "question, then the key: the loss is on its digits", ha="center",
            fontsize=9)
    ax.text((answer_start + cut) / 2 + 0.5, 2.75, "the rows that write the answer must read the needle",
            ha="center", fontsize=9, color="tab:red")
    ax.text(0.1, -0.45, "filler", fontsize=9)
    ax.set(xlim=(-0.3, len(text) + 0.3), ylim=(-0.8, 3.1))
    ax.axis("off")
    return ax


def draw_layer_keys(layers, *, length: int, query: int | None = None, train_len: int | None = None,
                    ax=None):
    """Which keys the query at position ``query`` (the last by default) sees in each layer:
    ``layers`` as Config.layers gives them, ((pos, window), ...), first layer at the bottom; a
    cell per key, coloured where that layer's attention reaches it (RoPE layers in one colour,
    NoPE layers in another); ``train_len`` L marks the training length with a dashed line."""
    from matplotlib.patches import Patch, Rectangle
    ax = ax or plt.subplots(figsize=(7.0, 0.5 * len(layers) + 1.6))[1]
    query = length - 1 if query is None else query
    colours = {"rope": "#1f77b4", "nope": "#d62728"}
    for row, (pos, window) in enumerate(layers):
        span = query + 1 if window is None else min(window, query + 1)
        for key in range(length):
            seen = query - span < key <= query
            ax.add_patch(Rectangle((key, row), 0.9, 0.8, color=colours[pos] if seen else "#e8e8e8",
                                   alpha=0.85 if seen else 1.0))
        label = f"layer {row}: {pos.replace('rope', 'RoPE').replace('nope', 'NoPE')}"
        ax.text(-0.6, row + 0.4, label + ("" if window is None else f", window {window}"),
                ha="right", va="center", fontsize=9)
    if train_len is not None:
        ax.axvline(train_len - 0.05, color="black", ls="--", lw=1.2)
        ax.text(train_len + 0.1, len(layers) - 0.05, f"L = {train_len}", va="bottom", fontsize=9)
    ax.set(xlim=(-0.2, length + 0.2), ylim=(-0.3, len(layers) + 0.4), xlabel="key position j",
           title=f"the keys query i = {query} sees, layer by layer")
    ax.set_yticks([])
    ax.grid(False)
    ax.spines[["left"]].set_visible(False)
    ax.legend(handles=[Patch(color=colours["rope"], label="seen by a RoPE layer"),
                       Patch(color=colours["nope"], label="seen by a NoPE layer"),
                       Patch(color="#e8e8e8", label="not seen")],
              loc="upper left", bbox_to_anchor=(0, -0.35), ncol=3, frameon=False)
    return ax


def plot_scorecard(card: dict, measures=None):
    """One panel per measure of a scorecard (minilm.scorecard), its multiples of L on a log axis:
    each name's mean with its 90% interval over seeds (a bar where there are two or more), the
    names offset a little so that no interval hides another. Returns the figure."""
    measures = measures or list(next(iter(card.values())))
    fig, axes = plt.subplots(1, len(measures), figsize=(3.4 * len(measures), 3.6), squeeze=False,
                             layout="constrained")
    for ax, measure in zip(axes[0], measures):
        for k, (name, row) in enumerate(card.items()):
            points = row[measure]
            x = [m * 1.06 ** (k - (len(card) - 1) / 2) for m in points]
            means = [s["mean"] for s in points.values()]
            ax.plot(x, means, "o-" if len(x) > 1 else "o", label=name)
            bars = [(xi, s["low"], s["high"]) for xi, s in zip(x, points.values())
                    if s["low"] is not None]
            if bars:
                ax.vlines([b[0] for b in bars], [b[1] for b in bars], [b[2] for b in bars],
                          color=ax.lines[-1].get_color(), lw=1.5)
        ax.set(xscale="log", xlabel="length / L", ylabel=measure, title=measure)
        ax.set_xticks([1, 2, 4, 8, 16], ["1", "2", "4", "8", "16"])
    fig.legend(*axes[0][0].get_legend_handles_labels(), loc="outside lower center",
               ncol=min(len(card), 3), fontsize=8)   # three a row: readable at a phone's width
    return fig
