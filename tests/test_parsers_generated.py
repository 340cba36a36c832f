"""Generated input (Hypothesis) for every parser of files and answers: whatever arrives, a parser
returns its value or raises UserError (or its stage's error) with a message; nothing else
escapes, and what the app writes reads back the same.

Runs are derandomized (the same examples every run) and have no deadline: nothing here depends
on the clock or on luck.
"""
from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.config.settings import AppSettings, load_settings
from app.core.document.types import Block, Page, Project
from app.core.exports.json_read import project_from_export
from app.core.exports.json_txt import export_json_data, export_txt_text, import_txt_text
from app.core.project.codec import project_from_dict, project_to_dict
from app.core.project.files import load_project
from app.errors import UserError
from app.textfile import decode_text
from app.translate.base import GlossaryEntry
from app.translate.contract import read_answer
from app.translate.glossary import format_glossary, load_glossary, parse_glossary

SETTINGS = settings(deadline=None, derandomize=True, max_examples=60, database=None,
                    suppress_health_check=[HealthCheck.too_slow])
FEW = settings(SETTINGS, max_examples=25)

# ----------------------------------------------------------------------------- strategies

json_scalars = st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.floats(allow_nan=False) | st.text(max_size=20)
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20)
words = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
coords = st.floats(0, 5000, allow_nan=False, allow_infinity=False)


@st.composite
def blocks(draw, i: int = 0):
    x0, y0 = draw(coords), draw(coords)
    vertical = draw(st.booleans())
    return Block(id=f"b{i}", order=i + 1, kind=draw(st.sampled_from(("bubble", "text", "other", "manual"))),
                 box=(x0, y0, x0 + draw(coords), y0 + draw(coords)), vertical=vertical,
                 score=draw(st.none() | st.floats(0, 1)), ocr_text=draw(words), text=draw(st.none() | words),
                 translation=draw(words), model=draw(words), patches=draw(st.none() | st.integers(1, 4096)),
                 machine_translation=draw(words), translator=draw(words))


@st.composite
def projects(draw):
    pages = []
    for p in range(draw(st.integers(0, 3))):
        n = draw(st.integers(0, 3))
        pages.append(Page(name=f"{p:03d}-{draw(st.text('abcあい ', max_size=4))}.png", width=draw(st.integers(0, 9000)),
                          height=draw(st.integers(0, 9000)), blocks=tuple(draw(blocks(i)) for i in range(n)),
                          processed=draw(st.booleans()), error=draw(st.none() | words)))
    glossary = [GlossaryEntry(draw(words), draw(words), draw(words)) for _ in range(draw(st.integers(0, 2)))]
    return Project(source="/volumes/vol", pages=pages, order=draw(st.sampled_from(("rtl", "ltr"))), glossary=glossary)


def _mutations(data):
    """A valid file's data with one value somewhere replaced by anything (keys kept)."""
    paths = []

    def walk(value, path):
        paths.append(path)
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, (*path, k))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, (*path, i))
    walk(data, ())
    return st.tuples(st.sampled_from(paths), json_values)


def _set(data, path, value):
    data = json.loads(json.dumps(data))
    if not path:
        return value
    target = data
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return data


# ----------------------------------------------------------------------------- project file

@SETTINGS
@given(projects())
def test_project_file_round_trip(project):
    assert project_from_dict(json.loads(json.dumps(project_to_dict(project)))) == project

def _read_or_refused_naming_it(raw: bytes, name: str, read) -> None:
    """`raw` as the file `name`: `read(path)` reads it, or raises a UserError naming the file."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(raw)
        try:
            read(path)
        except UserError as exc:
            assert name in str(exc)



@SETTINGS
@given(projects(), st.data())
def test_project_file_with_any_value_anywhere_loads_or_says_why(project, data):
    base = project_to_dict(project)
    path, value = data.draw(_mutations(base))
    try:
        project_from_dict(_set(base, path, value), "p.json")
    except UserError as exc:
        assert "p.json" in str(exc)


@FEW
@given(st.binary(max_size=300))
def test_project_file_of_any_bytes_is_refused_with_its_name(raw):
    _read_or_refused_naming_it(raw, "bytes.json", load_project)


# ----------------------------------------------------------------------------- JSON export

@SETTINGS
@given(projects())
def test_json_export_reads_back(project):
    back = project_from_export(json.loads(json.dumps(export_json_data(project))))
    assert [[(b.id, b.display_text, b.translation) for b in p.blocks] for p in back.pages] == \
        [[(b.id, b.display_text, b.translation) for b in sorted(p.blocks, key=lambda b: b.order)] for p in project.pages]


@SETTINGS
@given(projects(), st.data())
def test_json_export_with_any_value_anywhere_reads_or_says_why(project, data):
    base = export_json_data(project)
    path, value = data.draw(_mutations(base))
    try:
        project_from_export(_set(base, path, value), "e.json")
    except UserError as exc:
        assert "e.json" in str(exc)


# ----------------------------------------------------------------------------- TXT import

@SETTINGS
@given(projects(), st.text(max_size=400))
def test_txt_import_of_any_text_never_fails(project, text):
    result = import_txt_text(project, text, into="translation", name="t.txt")
    assert len(result.project.pages) == len(project.pages)
    assert all(w.startswith("t.txt") for w in result.warnings)


plain = st.text(st.characters(whitelist_categories=("L", "N")) | st.sampled_from(" 、。!?"), max_size=20).map(str.strip)


@st.composite
def plain_projects(draw):
    """Projects whose texts a TXT file can carry (no markup at a line's start, no stray CR)."""
    project = draw(projects())
    from dataclasses import replace
    project.pages = [replace(p, blocks=tuple(replace(b, text=draw(plain), translation=draw(plain)) for b in p.blocks))
                     for p in project.pages]
    return project


@SETTINGS
@given(plain_projects(), st.sampled_from(("utf-8", "utf-8-sig", "utf-16", "cp932")))
def test_txt_export_reads_back_in_every_encoding(project, encoding):
    text = export_txt_text(project, translations=True)
    try:
        raw = text.encode(encoding)
    except UnicodeEncodeError:  # a character Shift-JIS has not: not a Shift-JIS file
        return
    decoded = decode_text(raw, "t.txt")
    assert decoded.lstrip("\ufeff").replace("\r\n", "\n") == text
    result = import_txt_text(project, decoded, into="translation", name="t.txt")
    assert result.updated == 0  # the same text: nothing changes


# ----------------------------------------------------------------------------- glossary

glossary_terms = st.text(st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp"), blacklist_characters="#\t"),
                         min_size=1, max_size=12).map(lambda s: " ".join(s.split())).filter(bool)
entries = st.lists(st.builds(GlossaryEntry, glossary_terms.filter(lambda s: not s.startswith(("#", "["))
                                                                  and "->" not in s and "→" not in s and "=>" not in s),
                             glossary_terms, st.just("") | glossary_terms), max_size=6)
ENCODINGS = ("utf-8", "utf-8-sig", "utf-16", "shift_jis")


@SETTINGS
@given(entries, st.sampled_from(("tsv", "arrows", "json")), st.sampled_from(ENCODINGS))
def test_glossary_files_read_back_in_every_format_and_encoding(items, fmt, encoding):
    text = format_glossary(items, fmt)
    try:
        raw = text.encode(encoding)
    except UnicodeEncodeError:
        return
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"g.{fmt}"
        path.write_bytes(raw)
        got = load_glossary(path)
    if fmt == "arrows":  # a note is what follows "#"; a target holding "#" is cut there (documented)
        items = [GlossaryEntry(e.source, e.target, e.note) for e in items]
    assert got == items


@SETTINGS
@given(st.text(max_size=300))
def test_glossary_of_any_text_is_read_or_refused_naming_the_line(text):
    try:
        parse_glossary(text, "g.tsv")
    except UserError as exc:
        assert str(exc).startswith("g.tsv")


@FEW
@given(st.binary(max_size=200))
def test_glossary_of_any_bytes_is_read_or_refused_naming_the_file(raw):
    _read_or_refused_naming_it(raw, "g.txt", load_glossary)


# ----------------------------------------------------------------------------- settings

@FEW
@given(st.one_of(st.binary(max_size=200), json_values.map(lambda v: json.dumps(v).encode()),
                 st.dictionaries(st.sampled_from(("patches", "device", "precision", "recent_sources", "version",
                                                  "minor", "translation_context_pages", "overlay", "x")),
                                 json_values, max_size=5).map(lambda v: json.dumps(v).encode())))
def test_settings_of_any_content_never_stop_the_app(raw):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "settings.json"
        path.write_bytes(raw)
        got = load_settings(path)
        assert isinstance(got, AppSettings)
        assert got.validated() == got or got.read_only


# ----------------------------------------------------------------------------- LLM answers

ids = st.lists(st.sampled_from([f"b{i}" for i in range(1, 8)]), min_size=1, max_size=5, unique=True)


@SETTINGS
@given(ids, st.text(max_size=300))
def test_llm_answer_of_any_text_gives_only_asked_ids(asked, reply):
    answer = read_answer(reply, asked)
    assert set(answer.texts) <= set(asked)
    assert all(isinstance(t, str) and t.strip() for t in answer.texts.values())


@SETTINGS
@given(ids, st.data())
def test_llm_answer_in_any_shape_and_wrapping_is_read(asked, data):
    texts = {i: data.draw(words.filter(lambda s: s.strip())) for i in asked}
    shape = data.draw(st.sampled_from(("list", "translations", "map", "results")))
    items = [{"id": i, "text": t} for i, t in texts.items()]
    value = {"list": items, "translations": {"translations": items}, "map": {"translations": texts},
             "results": {"results": items}}[shape]
    body = json.dumps(value, ensure_ascii=data.draw(st.booleans()))
    wrap = data.draw(st.sampled_from(("{}", "```json\n{}\n```", "Here you go:\n{}\nDone.")))
    answer = read_answer(wrap.replace("{}", body), asked)
    assert answer.texts == {i: t.strip() for i, t in texts.items()}
    # a JSON object that repeats the request ({"segments": ...}) is never read as the answer
    echo = json.dumps({"task": "translate", "segments": items}, ensure_ascii=False)
    assert read_answer(wrap.replace("{}", echo), asked).texts == {}


@SETTINGS
@given(json_values, ids)
def test_llm_answer_of_any_json_gives_only_asked_ids(value, asked):
    answer = read_answer(json.dumps(value), asked)
    assert set(answer.texts) <= set(asked)


pytestmark = pytest.mark.filterwarnings("ignore::hypothesis.errors.NonInteractiveExampleWarning")
