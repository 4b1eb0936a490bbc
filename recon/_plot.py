"""Figure and HTML helpers shared by ``recon report`` and ``recon results``.

Figures are drawn on matplotlib's Agg canvas at fixed pixel sizes so pages lay out
predictably. matplotlib is imported inside the functions, never at module import:
``recon --help`` must not pay for it.
"""
from __future__ import annotations

import html
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ._version import __version__

FIGURE_WIDTH = 960
FIGURE_HEIGHT = 540
DPI = 100
RUNG_NAMES = ["nothing usable", "editable workspace", "reconstruct.py present", "speaks the contract",
              "runs on hidden scenarios", "outputs follow the truth, not replays", "matches hidden semantics"]
SOFT_PASS = 0.95
DENSE_COLOR = "#3b6fb6"
BINARY_COLOR = "#e08a3c"

CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em auto; max-width: 1000px;
       color: #222; padding: 0 1em; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { margin-top: 1.6em; border-bottom: 1px solid #ddd; }
.meta { color: #666; font-size: 0.9em; }
.cards { display: flex; gap: 1em; flex-wrap: wrap; margin: 1em 0; }
.card { border: 1px solid #ddd; border-radius: 6px; padding: 0.6em 1em; min-width: 8em; }
.card .v { font-size: 1.5em; font-weight: 600; } .card .k { color: #666; font-size: 0.85em; }
figure { margin: 1.2em 0; } figure img { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.9em; margin-top: 0.3em; }
table { border-collapse: collapse; width: 100%; font-size: 0.9em; margin: 0.6em 0 1.2em; }
th, td { border-bottom: 1px solid #e4e4e4; padding: 0.3em 0.5em; text-align: left; vertical-align: top; }
th { background: #f5f5f5; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.bar { display: inline-block; height: 0.7em; background: #3b6fb6; vertical-align: middle; margin-right: 0.4em; }
.pass { color: #1a7f37; font-weight: 600; } .fail { color: #999; }
code { font-size: 0.9em; }
"""


@dataclass
class Figure:
    """A figure of a page: its PNG file name, pixel size, title and caption."""

    name: str
    width: int
    height: int
    title: str
    caption: str


def escape(value: Any) -> str:
    """``value`` as text safe inside HTML elements and quoted attributes."""
    return html.escape(str(value), quote=True)


def duration(seconds: float | None) -> str:
    """A time span for a table cell: "-", "45 s", "12 min" or "1.25 h"."""
    if seconds is None:
        return "-"
    if seconds >= 3600:
        return f"{seconds / 3600:.2f} h"
    if seconds >= 120:
        return f"{seconds / 60:.0f} min"
    return f"{seconds:.0f} s"


def new_figure(height: int = FIGURE_HEIGHT, width: int = FIGURE_WIDTH) -> Any:
    """A matplotlib figure of ``width`` x ``height`` pixels (no pyplot, no display)."""
    from matplotlib.figure import Figure as MplFigure  # noqa: PLC0415 - lazy: never at `recon --help`

    return MplFigure(figsize=(width / DPI, height / DPI), dpi=DPI, layout="constrained")


def save_png(fig: Any, path: Path) -> None:
    """Render ``fig`` with the Agg canvas to ``path``."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: PLC0415

    FigureCanvasAgg(fig)
    fig.savefig(path, dpi=DPI, format="png", metadata={"Software": f"recon {__version__}"})


def palette(n: int) -> list[Any]:
    """``n`` distinguishable colours (tab10 up to ten, tab20 beyond, cycling)."""
    from matplotlib import colormaps  # noqa: PLC0415

    cmap = colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(n)]


def rung_ticklabels() -> list[str]:
    """Tick labels ``k\\nrung name`` for rungs 0 to 6."""
    return [f"{k}\n" + textwrap.fill(RUNG_NAMES[k], 14) for k in range(7)]


def strip_spines(ax: Any) -> None:
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
