"""The .mokuro export and import (app.core.exports.mokuro, app.core.sources.mokuro_volume, `hayai-desktop export --format mokuro`).

The shape is mokuro's (github.com/kha-white/mokuro: mokuro_generator.py writes the volume,
manga_page_ocr.py the pages; readers take TITLE/VOLUME.mokuro with the images in TITLE/VOLUME/
and match them by file name), checked field by field on the demo volume; re-imported, the
volume gives back the same blocks."""
import json
import uuid
from dataclasses import replace
from pathlib import Path

import pytest
from PIL import Image

from app.cli import main
from app.core.exports import mokuro, mokuro_lines
from app.core.project.files import load_project, open_project, save_project
from app.core.project.paths import find_project_file
from app.core.sources import mokuro_volume
from app.core.sources.source import open_source
from app.errors import UserError
from tests.mokuro_data import ROOT, SAMPLES, copy_demo_pages, demo_project, truth_pages


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    out = tmp_path_factory.mktemp("mokuro") / "Demo series"
    project = demo_project()
    result = mokuro.export_mokuro(project, out, volume="vol1")
    return project, result, json.loads(result.mokuro.read_text(encoding="utf-8"))


def _number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def test_the_volume_has_mokuros_layout_and_top_level_fields(exported):
    project, result, data = exported
    out = result.mokuro.parent
    assert result.mokuro == out / "vol1.mokuro" and result.images == out / "vol1" and result.html == out / "vol1.html"
    assert sorted(p.name for p in out.iterdir()) == ["vol1", "vol1.html", "vol1.mokuro"]
    assert set(data) == {"version", "title", "title_uuid", "volume", "volume_uuid", "pages", "hayai_desktop"}
    assert data["version"] == mokuro.MOKURO_VERSION and data["version"] >= "0.2.0"
    assert data["title"] == "Demo series" and data["volume"] == "vol1"  # the folder and the file's names
    for key in ("title_uuid", "volume_uuid"):
        assert str(uuid.UUID(data[key])) == data[key]
    assert data["title_uuid"] != data["volume_uuid"]
    assert len(data["pages"]) == len(project.pages) == 4 and result.pages == 4 and result.skipped == []


def test_every_page_and_block_field(exported):
    project, result, data = exported
    for page, mpage, truth in zip(project.pages, data["pages"], truth_pages(), strict=True):
        assert set(mpage) == {"version", "img_width", "img_height", "blocks", "img_path"}
        assert mpage["version"] == mokuro.MOKURO_VERSION
        # the image, beside the .mokuro in VOLUME/, flat (readers match images by file name)
        assert mpage["img_path"] == page.name and "/" not in mpage["img_path"]
        image = result.images / mpage["img_path"]
        assert image.read_bytes() == (SAMPLES / page.name).read_bytes()  # PNG pages are copied as they are
        with Image.open(image) as im:
            assert (mpage["img_width"], mpage["img_height"]) == im.size == (truth["width"], truth["height"])
        assert len(mpage["blocks"]) == len(page.blocks)
        for block, mb in zip(sorted(page.blocks, key=lambda b: b.order), mpage["blocks"], strict=True):
            assert set(mb) == {"box", "vertical", "font_size", "lines", "lines_coords", "text", "translation"}
            assert mb["box"] == list(block.box) and all(isinstance(v, int) for v in mb["box"])
            assert mb["vertical"] is block.vertical
            assert _number(mb["font_size"]) and mb["font_size"] > 0
            assert all(isinstance(t, str) and t for t in mb["lines"])
            assert "".join(mb["lines"]) == block.display_text.replace("\n", "")  # the corrected text
            assert mb["text"] == block.display_text and mb["translation"] == block.translation
            assert len(mb["lines_coords"]) == len(mb["lines"])
            x0, y0, x1, y1 = block.box
            previous = None
            for q in mb["lines_coords"]:
                assert len(q) == 4 and all(len(p) == 2 and all(_number(v) for v in p) for p in q)
                (ax, ay), (bx, by), (cx, cy), (dx, dy) = q  # top-left, top-right, bottom-right, bottom-left
                assert ax == dx < bx == cx and ay == by < cy == dy
                assert x0 <= ax and bx <= x1 and y0 <= ay and cy <= y1  # inside the block's box
                if previous is not None:  # columns right to left, rows top to bottom
                    assert (bx <= previous[1][0] + 0.5) if block.vertical else (ay >= previous[3][1] - 0.5)
                previous = q
    assert data["pages"][0]["blocks"][1]["text"] == "「理谷意外」だ"  # edited, not the model's text


def test_lines_lie_over_the_glyphs_of_the_truth(exported):
    """The lines come from the ink: on the demo volume they split the text as the truth's lines
    (34 of the 39 unedited blocks when measured; the others are off by a character) and the lines together
    cover the truth's text box (IoU 0.93 on average, 0.82 at worst when measured)."""
    _, _, data = exported
    same = total = 0
    ious = []
    for mpage, truth in zip(data["pages"], truth_pages()):
        for mb, tb in zip(mpage["blocks"], truth["blocks"]):
            if tb["id"] == "b2" and truth["index"] == 0:
                continue  # the edited block
            total += 1
            same += mb["lines"] == tb["lines"]
            xs = [p[0] for q in mb["lines_coords"] for p in q]
            ys = [p[1] for q in mb["lines_coords"] for p in q]
            u = (min(xs), min(ys), max(xs), max(ys))
            t = tb["text_box"]
            inter = max(0, min(u[2], t[2]) - max(u[0], t[0])) * max(0, min(u[3], t[3]) - max(u[1], t[1]))
            ious.append(inter / ((u[2] - u[0]) * (u[3] - u[1]) + (t[2] - t[0]) * (t[3] - t[1]) - inter))
    assert total == 39 and same >= 32
    assert sum(ious) / len(ious) >= 0.88 and min(ious) >= 0.75


def test_round_trip_keeps_blocks_text_box_direction_and_order(exported):
    project, result, data = exported
    back = mokuro_volume.project_from_mokuro(result.mokuro)
    assert Path(back.source) == result.images.resolve()
    assert back.series_uuid == data["title_uuid"] and back.volume_uuid == data["volume_uuid"]
    assert [p.name for p in back.pages] == [p.name for p in project.pages]
    for page, got in zip(project.pages, back.pages, strict=True):
        assert (got.width, got.height, got.processed) == (page.width, page.height, True)
        want = sorted(page.blocks, key=lambda b: b.order)
        assert [(b.display_text, b.box, b.vertical, b.order, b.translation) for b in got.blocks] == \
               [(b.display_text, b.box, b.vertical, b.order, b.translation) for b in want]
    # and the project opened from the exported volume is the same (its images are beside it)
    opened = open_project(result.mokuro)
    assert [[(b.display_text, b.box, b.vertical) for b in p.blocks] for p in opened.pages] == \
           [[(b.display_text, b.box, b.vertical) for b in p.blocks] for p in back.pages]


def test_uuids_are_kept_on_export_again_and_shared_by_a_series(tmp_path):
    src = copy_demo_pages(tmp_path / "lib" / "Series" / "vol1")
    project = demo_project(src)
    out = tmp_path / "Series"
    first = mokuro.export_mokuro(project, out, reader_page=False)
    ids = json.loads(first.mokuro.read_text(encoding="utf-8"))
    assert ids["title"] == "Series" and ids["volume"] == "vol1" and first.html is None
    assert first.project.series_uuid == ids["title_uuid"] and project.series_uuid == ""  # the caller saves it
    save_project(first.project)
    again = mokuro.export_mokuro(load_project(find_project_file(src)), tmp_path / "elsewhere")
    ids2 = json.loads(again.mokuro.read_text(encoding="utf-8"))
    assert (ids2["title_uuid"], ids2["volume_uuid"]) == (ids["title_uuid"], ids["volume_uuid"])
    # a project that has lost its UUID (a new project, a JSON export) adopts the .mokuro's it replaces
    fresh = mokuro.export_mokuro(demo_project(src), out)
    ids3 = json.loads(fresh.mokuro.read_text(encoding="utf-8"))
    assert (ids3["title_uuid"], ids3["volume_uuid"]) == (ids["title_uuid"], ids["volume_uuid"])
    # another volume exported into the series' folder joins the series
    vol2 = mokuro.export_mokuro(demo_project(src), out, volume="vol2")
    ids4 = json.loads(vol2.mokuro.read_text(encoding="utf-8"))
    assert ids4["title_uuid"] == ids["title_uuid"] and ids4["volume_uuid"] != ids["volume_uuid"]
    assert ids4["volume_uuid"] == str(uuid.uuid5(uuid.UUID(ids["title_uuid"]), "vol2"))


def _write_mokuro_volume(title: Path) -> Path:
    """A volume in the layout mokuro writes (TITLE/vol1.mokuro, TITLE/vol1/*.png), its blocks in
    mokuro's own form (lines of a vertical block, detector order, no extra fields)."""
    images = title / "vol1"
    images.mkdir(parents=True)
    for name in ("002.png", "001.png"):
        Image.new("RGB", (300, 400), "white").save(images / name)
    col = lambda x0, y0, x1, y1: [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]  # noqa: E731
    data = {
        "version": "0.2.1", "title": "My title", "title_uuid": "4a1f2a9e-0000-4000-8000-000000000001",
        "volume": "vol1", "volume_uuid": "4a1f2a9e-0000-4000-8000-000000000002",
        "pages": [
            {"version": "0.2.1", "img_width": 300, "img_height": 400, "img_path": "001.png", "blocks": [
                {"box": [200, 20, 260, 200], "vertical": True, "font_size": 26,
                 "lines_coords": [col(232, 20, 260, 190), col(200, 20, 228, 120)], "lines": ["あたしはナナ！！", "５さい！"]},
                {"box": [20, 300, 280, 330], "vertical": False, "font_size": 24,
                 "lines_coords": [col(20, 300, 280, 330)], "lines": ["．．．"]},
            ]},
            {"version": "0.2.1", "img_width": 300, "img_height": 400, "img_path": "002.png", "blocks": []},
        ],
    }
    path = title / "vol1.mokuro"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def test_a_volume_written_by_mokuro_opens_as_a_project(tmp_path):
    path = _write_mokuro_volume(tmp_path / "My title")
    for given in (path, tmp_path / "My title", tmp_path / "My title" / "vol1"):  # the file, its folder, the images
        with open_source(given) as source:
            assert source.path == (tmp_path / "My title" / "vol1").resolve()
            assert source.page_names == ["001.png", "002.png"]
        project = open_project(given)
        assert Path(project.source) == source.path
        assert [p.name for p in project.pages] == ["001.png", "002.png"]
        blocks = project.pages[0].blocks
        assert [b.display_text for b in blocks] == ["あたしはナナ！！５さい！", "．．．"]  # lines joined, in order
        assert [b.order for b in blocks] == [1, 2] and [b.vertical for b in blocks] == [True, False]
        assert blocks[0].box == (200.0, 20.0, 260.0, 200.0) and blocks[0].model == "mokuro"
        assert project.pages[1].blocks == () and project.pages[1].processed
        assert project.series_uuid.endswith("0001") and project.volume_uuid.endswith("0002")
    # corrected and translated in the app, saved: the saved project wins over the .mokuro from then on
    edited = replace(project.pages[0].blocks[0], text="あたしはナナ！！５さい！！", translation="I'm Nana!! Five!")
    project.pages[0] = replace(project.pages[0], blocks=(edited, project.pages[0].blocks[1]))
    save_project(project)
    assert open_project(path).pages[0].blocks[0].display_text == "あたしはナナ！！５さい！！"
    # ... and exported back, the reader keeps the volume: the same UUIDs
    back = mokuro.export_mokuro(open_project(path), tmp_path / "export")
    data = json.loads(back.mokuro.read_text(encoding="utf-8"))
    assert data["title_uuid"].endswith("0001") and data["volume_uuid"].endswith("0002")
    assert data["pages"][0]["blocks"][0]["translation"] == "I'm Nana!! Five!"
    assert "".join(data["pages"][0]["blocks"][0]["lines"]) == "あたしはナナ！！５さい！！"


def test_join_lines_and_the_text_field():
    assert mokuro_volume.join_lines(["今日も", "大猟！"]) == "今日も大猟！"
    assert mokuro_volume.join_lines(["Hello", "world"]) == "Hello world"
    assert mokuro_volume.join_lines(["Hello ", "world"]) == "Hello world"
    laid = mokuro_lines.layout_lines("Two lines\nof text", (0, 0, 300, 100), False)
    block = {"box": [0, 0, 300, 100], "lines": list(laid.lines), "text": "Two lines\nof text"}
    assert mokuro_volume.block_from_mokuro(block, 0).display_text == "Two lines\nof text"  # our line breaks kept
    block["lines"] = ["Two lines", "of texts"]  # edited in another tool: the lines win
    assert mokuro_volume.block_from_mokuro(block, 0).display_text == "Two lines of texts"


def test_layout_without_ink_fits_the_box():
    for text, box, vertical in [("あいうえおかきくけこさしすせそ", (100, 100, 160, 400), True),
                                ("Where did you catch that thing?", (10, 10, 210, 90), False),
                                ("一\n二行目", (0, 0, 80, 80), True), ("", (0, 0, 10, 10), False)]:
        laid = mokuro_lines.layout_lines(text, box, vertical)
        assert "".join(laid.lines) == text.replace("\n", "")
        for r in laid.rects:
            assert box[0] - 1e-6 <= r[0] < r[2] <= box[2] + 1e-6 and box[1] - 1e-6 <= r[1] < r[3] <= box[3] + 1e-6
        xs = [r[0] for r in laid.rects]
        ys = [r[1] for r in laid.rects]
        assert xs == sorted(xs, reverse=True) if vertical else ys == sorted(ys)
    assert mokuro_lines.layout_lines("一\n二行目", (0, 0, 80, 80), True).lines == ("一", "二行目")
    latin = mokuro_lines.layout_lines("Where did you catch that thing?", (10, 10, 210, 90), False)
    assert len(latin.lines) >= 2 and all(not t.startswith(" ") for t in latin.lines[1:])


def test_flat_unique_image_names():
    names = mokuro.image_names(["ch1/001.png", "ch2/001.png", "002.jpeg", "003.bmp", "a.PNG"])
    assert names == {"ch1/001.png": "ch1_001.png", "ch2/001.png": "ch2_001.png", "002.jpeg": "002.jpeg",
                     "003.bmp": "003.png", "a.PNG": "a.PNG"}


def test_pages_in_formats_readers_cannot_show_are_converted(tmp_path):
    src = tmp_path / "vol"
    src.mkdir()
    Image.new("RGB", (64, 80), "white").save(src / "001.bmp")
    im = Image.new("RGB", (60, 40), "white")  # stored sideways: EXIF orientation 6 (rotate 90)
    exif = im.getexif()
    exif[0x0112] = 6
    im.save(src / "002.jpg", exif=exif)
    project = open_project(src)
    result = mokuro.export_mokuro(project, tmp_path / "out")
    data = json.loads(result.mokuro.read_text(encoding="utf-8"))
    assert [p["img_path"] for p in data["pages"]] == ["001.png", "002.jpg"]
    with Image.open(result.images / "001.png") as a, Image.open(result.images / "002.jpg") as b:
        assert a.format == "PNG" and a.size == (64, 80)
        assert b.size == (40, 60) and b.getexif().get(0x0112, 1) == 1  # upright, as the coordinates
    assert [(p["img_width"], p["img_height"]) for p in data["pages"]] == [(64, 80), (40, 60)]


def test_bad_mokuro_files_are_refused_naming_the_file(tmp_path):
    path = _write_mokuro_volume(tmp_path / "T")
    data = json.loads(path.read_text(encoding="utf-8"))
    data["pages"][0]["blocks"][0]["box"] = [1, 2, 3]
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(UserError, match=r"vol1\.mokuro: not a valid \.mokuro file \(pages\[0\]\.blocks\[0\]\.box"):
        open_project(path)
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(UserError, match=r"vol1\.mokuro: the \.mokuro file is not valid JSON .*Run mokuro on the volume again"):
        open_source(path)
    lone = tmp_path / "lone"
    lone.mkdir()
    (lone / "v.mokuro").write_text(json.dumps({"pages": [{"img_path": "001.png"}]}), encoding="utf-8")
    with pytest.raises(UserError, match=r"v\.mokuro: its page images are not beside it: put the folder v/"):
        open_source(lone / "v.mokuro")
    (lone / "w.mokuro").write_text("{}", encoding="utf-8")
    with pytest.raises(UserError, match=r"holds 2 mokuro volumes \(v\.mokuro, w\.mokuro\); open one"):
        open_source(lone)


def test_cli_export_mokuro_and_reader(tmp_path, capsys):
    src = copy_demo_pages(tmp_path / "Series" / "vol1")
    save_project(demo_project(src))
    out = tmp_path / "out"
    assert main(["export", str(src), "--format", "mokuro", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "vol1.mokuro" in err and "4 page image(s)" in err
    data = json.loads((out / "vol1.mokuro").read_text(encoding="utf-8"))
    assert sorted(p.name for p in (out / "vol1").iterdir()) == [t["image"] for t in truth_pages()]
    assert (out / "vol1.html").is_file()
    assert load_project(find_project_file(src)).series_uuid == data["title_uuid"]  # kept for next time
    assert main(["export", str(src), "--out", str(tmp_path / "again"), "--no-reader-page", "--volume", "v1"]) == 0
    again = json.loads((tmp_path / "again" / "v1.mokuro").read_text(encoding="utf-8"))
    assert again["title_uuid"] == data["title_uuid"] and not (tmp_path / "again" / "v1.html").exists()
    # the same text as the library function writes (GUI and CLI run the same export)
    direct = mokuro.export_mokuro(load_project(find_project_file(src)), tmp_path / "direct", title="out",
                                  volume="vol1")
    ref = json.loads(direct.mokuro.read_text(encoding="utf-8"))
    assert ref == data
    # a .mokuro volume is an INPUT too, and the reader page is one file
    html = tmp_path / "reader.html"
    assert main(["export", str(out / "vol1.mokuro"), "--out", str(html)]) == 0
    assert html.is_file() and html.read_text(encoding="utf-8").count("data:image/png;base64,") == 4
    assert main(["export", str(tmp_path / "nowhere"), "--out", str(out)]) == 2
    assert "no such export" in capsys.readouterr().err


def test_cli_export_leaves_a_project_held_by_another_editor_alone(tmp_path, capsys):
    from app.core.project.lock import ProjectLock

    src = copy_demo_pages(tmp_path / "Series" / "vol1")
    save_project(demo_project(src))
    before = find_project_file(src).read_bytes()
    with ProjectLock(src, "Hayai Desktop"):  # the app has the project open
        assert main(["export", str(src), "--out", str(tmp_path / "out")]) == 0
    assert "is being edited by Hayai Desktop" in capsys.readouterr().err
    assert find_project_file(src).read_bytes() == before  # not written over
    assert (tmp_path / "out" / "vol1.mokuro").is_file()


def test_the_volume_can_go_beside_its_own_page_folder(tmp_path):
    """As mokuro does it: Series/vol1.mokuro beside Series/vol1/; the pages are not touched."""
    src = copy_demo_pages(tmp_path / "Series" / "vol1")
    before = {p.name: p.stat().st_mtime_ns for p in src.iterdir()}
    result = mokuro.export_mokuro(demo_project(src), tmp_path / "Series")
    assert result.mokuro == tmp_path / "Series" / "vol1.mokuro" and result.images == src
    assert {p.name: p.stat().st_mtime_ns for p in src.iterdir()} == before
    back = open_project(result.mokuro)
    assert [len(p.blocks) for p in back.pages] == [len(p.blocks) for p in demo_project(src).pages]
    Image.new("RGB", (40, 40), "white").save(src / "page_0004.bmp")  # would have to be converted
    with pytest.raises(UserError, match=r"page_0004\.png: exporting beside the volume's own page folder"):
        mokuro.export_mokuro(open_project(src), tmp_path / "Series")
    assert not (src / "page_0004.png").exists()


def test_the_demo_volume_read_by_the_pipeline_round_trips_through_mokuro(tmp_path, capsys):
    """The demo volume as the app reads it (`ocr` with the demo models), exported for mokuro
    readers by `export`, and opened again: the same blocks, text, boxes, directions and order."""
    from app.core.exports.json_read import read_json_export

    demo = ROOT / "app" / "resources" / "demo"
    src = copy_demo_pages(tmp_path / "Demo" / "samples")
    read = tmp_path / "read.json"
    assert main(["ocr", str(src), "--model", str(demo / "hayai-demo-ocr"), "--detector",
                 str(demo / "hayai-demo-detector.pt"), "--device", "cpu", "--patches", "256",
                 "--max-new-tokens", "48", "--out", str(read)]) == 0
    project = read_json_export(read)
    assert sum(len(p.blocks) for p in project.pages) >= 30  # the demo detector finds most of the 40
    out = tmp_path / "library" / "Demo"
    assert main(["export", str(read), "--out", str(out)]) == 0
    data = json.loads((out / "samples.mokuro").read_text(encoding="utf-8"))
    assert [p["img_path"] for p in data["pages"]] == [p.name for p in project.pages]
    for page, mpage in zip(project.pages, data["pages"], strict=True):
        assert [b["box"] for b in mpage["blocks"]] == [list(b.box) for b in page.blocks]
        assert ["".join(b["lines"]) for b in mpage["blocks"]] == [b.display_text.replace("\n", "")
                                                                   for b in page.blocks]
    back = open_project(out / "samples.mokuro")
    assert [[(b.display_text, b.box, b.vertical, b.order) for b in p.blocks] for p in back.pages] == \
           [[(b.display_text, b.box, b.vertical, b.order) for b in p.blocks] for p in project.pages]
