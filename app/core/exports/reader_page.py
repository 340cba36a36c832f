"""The reader page: one HTML file per volume that shows the pages with their text selectable.

Made from the .mokuro data of a volume (app.core.exports.mokuro), so it shows exactly what a mokuro
reader gets. No network access and no external script: the style and the script are in the
file; the page images are either beside it (`image_prefix`, the mokuro layout `VOLUME.html` +
`VOLUME/`) or inside it as data URIs (`images`), so one file is the whole volume.

Structure (what the tests read):

    <section class="page" data-index="I" data-img="IMG_PATH" data-width="W" data-height="H">
      <img class="page-image" src="...">
      <div class="block" data-block="K" data-box="x0 y0 x1 y1" data-vertical="1|0" style="left/top/width/height in %">
        <div class="src" lang="ja"><span class="line" style="...">line text</span>...</div>
        <div class="tr" lang="en">translation</div>          (only when the block has one)
      </div>
    </section>

Positions are percentages of the page (blocks) and of the block (lines), and sizes are in `cqw`
(hundredths of the page's width: `.page` is a size container), so text stays on its glyphs at
every zoom. Each line's font size and letter spacing make its text run the length of the line.
The source text is transparent over the image and shows (black on white) while the mouse is on
the block or with "Show text"; it is real text: select it with the mouse, or let a pop-up
dictionary (Yomitan) read it. The translation shows beside the block on hover, or over every
block with the "Translations" toggle. Keys: ← → (reading direction), PageUp / PageDown, Home /
End, D one or two pages, C cover alone, T translations, S show text, + / - / 0 zoom. Pages are
shown one or two at a time in reading order, two side by side right to left for manga (`order`
"rtl"). The page number is kept in the address (`#5`).

The page carries its own font: the characters its text uses, cut out of the app's Noto Sans CJK
(app.fonts, the face the PNG and PSD writers draw with) by fontTools' subsetter and embedded as
a base64 @font-face ("Hayai CJK": WOFF2 when the brotli package is installed, else the OpenType
file itself), so Japanese, Chinese and Korean show on a machine without a CJK font.
"""
from __future__ import annotations

import html
import json
import math
import unicodedata

_STYLE = """
*{box-sizing:border-box}
html,body{margin:0;background:#222;color:#eee;font-family:system-ui,"Hayai CJK",sans-serif}
#bar{position:sticky;top:0;z-index:1000;display:flex;gap:6px;align-items:center;flex-wrap:wrap;
  padding:4px 8px;background:#111;border-bottom:1px solid #333;font-size:14px;user-select:none}
#bar button,#bar label{background:#333;color:#eee;border:1px solid #555;border-radius:4px;padding:3px 8px;
  font:inherit;cursor:pointer}
#bar button[aria-pressed=true]{background:#2a5db0;border-color:#4d82d6}
#bar .title{margin-right:auto;white-space:nowrap;overflow:hidden;text-overflow:ellipsis;max-width:40vw}
#spread{display:flex;flex-wrap:wrap;justify-content:center;align-items:flex-start;gap:0;padding:8px 0;
  min-width:min-content}
body.rtl #spread{flex-direction:row-reverse}
html.js .page{display:none}
html.js .page.shown{display:block}
.page{position:relative;container-type:inline-size;width:min(100%,900px);flex:none;background:#fff;margin:0}
html:not(.js) .page{margin:0 auto 12px}
.page-image{display:block;width:100%;height:auto;user-select:none;-webkit-user-drag:none}
.block{position:absolute;z-index:10}
.src{position:absolute;inset:0}
.line{position:absolute;display:block;white-space:pre;line-height:1;color:transparent;overflow:visible;
  font-family:"Hayai CJK","Noto Sans CJK JP","Noto Sans JP","Hiragino Sans","Yu Gothic","Meiryo",sans-serif}
.vertical .line{writing-mode:vertical-rl;text-orientation:mixed}
.line::selection{color:transparent;background:rgba(40,120,255,.4)}
.block:hover .src,body.show-text .src{background:rgba(255,255,255,.96);outline:1px solid #4d82d6}
.block:hover .line,body.show-text .line{color:#000}
.block:hover .line::selection,body.show-text .line::selection{color:#000;background:rgba(40,120,255,.35)}
.tr{display:none;position:absolute;left:0;top:100%;z-index:50;min-width:10em;max-width:28em;padding:.3em .5em;
  background:#fff8dc;color:#111;border:1px solid #b89b3b;border-radius:4px;font-size:15px;line-height:1.3;
  white-space:pre-wrap;box-shadow:0 2px 6px rgba(0,0,0,.4)}
.block:hover .tr{display:block}
body.show-tr .tr{display:flex;align-items:center;justify-content:center;text-align:center;top:0;left:0;width:100%;
  height:100%;min-width:0;max-width:none;overflow:hidden;padding:1%;border-radius:0;box-shadow:none;
  background:rgba(255,255,255,.94);font-size:var(--tr);overflow-wrap:anywhere}
body.show-tr .block:hover .tr{display:none}
#help{display:none;position:fixed;right:12px;top:44px;z-index:2000;background:#111;border:1px solid #555;padding:8px 12px;
  border-radius:6px;font-size:13px;line-height:1.6}
body.show-help #help{display:block}
"""

_SCRIPT = r"""
(function(){
  var root=document.documentElement; root.classList.add('js');
  var body=document.body, pages=[].slice.call(document.querySelectorAll('.page'));
  var rtl=body.classList.contains('rtl'), state={i:0,two:false,cover:true,zoom:1};
  var counter=document.getElementById('counter');
  function spread(i){ // the first page of the spread holding page i, and its pages
    if(!state.two) return [i];
    var start=state.cover?(i===0?0:i-((i-1)%2)):i-(i%2);
    var out=[start]; if(!(state.cover&&start===0)&&start+1<pages.length) out.push(start+1); return out;
  }
  function layout(){
    var shown=spread(state.i), bar=document.getElementById('bar').offsetHeight;
    var vh=window.innerHeight-bar-16, vw=document.documentElement.clientWidth;
    var ratio=0; shown.forEach(function(k){ratio+=pages[k].dataset.width/pages[k].dataset.height;});
    var h=Math.min(vh, vw/ratio)*state.zoom;
    pages.forEach(function(p,k){
      var on=shown.indexOf(k)>=0; p.classList.toggle('shown',on);
      if(on){ p.style.width=(h*p.dataset.width/p.dataset.height)+'px'; }
    });
    counter.textContent=shown.map(function(k){return k+1;}).join('-')+' / '+pages.length;
    if(location.hash!=='#'+(state.i+1)) history.replaceState(null,'','#'+(state.i+1));
  }
  function go(i){ i=Math.max(0,Math.min(pages.length-1,i)); var s=spread(i); state.i=s[0]; layout(); window.scrollTo(0,0); }
  function next(){ var s=spread(state.i); go(s[s.length-1]+1); }
  function prev(){ if(state.i>0) go(spread(state.i-1)[0]); }
  function toggle(cls,btn){ var on=body.classList.toggle(cls); if(btn) document.getElementById(btn).setAttribute('aria-pressed',on); }
  function zoom(f){ state.zoom=f===0?1:Math.max(0.25,Math.min(6,state.zoom*f)); layout(); }
  var actions={
    next:next, prev:prev, first:function(){go(0);}, last:function(){go(pages.length-1);},
    two:function(){ state.two=!state.two; document.getElementById('b-two').setAttribute('aria-pressed',state.two); go(state.i); },
    cover:function(){ state.cover=!state.cover; document.getElementById('b-cover').setAttribute('aria-pressed',state.cover); go(state.i); },
    tr:function(){ toggle('show-tr','b-tr'); }, text:function(){ toggle('show-text','b-text'); },
    zin:function(){zoom(1.25);}, zout:function(){zoom(0.8);}, fit:function(){zoom(0);},
    help:function(){ toggle('show-help','b-help'); }
  };
  [].forEach.call(document.querySelectorAll('#bar [data-act]'),function(b){
    b.addEventListener('click',function(){ actions[b.dataset.act](); b.blur(); });
  });
  document.getElementById('b-left').addEventListener('click',function(){ (rtl?next:prev)(); });
  document.getElementById('b-right').addEventListener('click',function(){ (rtl?prev:next)(); });
  document.addEventListener('keydown',function(e){
    if(e.ctrlKey||e.metaKey||e.altKey) return;
    var t=e.target; if(t&&(t.isContentEditable||/^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName))) return;
    var k=e.key, f={ArrowLeft:rtl?next:prev, ArrowRight:rtl?prev:next, PageDown:next, PageUp:prev, ' ':next,
      Home:actions.first, End:actions.last, d:actions.two, D:actions.two, c:actions.cover, C:actions.cover,
      t:actions.tr, T:actions.tr, s:actions.text, S:actions.text, '+':actions.zin, '=':actions.zin,
      '-':actions.zout, '0':actions.fit, '?':actions.help}[k];
    if(f){ f(); e.preventDefault(); }
  });
  window.addEventListener('resize',layout);
  window.addEventListener('hashchange',function(){ var n=parseInt(location.hash.slice(1),10); if(n>0&&n-1!==state.i) go(n-1); });
  var n=parseInt(location.hash.slice(1),10); go(n>0?n-1:0);
})();
"""

_HELP = ("← → turn pages in the reading direction · PageUp / PageDown · Home / End<br>"
         "D one or two pages · C first page alone · T translations · S show the text<br>"
         "+ / − / 0 zoom · select text with the mouse (pop-up dictionaries work on it)")


def _pct(v: float, total: float) -> str:
    return f"{100.0 * v / total if total else 0.0:.4f}%"


def _cqw(px: float, width: float) -> str:
    return f"{100.0 * px / width if width else 0.0:.4f}cqw"


def char_advance(ch: str) -> float:
    """A character's advance in glyph sizes: full-width 1, half-width (Latin, digits) about 0.55."""
    if ch.isspace():
        return 0.3
    return 1.0 if unicodedata.east_asian_width(ch) in ("W", "F", "A") else 0.55


_advance = char_advance


def _rect(quad) -> tuple[float, float, float, float]:
    xs = [float(p[0]) for p in quad]
    ys = [float(p[1]) for p in quad]
    return min(xs), min(ys), max(xs), max(ys)


def _line_html(text: str, quad, box, vertical: bool, width: float) -> str:
    """One line: placed on its rectangle (percent of the block), its font size and letter
    spacing chosen so that the text runs the rectangle's length."""
    bx0, by0, bx1, by1 = box
    x0, y0, x1, y1 = _rect(quad)
    thick, length = (x1 - x0, y1 - y0) if vertical else (y1 - y0, x1 - x0)
    units = sum(_advance(c) for c in text) or 1.0
    size = max(1.0, min(thick, length / units))
    spacing = (length - units * size) / max(1, len(text))
    style = (f"left:{_pct(x0 - bx0, bx1 - bx0)};top:{_pct(y0 - by0, by1 - by0)};"
             f"width:{_pct(x1 - x0, bx1 - bx0)};height:{_pct(y1 - y0, by1 - by0)};"
             f"font-size:{_cqw(size, width)};letter-spacing:{_cqw(spacing, width)}")
    return f'<span class="line" style="{style}">{html.escape(text)}</span>'


def _translation_size(text: str, box, width: float) -> str:
    """A font size at which `text` about fills the block's box (for the translations view)."""
    w, h = box[2] - box[0], box[3] - box[1]
    n = max(1, len(text))
    size = math.sqrt(max(w * h, 1.0) * 0.45 / n) / 0.62  # the text's area about half the box's
    longest = max((len(word) for word in text.split()), default=1)
    size = min(size, 0.9 * w / (0.6 * longest), 0.45 * h, 42.0)  # the longest word fits across
    return _cqw(max(9.0, size), width)


def _block_html(k: int, block: dict, width: float, height: float) -> str:
    box = [float(v) for v in block["box"]]
    bx0, by0, bx1, by1 = box
    if bx1 <= bx0 or by1 <= by0:
        return ""
    vertical = bool(block.get("vertical"))
    style = (f"left:{_pct(bx0, width)};top:{_pct(by0, height)};width:{_pct(bx1 - bx0, width)};"
             f"height:{_pct(by1 - by0, height)}")
    lines = block.get("lines") or []
    coords = block.get("lines_coords") or []
    spans = "".join(_line_html(t, q, box, vertical, width) for t, q in zip(lines, coords))
    translation = block.get("translation") or ""
    tr = ""
    if isinstance(translation, str) and translation.strip():
        tr = (f'<div class="tr" lang="en" style="--tr:{_translation_size(translation, box, width)}">'
              f'{html.escape(translation)}</div>')
    cls = "block vertical" if vertical else "block"
    data_box = " ".join(f"{v:g}" for v in box)
    return (f'<div class="{cls}" data-block="{k}" data-box="{data_box}" data-vertical="{int(vertical)}" '
            f'style="{style}"><div class="src" lang="ja">{spans}</div>{tr}</div>')


FONT_FAMILY = "Hayai CJK"


def font_face_css(text: str) -> str:
    """An @font-face rule embedding the glyphs of the app's CJK font that `text` needs (a data
    URI), or "" when the font file is missing (the page then relies on the machine's fonts)."""
    import base64
    import io

    from fontTools import subset
    from fontTools.ttLib import TTFont

    from app.fonts import font_file

    try:
        path = font_file("cjk")
    except FileNotFoundError:
        return ""
    chars = {ord(c) for c in text if not unicodedata.category(c).startswith("C")} | {0x20}
    options = subset.Options()
    options.layout_features = ["*"]  # vertical forms (vert, vrt2) and the rest, for what the text needs
    options.name_IDs = ["*"]
    options.notdef_outline = True
    try:
        import brotli  # noqa: F401  (fontTools' WOFF2 writer needs it)
        options.flavor, mime, fmt = "woff2", "font/woff2", "woff2"
    except ImportError:
        mime, fmt = "font/otf", "opentype"
    font = TTFont(path, lazy=False)
    subsetter = subset.Subsetter(options)
    subsetter.populate(unicodes=chars)
    subsetter.subset(font)
    buf = io.BytesIO()
    font.flavor = options.flavor
    font.save(buf)
    data = base64.b64encode(buf.getvalue()).decode("ascii")
    return (f'@font-face{{font-family:"{FONT_FAMILY}";src:url(data:{mime};base64,{data}) format("{fmt}");'
            "font-display:block}")


def reader_html(data: dict, order: str = "rtl", image_prefix: str = "",
                images: dict[str, str] | None = None) -> str:
    """The reader page of the .mokuro data `data`. Each page's image is `images[img_path]` when
    given (a data: URI), else `image_prefix + img_path` (a relative URL, escaped)."""
    from urllib.parse import quote

    title = str(data.get("volume") or "volume")
    series = str(data.get("title") or "")
    sections = []
    for i, page in enumerate(data.get("pages", [])):
        w, h = float(page.get("img_width") or 1), float(page.get("img_height") or 1)
        img = page["img_path"]
        src = images[img] if images is not None and img in images else quote(image_prefix + img)
        blocks = "".join(_block_html(k, b, w, h) for k, b in enumerate(page.get("blocks", []), start=1))
        sections.append(
            f'<section class="page" id="page{i + 1}" data-index="{i}" data-img="{html.escape(img)}" '
            f'data-width="{w:g}" data-height="{h:g}">'
            f'<img class="page-image" src="{html.escape(src)}" alt="page {i + 1}" width="{w:g}" height="{h:g}" '
            f'draggable="false">{blocks}</section>')
    heading = html.escape(f"{title} — {series}" if series else title)
    bar = (
        f'<div id="bar"><span class="title">{heading}</span>'
        '<button id="b-left" title="previous / next page (←)">◀</button><span id="counter"></span>'
        '<button id="b-right" title="(→)">▶</button>'
        '<button id="b-two" data-act="two" aria-pressed="false" title="one or two pages (D)">2 pages</button>'
        '<button id="b-cover" data-act="cover" aria-pressed="true" title="first page alone in two-page view (C)">cover</button>'
        '<button id="b-tr" data-act="tr" aria-pressed="false" title="show every translation (T)">Translations</button>'
        '<button id="b-text" data-act="text" aria-pressed="false" title="show the source text (S)">Show text</button>'
        '<button data-act="zout" title="zoom out (-)">−</button><button data-act="fit" title="fit (0)">fit</button>'
        '<button data-act="zin" title="zoom in (+)">+</button>'
        '<button id="b-help" data-act="help" aria-pressed="false" title="keys (?)">?</button></div>'
        f'<div id="help">{_HELP}</div>')
    meta = json.dumps({"title": series, "volume": title, "title_uuid": data.get("title_uuid"),
                       "volume_uuid": data.get("volume_uuid")}, ensure_ascii=False).replace("</", "<\\/")
    body = (
        f'<body class="{"rtl" if order == "rtl" else "ltr"}">{bar}\n<main id="spread">\n'
        + "\n".join(sections)
        + f'\n</main>\n<script type="application/json" id="volume-meta">{meta}</script>\n'
        f"<script>{_SCRIPT}</script>\n</body></html>\n")
    # every character the page shows is in its body or title (unescaped: html.escape keeps them)
    face = font_face_css(html.unescape(heading + body))
    return (
        '<!DOCTYPE html>\n<html lang="ja"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta name="generator" content="Hayai Desktop">'
        f"<title>{heading}</title><style>{face}{_STYLE}</style></head>\n" + body)
