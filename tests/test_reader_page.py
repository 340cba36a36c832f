"""The reader page (app.core.exports.reader_page): its structure read back with an HTML parser, and the
page itself in a real browser (Debian's chromium, when installed) through a harness copy of it
that measures where the text lands, selects a block's text, turns the translations on and turns
a page with the keyboard."""
import json
import os
import shutil
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import pytest

from app.core.exports import mokuro
from tests.mokuro_data import ROOT, demo_project

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.children, self.text = tag, dict(attrs), parent, [], ""

    @property
    def classes(self):
        return (self.attrs.get("class") or "").split()

    def all_text(self):
        return self.text + "".join(c.all_text() for c in self.children)

    def find(self, cls):
        out = [self] if cls in self.classes else []
        for c in self.children:
            out += c.find(cls)
        return out


class Tree(HTMLParser):
    VOID = {"meta", "img", "br", "input", "link"}

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.root = Node("root", {}, None)
        self.cur = self.root
        self.tags = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        node = Node(tag, attrs, self.cur)
        self.cur.children.append(node)
        self.tags.append(node)
        if tag not in self.VOID:
            self.cur = node

    def handle_endtag(self, tag):
        node = self.cur
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.cur = node.parent

    def handle_data(self, data):
        self.cur.text += data


def _pct(style, key):
    for part in style.split(";"):
        k, _, v = part.partition(":")
        if k.strip() == key:
            return float(v.strip().rstrip("%"))
    raise KeyError(key)


@pytest.fixture(scope="module")
def volume(tmp_path_factory):
    out = tmp_path_factory.mktemp("reader") / "Demo"
    result = mokuro.export_mokuro(demo_project(), out, volume="vol1")
    return result, json.loads(result.mokuro.read_text(encoding="utf-8"))


def test_one_element_per_block_with_its_text_inside_its_box(volume):
    result, data = volume
    text = result.html.read_text(encoding="utf-8")
    tree = Tree(text)
    pages = tree.root.find("page")
    assert len(pages) == len(data["pages"]) == 4
    for i, (page, mpage) in enumerate(zip(pages, data["pages"])):
        assert page.attrs["data-index"] == str(i) and page.attrs["data-img"] == mpage["img_path"]
        w, h = float(page.attrs["data-width"]), float(page.attrs["data-height"])
        assert (w, h) == (mpage["img_width"], mpage["img_height"])
        img = [n for n in page.children if n.tag == "img"][0]
        assert img.attrs["src"] == "vol1/" + mpage["img_path"] and (result.images / mpage["img_path"]).is_file()
        blocks = page.find("block")
        assert len(blocks) == len(mpage["blocks"])
        for k, (el, mb) in enumerate(zip(blocks, mpage["blocks"]), start=1):
            assert el.attrs["data-block"] == str(k)
            assert [float(v) for v in el.attrs["data-box"].split()] == [float(v) for v in mb["box"]]
            assert el.attrs["data-vertical"] == str(int(mb["vertical"])) and ("vertical" in el.classes) == mb["vertical"]
            x0, y0, x1, y1 = mb["box"]
            style = el.attrs["style"]
            assert abs(_pct(style, "left") - 100 * x0 / w) < 1e-3 and abs(_pct(style, "top") - 100 * y0 / h) < 1e-3
            assert abs(_pct(style, "width") - 100 * (x1 - x0) / w) < 1e-3
            assert abs(_pct(style, "height") - 100 * (y1 - y0) / h) < 1e-3
            (src,) = el.find("src")
            assert src.attrs["lang"] == "ja"
            assert src.all_text() == mb["text"].replace("\n", "") == "".join(mb["lines"])
            lines = src.find("line")
            assert [n.all_text() for n in lines] == mb["lines"]
            for n in lines:  # each line inside its block (percent of the block)
                s = n.attrs["style"]
                assert -1e-6 <= _pct(s, "left") and _pct(s, "left") + _pct(s, "width") <= 100 + 1e-3
                assert -1e-6 <= _pct(s, "top") and _pct(s, "top") + _pct(s, "height") <= 100 + 1e-3
            (tr,) = el.find("tr")
            assert tr.all_text() == mb["translation"]


def test_the_page_is_self_contained(volume, tmp_path):
    result, data = volume
    text = result.html.read_text(encoding="utf-8")
    tree = Tree(text)
    for node in tree.tags:  # no external script, style, font or frame; images beside it only
        assert node.tag not in ("link", "iframe", "object", "embed", "base")
        if node.tag == "script":
            assert "src" not in node.attrs
        if node.tag == "img":
            assert not node.attrs["src"].startswith(("http:", "https:", "//"))
    assert "http://" not in text.replace("http://www.w3.org", "") and "https://" not in text
    assert "fetch(" not in text and "XMLHttpRequest" not in text and "@import" not in text
    # the one-file variant: the images inside it, nothing beside it
    one = tmp_path / "one" / "vol1.html"
    one.parent.mkdir()
    mokuro.export_reader(demo_project(), one)
    assert sorted(p.name for p in one.parent.iterdir()) == ["vol1.html"]
    imgs = [n for n in Tree(one.read_text(encoding="utf-8")).tags if n.tag == "img"]
    assert len(imgs) == 4 and all(n.attrs["src"].startswith("data:image/png;base64,") for n in imgs)


HARNESS = r"""
<script>
(function(){
  var out={};
  var pages=[].slice.call(document.querySelectorAll('.page'));
  out.hash0=location.hash;
  out.shown0=pages.filter(function(p){return p.classList.contains('shown');}).length;
  document.dispatchEvent(new KeyboardEvent('keydown',{key:'ArrowLeft',bubbles:true}));  // manga: next page
  out.hash1=location.hash;
  document.dispatchEvent(new KeyboardEvent('keydown',{key:'d',bubbles:true}));  // two pages
  out.spread=pages.filter(function(p){return p.classList.contains('shown');}).map(function(p){return +p.dataset.index;});
  var xs=out.spread.map(function(i){return pages[i].getBoundingClientRect().left;});
  out.spreadRtl=xs.length===2&&xs[0]>xs[1];  // the earlier page on the right
  pages.forEach(function(p){p.classList.add('shown');});
  out.blocks=[];
  pages.forEach(function(p){
    var r=p.querySelector('.page-image').getBoundingClientRect(), k=p.dataset.width/r.width;
    [].forEach.call(p.querySelectorAll('.block'),function(b){
      var lines=[].map.call(b.querySelectorAll('.line'),function(l){
        var rg=document.createRange(); rg.selectNodeContents(l); var t=rg.getBoundingClientRect(), e=l.getBoundingClientRect();
        function px(q){return [(q.left-r.left)*k,(q.top-r.top)*k,(q.right-r.left)*k,(q.bottom-r.top)*k];}
        return {text:px(t), el:px(e)};
      });
      out.blocks.push({page:+p.dataset.index, box:b.dataset.box.split(' ').map(Number), lines:lines});
    });
  });
  var src=pages[0].querySelectorAll('.block')[1].querySelector('.src');
  var rg=document.createRange(); rg.selectNodeContents(src); var s=getSelection(); s.removeAllRanges(); s.addRange(rg);
  out.selected=s.toString();
  var tr=pages[0].querySelectorAll('.block')[1].querySelector('.tr');
  out.trBefore=getComputedStyle(tr).display;
  document.getElementById('b-tr').click();
  out.trAfter=getComputedStyle(tr).display;
  var pre=document.createElement('pre'); pre.id='harness'; pre.textContent=JSON.stringify(out); document.body.appendChild(pre);
})();
</script>
"""


def _fonts_conf(tmp: Path) -> Path:
    """A fontconfig file with the app's own fonts (the machine may have no CJK font)."""
    conf = tmp / "fonts.conf"
    conf.write_text(f'<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig>'
                    f'<include ignore_missing="yes">/etc/fonts/fonts.conf</include>'
                    f'<dir>{ROOT / "app" / "resources" / "fonts"}</dir><cachedir>{tmp / "fc"}</cachedir></fontconfig>')
    return conf


def run_chromium(page: Path, tmp: Path, *flags: str) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:
        env = dict(os.environ, FONTCONFIG_FILE=str(_fonts_conf(tmp)))
        return subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--no-first-run", f"--user-data-dir={profile}", "--window-size=1400,1000", *flags,
             page.as_uri() + "#1"], capture_output=True, text=True, timeout=120, env=env)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_in_chromium_text_lies_over_its_lines_selects_and_translations_toggle(volume, tmp_path):
    result, data = volume
    harness = result.html.with_name("vol1-harness.html")  # a copy beside it: the same relative images
    harness.write_text(result.html.read_text(encoding="utf-8").replace("</body>", HARNESS + "</body>"),
                       encoding="utf-8")
    try:
        done = run_chromium(harness, tmp_path, "--dump-dom")
    finally:
        harness.unlink()
    assert done.returncode == 0, done.stderr[-2000:]
    tree = Tree(done.stdout)
    (pre,) = [n for n in tree.tags if n.attrs.get("id") == "harness"]
    got = json.loads(pre.all_text())
    assert got["hash0"] == "#1" and got["shown0"] == 1
    assert got["hash1"] == "#2"  # ArrowLeft turns to the next page of a manga
    assert got["spread"] == [1, 2] and got["spreadRtl"]  # two pages side by side, right to left
    mblocks = [(i, b) for i, p in enumerate(data["pages"]) for b in p["blocks"]]
    assert len(got["blocks"]) == len(mblocks)
    ious, offsets = [], []
    for measured, (i, mb) in zip(got["blocks"], mblocks):
        assert measured["page"] == i and measured["box"] == [float(v) for v in mb["box"]]
        x0, y0, x1, y1 = mb["box"]
        for line, quad in zip(measured["lines"], mb["lines_coords"], strict=True):
            el, txt = line["el"], line["text"]
            tol = 1.5  # pixels of the page image
            assert x0 - tol <= el[0] and el[2] <= x1 + tol and y0 - tol <= el[1] and el[3] <= y1 + tol
            # the text run itself (what a selection highlights) runs the line's length, centred on it
            # across (across, the font's content area is taller than its 1 em glyphs)
            qx0, qy0, qx1, qy1 = quad[0][0], quad[0][1], quad[2][0], quad[2][1]
            a, b = (1, 3) if mb["vertical"] else (0, 2)  # along the line
            c, d = (0, 2) if mb["vertical"] else (1, 3)  # across it
            q = (qx0, qy0, qx1, qy1)
            inter = max(0.0, min(txt[b], q[b]) - max(txt[a], q[a]))
            ious.append(inter / (max(txt[b], q[b]) - min(txt[a], q[a])))
            offsets.append(abs((txt[c] + txt[d]) / 2 - (q[c] + q[d]) / 2) / (q[d] - q[c]))
    # measured: along the lines 0.997 on average, 0.944 at worst; centres at most 0.20 of a line's
    # thickness apart (horizontal lines: the font's ascent and descent are not equal)
    assert min(ious) >= 0.85 and sum(ious) / len(ious) >= 0.97, (min(ious), sum(ious) / len(ious))
    assert max(offsets) <= 0.3, max(offsets)
    assert got["selected"] == data["pages"][0]["blocks"][1]["text"]  # the block's text, selected with a range
    assert got["trBefore"] == "none" and got["trAfter"] != "none"


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_the_one_file_reader_renders_in_chromium(tmp_path):
    one = tmp_path / "vol1.html"
    mokuro.export_reader(demo_project(), one)
    shot = tmp_path / "shot.png"
    done = run_chromium(one, tmp_path, f"--screenshot={shot}", "--hide-scrollbars")
    assert done.returncode == 0 and shot.is_file()
    import numpy as np
    from PIL import Image

    with Image.open(shot) as im:
        grey = np.asarray(im.convert("L"))
    h, w = grey.shape
    # the page (white paper with the drawings' black ink) in the middle of the dark background
    assert grey[h // 2, 5] < 60
    middle = grey[100:h - 100, w // 2 - 150:w // 2 + 150]
    assert (middle > 200).mean() > 0.4 and (middle < 80).mean() > 0.02


FIREFOX = shutil.which("firefox-esr") or shutil.which("firefox")

# Firefox has no --dump-dom: the harness paints its verdict (green: every check held, red: one
# failed) over the whole window, and the test reads the screenshot.
FIREFOX_HARNESS = r"""
<script>
window.addEventListener('load',function(){
  var ok=true, why=[];
  function check(c,w){ if(!c){ok=false; why.push(w);} }
  var pages=[].slice.call(document.querySelectorAll('.page'));
  check(location.hash==='#1','hash');
  document.dispatchEvent(new KeyboardEvent('keydown',{key:'ArrowLeft',bubbles:true}));
  check(location.hash==='#2'&&pages[1].classList.contains('shown'),'turn');
  pages.forEach(function(p){p.classList.add('shown');});
  pages.forEach(function(p){
    var r=p.querySelector('.page-image').getBoundingClientRect(), k=p.dataset.width/r.width;
    [].forEach.call(p.querySelectorAll('.block'),function(b){
      var box=b.dataset.box.split(' ').map(Number);
      [].forEach.call(b.querySelectorAll('.line'),function(l){
        var e=l.getBoundingClientRect();
        var x0=(e.left-r.left)*k, y0=(e.top-r.top)*k, x1=(e.right-r.left)*k, y1=(e.bottom-r.top)*k;
        check(x0>=box[0]-1.5&&y0>=box[1]-1.5&&x1<=box[2]+1.5&&y1<=box[3]+1.5,'line outside its block');
        var q=document.createRange(); q.selectNodeContents(l); var t=q.getBoundingClientRect();
        var v=b.dataset.vertical==='1', a0=v?e.top:e.left, a1=v?e.bottom:e.right, t0=v?t.top:t.left, t1=v?t.bottom:t.right;
        var along=Math.max(0,Math.min(a1,t1)-Math.max(a0,t0))/(Math.max(a1,t1)-Math.min(a0,t0));
        check(along>=0.85,'text does not run the line');  // the glyphs a selection highlights
      });
    });
  });
  var b=pages[0].querySelectorAll('.block')[1], rg=document.createRange();
  rg.selectNodeContents(b.querySelector('.src')); var s=getSelection(); s.removeAllRanges(); s.addRange(rg);
  check(s.toString()===EXPECTED,'selection');
  document.getElementById('b-tr').click();
  check(getComputedStyle(b.querySelector('.tr')).display!=='none','translations');
  var v=document.createElement('div'); v.id='verdict'; v.title=why.join(',');
  v.style.cssText='position:fixed;inset:0;z-index:99999;background:'+(ok?'#00ff00':'#ff0000');
  document.body.appendChild(v);
});
</script>
"""


@pytest.mark.skipif(FIREFOX is None, reason="firefox is not installed (apt-get install firefox-esr)")
def test_in_firefox_the_page_works_from_the_file_system(volume, tmp_path):
    result, data = volume
    expected = json.dumps(data["pages"][0]["blocks"][1]["text"], ensure_ascii=False)
    harness = result.html.with_name("vol1-firefox.html")
    harness.write_text(result.html.read_text(encoding="utf-8").replace(
        "</body>", FIREFOX_HARNESS.replace("EXPECTED", expected) + "</body>"), encoding="utf-8")
    shot = tmp_path / "firefox.png"
    try:
        with tempfile.TemporaryDirectory() as profile:
            env = dict(os.environ, FONTCONFIG_FILE=str(_fonts_conf(tmp_path)), MOZ_HEADLESS="1")
            done = subprocess.run([FIREFOX, "--headless", "--no-remote", "--profile", profile,
                                   "--window-size=1400,1000", "--screenshot", str(shot), harness.as_uri() + "#1"],
                                  capture_output=True, text=True, timeout=180, env=env)
    finally:
        harness.unlink()
    assert done.returncode == 0 and shot.is_file(), done.stderr[-2000:]
    import numpy as np
    from PIL import Image

    with Image.open(shot) as im:
        rgb = np.asarray(im.convert("RGB")).reshape(-1, 3)
    green = ((rgb[:, 1] > 200) & (rgb[:, 0] < 60) & (rgb[:, 2] < 60)).mean()
    assert green > 0.9, "the harness found a failed check (red) or did not run"


def _cjk_project():
    """The demo volume with translations that keep names in their script (Kanji, Hangul)."""
    from dataclasses import replace

    project = demo_project()
    page = project.pages[0]
    blocks = list(page.blocks)
    blocks[0] = replace(blocks[0], translation="Mr. 山田 said: 안녕하세요")
    project.pages[0] = replace(page, blocks=tuple(blocks))
    return project


def _embedded_font(text: str):
    """The font of the page's @font-face rule, read back with fontTools."""
    import base64
    import io
    import re

    from fontTools.ttLib import TTFont

    (uri,) = re.findall(r'@font-face\{font-family:"Hayai CJK";src:url\(data:font/[a-z0-9]+;base64,([A-Za-z0-9+/=]+)\)',
                        text)
    return TTFont(io.BytesIO(base64.b64decode(uri)))


def test_the_page_embeds_the_glyphs_its_text_needs(tmp_path):
    import unicodedata

    from fontTools.ttLib import TTFont

    from app.fonts import font_file

    one = tmp_path / "vol1.html"
    mokuro.export_reader(_cjk_project(), one)
    text = one.read_text(encoding="utf-8")
    cmap = _embedded_font(text).getBestCmap()
    full = TTFont(font_file("cjk"), lazy=True).getBestCmap()
    tree = Tree(text)
    shown = "".join(n.all_text() for n in tree.tags if n.tag in ("title", "span", "div", "button"))
    shown += "".join(n.all_text() for n in tree.root.find("tr"))
    assert "山田" in shown and "안녕하세요" in shown and "「理谷意外」だ" in shown
    needed = {c for c in shown if not unicodedata.category(c).startswith(("C", "Z"))}
    missing = sorted(c for c in needed if ord(c) not in cmap and ord(c) in full)
    assert not missing, missing
    assert len(cmap) < 2000 < len(full)  # a subset, not the whole font
    style = next(n for n in tree.tags if n.tag == "style").all_text()
    assert '.line{' in style and 'font-family:"Hayai CJK"' in style.split(".line{", 1)[1].split("}", 1)[0]


def _fonts_conf_without_cjk(tmp: Path) -> Path:
    """A fontconfig file with one Latin face only: a machine with no CJK font at all."""
    fonts = tmp / "latin-only"
    fonts.mkdir()
    shutil.copyfile(ROOT / "app" / "resources" / "fonts" / "ComicNeue-Regular.otf", fonts / "ComicNeue-Regular.otf")
    conf = tmp / "latin.conf"
    conf.write_text(f'<?xml version="1.0"?><!DOCTYPE fontconfig SYSTEM "fonts.dtd"><fontconfig>'
                    f'<dir>{fonts}</dir><cachedir>{tmp / "fc-latin"}</cachedir></fontconfig>')
    return conf


FONT_HARNESS = r"""
<script>
document.fonts.load('32px "Hayai CJK"', '山田안녕').then(function (faces) {
  var probe = function (family) {
    var s = document.createElement('span'); s.style.font = '32px ' + family; s.textContent = '山田안녕';
    s.style.whiteSpace = 'pre'; document.body.appendChild(s); var w = s.getBoundingClientRect().width; s.remove(); return w;
  };
  var pre = document.createElement('pre'); pre.id = 'fonts';
  pre.textContent = JSON.stringify({loaded: faces.length, status: faces.map(function (f) { return f.status; }),
    check: document.fonts.check('32px "Hayai CJK"', '山田안녕'), cjk: probe('"Hayai CJK"')});
  document.body.appendChild(pre);
});
</script>
"""


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
def test_in_chromium_without_cjk_fonts_the_page_draws_its_own(tmp_path):
    one = tmp_path / "vol1.html"
    mokuro.export_reader(_cjk_project(), one)
    one.write_text(one.read_text(encoding="utf-8").replace("</body>", FONT_HARNESS + "</body>"), encoding="utf-8")
    with tempfile.TemporaryDirectory() as profile:
        env = dict(os.environ, FONTCONFIG_FILE=str(_fonts_conf_without_cjk(tmp_path)))
        done = subprocess.run(
            [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
             "--no-first-run", f"--user-data-dir={profile}", "--virtual-time-budget=10000", "--dump-dom",
             one.as_uri()], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    (pre,) = [n for n in Tree(done.stdout).tags if n.attrs.get("id") == "fonts"]
    got = json.loads(pre.all_text())
    assert got["loaded"] == 1 and got["status"] == ["loaded"] and got["check"], got
    # the run is drawn with the embedded glyphs: its width is their advances at 32 px
    font = _embedded_font(one.read_text(encoding="utf-8"))
    cmap, hmtx, upem = font.getBestCmap(), font["hmtx"], font["head"].unitsPerEm
    expected = sum(hmtx[cmap[ord(c)]][0] for c in "山田안녕") * 32 / upem
    assert abs(got["cjk"] - expected) < 1, (got, expected)
