"""minilm.plots: the lessons' shared style and the helpers that label what a student reads."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from minilm.plots import STYLE, course_style, heatmap, interval_bars  # noqa: E402


def test_course_style_sets_every_setting_of_the_style():
    course_style()
    for key, value in STYLE.items():
        assert plt.rcParams[key] == (list(value) if isinstance(value, tuple) else value), key


def test_a_heatmap_has_labelled_axes_ticks_and_a_labelled_colorbar():
    fig, ax = plt.subplots()
    heatmap(ax, [[0.1, 0.9], [0.5, 0.2]], xlabel="key j", ylabel="query i", colorbar="weight",
            xticks=["a", "b"], yticks=[1, 2], annotate="{:.1f}")
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("key j", "query i")
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b"]
    colorbars = [a for a in fig.axes if a is not ax]
    assert len(colorbars) == 1 and colorbars[0].get_ylabel() == "weight"
    assert sorted(t.get_text() for t in ax.texts) == ["0.1", "0.2", "0.5", "0.9"]
    plt.close(fig)


def test_interval_bars_draw_each_interval_around_its_mean():
    fig, ax = plt.subplots()
    bars = interval_bars(ax, [1, 2], [(0.5, 0.4, 0.7), (0.8, 0.8, 0.9)], marker="o")
    segments = bars.lines[2][0].get_segments()
    assert [tuple(seg[:, 1]) for seg in segments] == [(0.4, 0.7), (0.8, 0.9)]
    plt.close(fig)


def test_the_pictures_of_ideas_draw_their_parts():
    from minilm.plots import draw_gau, draw_retrieval_prompt
    ax = draw_gau()
    texts = " ".join(t.get_text() for t in ax.texts)
    for part in ("u = silu", "v = silu", "z = silu", "relu²", "W_o", "X + O", "residual"):
        assert part in texts, part
    plt.close(ax.figure)
    ax = draw_retrieval_prompt(filler="abcdef", key="42", cut=2)
    cells = "".join(t.get_text() for t in ax.texts if len(t.get_text()) == 1)
    assert cells == "ab@42cdef?42"
    assert len(ax.patches) == len(cells) + 2  # a cell per character, an arrow per row that writes a digit
    plt.close(ax.figure)


def test_a_grid_of_heatmaps_can_share_one_colorbar():
    fig, axes = plt.subplots(1, 2)
    for ax in axes:
        image = heatmap(ax, [[0.0, 1.0]], xlabel="key j", ylabel="query i", colorbar=None, vmin=0, vmax=1)
    assert len(fig.axes) == 2  # no colorbar per panel
    fig.colorbar(image, ax=axes, label="weight")
    assert len(fig.axes) == 3
    plt.close(fig)


def test_every_stored_plot_is_sharp_on_a_high_density_screen():
    """course_style stores a notebook's plots at twice their pixel size ("retina") with the size
    to show them at: a PNG whose pixels are its shown width is blurred on a phone or a laptop's
    high-density screen, in JupyterLab and on the site. Fails for a lesson built without it."""
    import base64
    import json
    import struct
    from pathlib import Path

    lessons = sorted((Path(__file__).resolve().parent.parent / "lessons").glob("[0-9][0-9]_*.ipynb"))
    assert lessons
    for lesson in lessons:
        for cell in json.loads(lesson.read_text(encoding="utf-8"))["cells"]:
            for output in cell.get("outputs", []):
                if "image/png" not in output.get("data", {}):
                    continue
                png = base64.b64decode(output["data"]["image/png"])
                pixels = struct.unpack(">I", png[16:20])[0]   # the IHDR chunk's width
                shown = output.get("metadata", {}).get("image/png", {}).get("width")
                assert shown and pixels >= 1.9 * shown, (lesson.name, pixels, shown)
