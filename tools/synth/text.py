"""Japanese text for the synthetic pages: character sets, random manga-like strings, and layout.

Text is drawn glyph by glyph into an ink mask ("L", 255 = ink). Vertical text runs in columns,
top to bottom, the first column on the right; the few marks that change in vertical writing are
rotated 90 degrees clockwise (ー -> │, 「 -> ﹁, … -> ︙) or moved to the upper right (、。).
The ground-truth string always keeps the ordinary (horizontal) characters.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from PIL import Image, ImageDraw

from tools.synth.fonts import EM_ASCENT, FontFace, load_font

_SMALL_KANA = set("ぁぃぅぇぉっゃゅょゎァィゥェォッャュョヮ")
HIRAGANA = "".join(chr(c) for c in range(0x3041, 0x3094))
KATAKANA = "".join(chr(c) for c in range(0x30A1, 0x30F5))

# About 450 common kanji: the first three school grades plus words common in manga dialogue.
KANJI = "".join(dict.fromkeys(
    "一右雨円王音下火花貝学気九休玉金空月犬見五口校左三山子四糸字耳七車手十出女小上森人水正生青夕"
    "石赤千川先早草足村大男竹中虫町天田土二日入年白八百文木本名目立力林六"
    "引羽雲園遠何科夏家歌画回会海絵外角楽活間丸岩顔汽記帰弓牛魚京強教近兄形計元言原戸古午後語工公"
    "広交光考行高黄合谷国黒今才細作算止市矢姉思紙寺自時室社弱首秋週春書少場色食心新親図数西声星晴"
    "切雪船線前組走多太体台地池知茶昼長鳥朝直通弟店点電刀冬当東答頭同道読内南肉馬売買麦半番父風分"
    "聞米歩母方北毎妹万明鳴毛門夜野友用曜来里理話"
    "悪安暗医委意育員院飲運泳駅央横屋温化荷界開階寒感漢館岸起期客究急級宮球去橋業曲局銀区苦具君係"
    "軽血決研県庫湖向幸港号根祭皿仕死使始指歯詩次事持式実写者主守取酒受州拾終習集住重宿所暑助昭消"
    "商章勝乗植申身神真深進世整昔全相送想息速族他打対待代第題炭短談着注柱丁帳調追定庭笛鉄転都度投"
    "豆島湯登等動童農波配倍箱畑発反坂板皮悲美鼻筆氷表秒病品負部服福物平返勉放味命面問役薬由油有遊"
    "予羊洋葉陽様落流旅両緑礼列練路和"
    "俺僕彼誰殺愛恋戦闘敵魔法剣輩徒姫私君様好嫌怖逃待助信決絶対最強負勝約束夢願忘覚悟能無理違"))
_RARE = set("ゐゑゎヰヱヮ")
HIRAGANA_COMMON = "".join(c for c in HIRAGANA if c not in _SMALL_KANA and c not in _RARE)
KATAKANA_COMMON = "".join(c for c in KATAKANA if c not in _SMALL_KANA and c not in _RARE)
PUNCT_END = ("。", "！", "？", "…", "！？", "！！", "…。", "っ！", "ー！", "？！")
DIGITS = "0123456789"
LATIN = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
_LATIN_WORDS = ("OK", "NO", "TV", "CD", "SOS", "Hey", "DVD", "PC", "GO", "Wi", "ok", "LOVE", "A", "B", "X")

# Characters drawn rotated 90 degrees clockwise in vertical text.
_ROTATE_VERTICAL = set("ー～〜…‥「」『』（）【】―－—~〈〉《》")
# Characters moved to the upper right of their cell in vertical text (fraction of the em).
_SHIFT_VERTICAL = {"、": (0.58, -0.6), "。": (0.58, -0.6), **{c: (0.1, -0.1) for c in _SMALL_KANA}}


def charset() -> str:
    """Every character the generator can put in a ground-truth string (sorted, unique)."""
    extra = "".join(PUNCT_END) + "、。「」『』…ー～・" + DIGITS + LATIN
    return "".join(sorted(set(HIRAGANA + KATAKANA + KANJI + extra)))


def _pick(rng: np.random.Generator, chars: str, n: int) -> str:
    return "".join(chars[i] for i in rng.integers(0, len(chars), size=n))


def random_text(rng: np.random.Generator, min_len: int = 1, max_len: int = 20,
                latin: bool = True) -> str:
    """A manga-like line of `min_len`..`max_len` characters (kana, kanji, punctuation, digits, Latin)."""
    target = int(np.clip(round(rng.gamma(2.2, 3.2)), min_len, max_len))
    parts: list[str] = []
    length = 0
    while length < target:
        r = rng.random()
        if r < 0.40:
            part = _pick(rng, HIRAGANA_COMMON if rng.random() < 0.8 else HIRAGANA, int(rng.integers(1, 6)))
        elif r < 0.58:
            part = _pick(rng, KANJI, int(rng.integers(1, 4)))
        elif r < 0.74:
            part = _pick(rng, KATAKANA_COMMON if rng.random() < 0.8 else KATAKANA, int(rng.integers(2, 6)))
            if rng.random() < 0.4:
                cut = int(rng.integers(1, len(part) + 1))
                part = part[:cut] + "ー" + part[cut:]
        elif r < 0.82 and length > 0 and parts[-1][-1] != "、":
            part = "、"
        elif r < 0.88:
            part = _pick(rng, DIGITS, int(rng.integers(1, 4)))
        elif r < 0.93 and latin:
            part = _LATIN_WORDS[int(rng.integers(len(_LATIN_WORDS)))] if rng.random() < 0.6 else \
                _pick(rng, LATIN, int(rng.integers(1, 4)))
        else:
            part = _pick(rng, HIRAGANA + KATAKANA, int(rng.integers(1, 4)))
        parts.append(part)
        length += len(part)
    text = "".join(parts)
    end = PUNCT_END[int(rng.integers(len(PUNCT_END)))] if rng.random() < 0.55 else ""
    text = text[: max(target - len(end), 1)].rstrip("、") + end
    text = text[:target]
    if target >= 4 and rng.random() < 0.12:
        text = ("「" + text[: target - 2] + "」") if rng.random() < 0.8 else ("『" + text[: target - 2] + "』")
    return text or "あ"


def split_lines(text: str, max_lines: int, per_line: int) -> list[str]:
    """Split `text` into at most `max_lines` balanced lines of about `per_line` characters."""
    n = max(1, min(max_lines, math.ceil(len(text) / max(per_line, 1))))
    size = math.ceil(len(text) / n)
    lines = [text[i:i + size] for i in range(0, len(text), size)]
    # Keep a leading 、。 with the line before it (a line never starts with them in print).
    for i in range(1, len(lines)):
        while lines[i] and lines[i][0] in "、。！？」』…" and len(lines[i]) > 1:
            lines[i - 1] += lines[i][0]
            lines[i] = lines[i][1:]
    return [ln for ln in lines if ln]


@dataclass(frozen=True)
class TextStyle:
    face: FontFace
    size: int  # pixels per em
    advance: float = 1.0  # vertical: step between glyphs, in em
    line_gap: float = 0.35  # space between columns / lines, in em


def _is_half_width(ch: str) -> bool:
    return ord(ch) < 0x2000


def _line_extent(line: str, style: TextStyle, vertical: bool) -> float:
    """Length of one line along the writing direction, in pixels."""
    s = style.size
    if vertical:
        return len(line) * s * style.advance
    font = load_font(style.face, s)
    return sum(font.getlength(ch) if _is_half_width(ch) else s for ch in line)


def measure(lines: list[str], style: TextStyle, vertical: bool) -> tuple[int, int]:
    """(width, height) in pixels of the text cells of `lines` (ink may be slightly smaller)."""
    s = style.size
    along = max(_line_extent(ln, style, vertical) for ln in lines)
    across = len(lines) * s + (len(lines) - 1) * s * style.line_gap
    w, h = (across, along) if vertical else (along, across)
    return int(math.ceil(w)) + 2, int(math.ceil(h)) + 2


@functools.lru_cache(maxsize=2048)
def _rotated_glyph(face: FontFace, size: int, ch: str) -> Image.Image:
    """The glyph in its em square, turned 90 degrees clockwise ("L", 255 = ink)."""
    cell = Image.new("L", (size, size), 0)
    ImageDraw.Draw(cell).text((0, EM_ASCENT * size), ch, font=load_font(face, size), fill=255, anchor="ls")
    return cell.transpose(Image.Transpose.ROTATE_270)


def render(lines: list[str], style: TextStyle, vertical: bool) -> Image.Image:
    """Draw `lines` into a new ink mask ("L", 255 = ink) of size `measure(lines, style, vertical)`.

    Vertical: line 0 is the rightmost column. Horizontal: line 0 is the top line.
    """
    w, h = measure(lines, style, vertical)
    mask = Image.new("L", (w, h), 0)
    draw = ImageDraw.Draw(mask)
    s = style.size
    font = load_font(style.face, s)
    pitch = s * (1 + style.line_gap)
    for li, line in enumerate(lines):
        if vertical:
            x0 = w - 1 - s - li * pitch
            for ci, ch in enumerate(line):
                y0 = 1 + ci * s * style.advance
                if ch in _ROTATE_VERTICAL:
                    glyph = _rotated_glyph(style.face, s, ch)
                    mask.paste(255, (int(round(x0)), int(round(y0))), glyph)
                    continue
                dx, dy = _SHIFT_VERTICAL.get(ch, (0.0, 0.0))
                x = x0 + dx * s
                if _is_half_width(ch):
                    x += (s - font.getlength(ch)) / 2
                draw.text((x, y0 + (EM_ASCENT + dy) * s), ch, font=font, fill=255, anchor="ls")
        else:
            x = 1.0
            y_base = 1 + li * pitch + EM_ASCENT * s
            for ch in line:
                draw.text((x, y_base), ch, font=font, fill=255, anchor="ls")
                x += font.getlength(ch) if _is_half_width(ch) else s
    return mask
