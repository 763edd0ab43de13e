"""Figures that fit a laptop screen: pages of small panels under one title and one legend.

A suite has some thirty benchmark/parameter sets, three times that under --contend loads, so a
plot is drawn as pages of at most COLS x ROWS panels, each page its own PNG. Importing this
module needs matplotlib (Agg: no display).
"""

import math
import os
import textwrap
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (the backend must be chosen first)

DPI = 100
# The long side of every PNG, whatever the input: a laptop screen shows it whole. tools/report
# promises at most 2400 pixels; this leaves room for rounding.
MAX_INCHES = 2000 / DPI
COLS, ROWS = 4, 3
PANEL = (4.6, 3.4)  # inches: a title of two lines, tick labels at 8 pt and the bars or lines
TITLE_BAND = 0.45  # inches above the legend for a title of one line
TITLE_LINE = 0.22  # inches for each further line of the title
TITLE_CHAR = 0.1  # inches a character of the title takes at 11 pt, with room to spare
LEGEND_ROW = 0.22  # inches per row of the shared legend
LEGEND_ENTRY = 1.9  # inches of width one legend entry may take

plt.rcParams.update({"font.size": 9, "axes.titlesize": 9, "axes.labelsize": 9,
                     "xtick.labelsize": 8, "ytick.labelsize": 8, "legend.fontsize": 9,
                     "figure.titlesize": 11})


def pages(items, per_page):
    return [items[i:i + per_page] for i in range(0, len(items), per_page)]


def file_names(stem, count):
    """STEM.png for a single page, so a report of a few benchmarks keeps the plain name;
    STEM-1.png ... STEM-N.png for more."""
    if count == 1:
        return [f"{stem}.png"]
    return [f"{stem}-{k}.png" for k in range(1, count + 1)]


def wrap(title, width=55):
    """A panel title broken at spaces into lines that fit PANEL's width at 9 pt, a load's name
    ("[contend 1]") kept on one line."""
    return textwrap.fill(title.replace("[contend ", "[contend\u00a0"), width)


def series_colors(names):
    """A colour per series name, the same in every panel and on every page, so the one legend
    of a page serves all its panels."""
    if len(names) <= 10:
        cmap = plt.get_cmap("tab10")
        return {n: cmap(i) for i, n in enumerate(names)}
    if len(names) <= 20:
        cmap = plt.get_cmap("tab20")
        return {n: cmap(i) for i, n in enumerate(names)}
    cmap = plt.get_cmap("turbo")
    return {n: cmap(i / (len(names) - 1)) for i, n in enumerate(names)}


@dataclass
class Sheet:
    """One page: a figure, its visible panels, the part of the figure (fractions) the panels may
    take, and where the shared legend goes."""

    fig: object
    axes: list
    panels_rect: tuple
    legend_at: dict
    title: str
    title_y: float

    def legend(self, handles, labels):
        self.fig.legend(handles, labels, frameon=False, **self.legend_at)

    def save(self, path):
        self.fig.tight_layout(rect=self.panels_rect)
        # After the layout, which would keep room for a title a second time above the panels.
        self.fig.suptitle(self.title, y=self.title_y, va="center")
        self.fig.savefig(path, dpi=DPI)
        plt.close(self.fig)
        return path


def sheet(title, n, legend_entries=0, cols=COLS, panel=PANEL):
    """A page of n panels, cols to a row, the unused ones hidden, under the title and a legend
    of legend_entries: above the panels, or beside a single row of them where it would take more
    than two rows above. A page past MAX_INCHES (only a single panel sized from the data can get
    there) is shrunk to it: cramped beats unreadable on a screen."""
    cols = min(cols, n)
    rows = math.ceil(n / cols)
    width, height = cols * panel[0], rows * panel[1]
    top_cols = max(1, min(legend_entries, int(width / LEGEND_ENTRY)))
    top_rows = math.ceil(legend_entries / top_cols)
    beside = rows == 1 and top_rows > 2
    side_cols = math.ceil(legend_entries * LEGEND_ROW / (panel[1] - TITLE_BAND)) if beside else 0
    right = side_cols * LEGEND_ENTRY
    lines = textwrap.wrap(title, max(20, int((width + right) / TITLE_CHAR)))
    title_band = TITLE_BAND + TITLE_LINE * (len(lines) - 1)
    band = title_band + (0 if beside else LEGEND_ROW * top_rows)
    full_w, full_h = width + right, height + band
    if beside:
        legend_at = {"loc": "center left", "ncol": side_cols,
                     "bbox_to_anchor": (1 - right / full_w, 0.5 * (1 - band / full_h))}
    else:
        legend_at = {"loc": "upper center", "ncol": top_cols,
                     "bbox_to_anchor": (0.5, 1 - title_band / full_h)}
    scale = min(1.0, MAX_INCHES / full_w, MAX_INCHES / full_h)
    fig, axes = plt.subplots(rows, cols, figsize=(full_w * scale, full_h * scale), squeeze=False)
    flat = [ax for row in axes for ax in row]
    for ax in flat[n:]:
        ax.set_visible(False)
    return Sheet(fig, flat[:n], (0, 0, 1 - right / full_w, 1 - band / full_h), legend_at,
                 "\n".join(lines), 1 - 0.5 * title_band / full_h)


def write_pages(out_dir, stem, caption, items, draw, per_page=COLS * ROWS):
    """Draws items page by page (draw(page) returns the page's Sheet) into STEM[-K].png;
    returns (caption, path, items of the page) per page, '(K/N)' in the caption when N > 1."""
    chunks = pages(items, per_page)
    made = []
    for k, (page, name) in enumerate(zip(chunks, file_names(stem, len(chunks))), start=1):
        path = draw(page).save(os.path.join(out_dir, name))
        made.append((caption + (f" ({k}/{len(chunks)})" if len(chunks) > 1 else ""), path, page))
    return made
