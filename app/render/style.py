"""Text styles: how a translation is lettered. Plain frozen data, no Qt.

`TextStyle` is a complete style (the project's default); `StyleOverride` holds what one block
changes (every field None = "as the project default"). `resolve(default, override)` merges them.

    font          "" = the app's own face for the script (Comic Neue for Latin, Noto Sans CJK for
                  Japanese / Chinese / Korean); a shipped role ("comic", "comic-bold", "cjk"...), the
                  family name of an installed font ("DejaVu Sans"), or a font file path
    min_size      smallest font size in pixels the fit search may pick
    max_size      largest font size in pixels
    color         text colour, "#rrggbb"
    outline_width outline (stroke) width in pixels, 0 = none
    outline_color outline colour, "#rrggbb"
    align         "center", "left" or "right" (lines within the bubble)
    uppercase     set the text in capitals (comic convention)
    direction     "auto" (vertical for Japanese / Chinese text), "horizontal" or "vertical"
    line_spacing  line (or column) pitch as a multiple of the font size
    hyphenate     break words too wide for the bubble at hyphenation points (pyphen)
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, fields, replace

ALIGNS = ("center", "left", "right")
DIRECTIONS = ("auto", "horizontal", "vertical")
_COLOR = re.compile(r"^#[0-9a-fA-F]{6}$")
SIZE_RANGE = (4, 400)  # pixels: what the style editor and the files accept


@dataclass(frozen=True)
class TextStyle:
    font: str = ""
    min_size: int = 12
    max_size: int = 40
    color: str = "#000000"
    outline_width: int = 0
    outline_color: str = "#ffffff"
    align: str = "center"
    uppercase: bool = False
    direction: str = "auto"
    line_spacing: float = 1.15
    hyphenate: bool = True

    def __post_init__(self) -> None:
        check_values(asdict(self))
        if self.min_size > self.max_size:
            raise ValueError(f"min_size ({self.min_size}) is larger than max_size ({self.max_size})")


@dataclass(frozen=True)
class StyleOverride:
    """A block's changes to the project's style; None = inherit."""

    font: str | None = None
    min_size: int | None = None
    max_size: int | None = None
    color: str | None = None
    outline_width: int | None = None
    outline_color: str | None = None
    align: str | None = None
    uppercase: bool | None = None
    direction: str | None = None
    line_spacing: float | None = None
    hyphenate: bool | None = None

    def __post_init__(self) -> None:
        check_values({k: v for k, v in asdict(self).items() if v is not None})

    def is_empty(self) -> bool:
        return all(getattr(self, f.name) is None for f in fields(self))


STYLE_FIELDS = tuple(f.name for f in fields(TextStyle))


def check_values(values: dict) -> None:
    """ValueError naming the first bad field of a (partial) style given as a dict."""
    for key, value in values.items():
        if key not in STYLE_FIELDS:
            raise ValueError(f"unknown style field {key!r}")
        want = {f.name: f.type for f in fields(TextStyle)}[key]
        if want == "int" and (not isinstance(value, int) or isinstance(value, bool)):
            raise ValueError(f"{key}: expected an integer, not {value!r}")
        if want == "bool" and not isinstance(value, bool):
            raise ValueError(f"{key}: expected true or false, not {value!r}")
        if want == "float" and (not isinstance(value, (int, float)) or isinstance(value, bool)):
            raise ValueError(f"{key}: expected a number, not {value!r}")
        if want == "str" and not isinstance(value, str):
            raise ValueError(f"{key}: expected text, not {value!r}")
    lo, hi = SIZE_RANGE
    for key in ("min_size", "max_size"):
        if key in values and not lo <= values[key] <= hi:
            raise ValueError(f"{key}: {values[key]} px is outside {lo}..{hi}")
    if "outline_width" in values and not 0 <= values["outline_width"] <= 50:
        raise ValueError(f"outline_width: {values['outline_width']} px is outside 0..50")
    for key in ("color", "outline_color"):
        if key in values and not _COLOR.match(values[key]):
            raise ValueError(f"{key}: expected a colour like #1a2b3c, not {values[key]!r}")
    if "align" in values and values["align"] not in ALIGNS:
        raise ValueError(f"align: expected one of {', '.join(ALIGNS)}, not {values['align']!r}")
    if "direction" in values and values["direction"] not in DIRECTIONS:
        raise ValueError(f"direction: expected one of {', '.join(DIRECTIONS)}, not {values['direction']!r}")
    if "line_spacing" in values and not 0.5 <= values["line_spacing"] <= 3.0:
        raise ValueError(f"line_spacing: {values['line_spacing']} is outside 0.5..3")


def resolve(default: TextStyle, override: StyleOverride | None) -> TextStyle:
    """The style a block is lettered with: `default` with the override's set fields.

    When the override's sizes cross the default's (a block min above the project max), the range
    is widened to hold both rather than rejected."""
    if override is None:
        return default
    changes = {k: v for k, v in asdict(override).items() if v is not None}
    lo = changes.get("min_size", default.min_size)
    hi = changes.get("max_size", default.max_size)
    if lo > hi:
        if "min_size" in changes and "max_size" not in changes:
            changes["max_size"] = lo
        else:
            changes["min_size"] = hi
    return replace(default, **changes)


def style_to_dict(style: TextStyle) -> dict:
    return asdict(style)


def style_from_dict(data) -> TextStyle:
    """A TextStyle from JSON data (missing fields take their defaults); ValueError names a bad field."""
    if not isinstance(data, dict):
        raise ValueError("expected an object")
    unknown = set(data) - set(STYLE_FIELDS)
    if unknown:
        raise ValueError(f"unknown style field(s) {', '.join(sorted(unknown))}")
    return TextStyle(**_coerce(data))


def override_to_dict(override: StyleOverride | None) -> dict | None:
    """The set fields only; None for no override."""
    if override is None or override.is_empty():
        return None
    return {k: v for k, v in asdict(override).items() if v is not None}


def override_from_dict(data) -> StyleOverride | None:
    if data is None:
        return None
    if not isinstance(data, dict):
        raise ValueError("expected an object or null")
    unknown = set(data) - set(STYLE_FIELDS)
    if unknown:
        raise ValueError(f"unknown style field(s) {', '.join(sorted(unknown))}")
    override = StyleOverride(**_coerce({k: v for k, v in data.items() if v is not None}))
    return None if override.is_empty() else override


def _coerce(data: dict) -> dict:
    """JSON gives 1 for 1.0: accept integers where a float is meant."""
    out = dict(data)
    if isinstance(out.get("line_spacing"), int) and not isinstance(out.get("line_spacing"), bool):
        out["line_spacing"] = float(out["line_spacing"])
    return out
