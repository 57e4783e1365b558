"""The statistics pages' plots, as geometry for the SVG templates
(``templates/stats/_charts.html``): the server draws every plot, the page
runs no chart code. Each function returns plain numbers in a fixed
``viewBox`` (the SVG scales to the page's width: a 390 px phone, a 1280 px
screen) and the labels of its axes.

>>> spread_plot([("ana", {"p10": 200_000, "p25": 230_000, "median": 260_000,
...   "p75": 300_000, "p90": 350_000}, "#e53935")])["rows"][0]["x50"]
321.4
"""

from __future__ import annotations

WIDTH = 640
LEFT = 90       # room for the names
RIGHT = 16
ROW = 34
AXIS = 28


def _scale(top_ms: int):
    span = WIDTH - LEFT - RIGHT
    return lambda us: round(LEFT + span * min(max(us, 0), top_ms * 1000) / (top_ms * 1000), 1)


def _ticks(top_ms: int, step_ms: int, x) -> list[dict]:
    return [{"x": x(ms * 1000), "label": str(ms)} for ms in range(0, top_ms + 1, step_ms)]


def top_of(values_us, least_ms: int = 600, step_ms: int = 200) -> int:
    """The axis's end (ms): the slowest value rounded up to a step, at least ``least_ms``."""
    most = max((v for v in values_us if v is not None), default=0) // 1000
    return max(least_ms, -(-most // step_ms) * step_ms)


def spread_plot(rows: list[tuple[str, dict, str]]) -> dict:
    """One line per player: whiskers p10-p90, a box p25-p75, the median."""
    shown = [(n, s, c) for n, s, c in rows if s.get("median") is not None]
    top = top_of([s["p90"] for _, s, _ in shown])
    x = _scale(top)
    out = []
    for i, (name, s, colour) in enumerate(shown):
        y = 8 + i * ROW
        out.append({"name": name, "colour": colour, "y": y, "mid": y + ROW // 2 - 4,
                    "x10": x(s["p10"]), "x25": x(s["p25"]), "x50": x(s["median"]),
                    "x75": x(s["p75"]), "x90": x(s["p90"]),
                    "w": round(max(x(s["p75"]) - x(s["p25"]), 2), 1)})
    height = 8 + len(out) * ROW
    return {"width": WIDTH, "height": height + AXIS, "axis_y": height, "rows": out,
            "ticks": _ticks(top, 200, x), "left": LEFT, "right": WIDTH - RIGHT}


def histogram_plot(bins: list[int], bin_ms: int) -> dict:
    """Bars of counts per ``bin_ms`` (the last bin: everything slower)."""
    top_ms = bin_ms * len(bins)
    x = _scale(top_ms)
    h = 150
    most = max(bins, default=0) or 1
    bars = []
    for i, n in enumerate(bins):
        bh = round(h * n / most, 1)
        bars.append({"x": x(i * bin_ms * 1000) + 1, "w": round(x(bin_ms * 1000) - LEFT - 2, 1),
                     "y": round(8 + h - bh, 1), "h": bh, "n": n,
                     "from_ms": i * bin_ms, "to_ms": None if i == len(bins) - 1 else (i + 1) * bin_ms})
    return {"width": WIDTH, "height": 8 + h + AXIS, "axis_y": 8 + h, "bars": bars,
            "ticks": _ticks(top_ms - bin_ms, 200, x), "most": most, "left": LEFT,
            "right": WIDTH - RIGHT}


def trend_plot(points: list[tuple[str, int]]) -> dict:
    """The median per night, oldest left: a line through one dot a night."""
    h = 150
    top = top_of([us for _, us in points])
    n = len(points)
    span = WIDTH - LEFT - RIGHT
    dots = []
    for i, (night, us) in enumerate(points):
        px = round(LEFT + (span * i / (n - 1) if n > 1 else span / 2), 1)
        py = round(8 + h - h * min(us, top * 1000) / (top * 1000), 1)
        dots.append({"x": px, "y": py, "night": night, "ms": us // 1000})
    yticks = [{"y": round(8 + h - h * ms / top, 1), "label": str(ms)}
              for ms in range(0, top + 1, 200)]
    every = max(1, -(-n // 6))      # at most 6 dates under the axis
    return {"width": WIDTH, "height": 8 + h + AXIS, "axis_y": 8 + h, "dots": dots,
            "line": " ".join(f"{d['x']},{d['y']}" for d in dots), "yticks": yticks,
            "labels": dots[::every], "left": LEFT, "right": WIDTH - RIGHT}


def rating_plot(points: list[tuple[str, float]]) -> dict:
    """A player's rating in one game at the end of each night they played
    it, oldest left; the vertical axis spans the ratings reached (a rating
    may be below zero), in steps of 5."""
    h = 100
    low = min(min(r for _, r in points), 0)
    high = max(max(r for _, r in points), low + 5)
    bottom, top = 5 * (low // 5), 5 * -(-high // 5)
    n = len(points)
    span = WIDTH - LEFT - RIGHT

    def y(r):
        return round(8 + h - h * (r - bottom) / (top - bottom), 1)
    dots = [{"x": round(LEFT + (span * i / (n - 1) if n > 1 else span / 2), 1), "y": y(r),
             "night": night, "rating": r} for i, (night, r) in enumerate(points)]
    step = 5 * max(1, -(-int(top - bottom) // 20))     # at most 4 lines across
    yticks = [{"y": y(v), "label": str(int(v))} for v in range(int(bottom), int(top) + 1, step)]
    every = max(1, -(-n // 6))
    return {"width": WIDTH, "height": 8 + h + AXIS, "axis_y": 8 + h, "dots": dots,
            "line": " ".join(f"{d['x']},{d['y']}" for d in dots), "yticks": yticks,
            "labels": dots[::every], "left": LEFT, "right": WIDTH - RIGHT}


__all__ = ["histogram_plot", "rating_plot", "spread_plot", "top_of", "trend_plot"]
