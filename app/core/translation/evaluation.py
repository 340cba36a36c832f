"""Measuring translation quality against reference translations (`hayai-desktop eval-translation`).

Input: the OpenMantra annotation format (Hinami et al., AAAI 2021): a JSON list of books, each
`{"book_title", "pages": [{"page_index", "image_paths": {"ja": "images/<book>/ja/NNN.jpg"},
"text": [{"x", "y", "w", "h", "text_ja", "text_en", "text_zh"}]}]}`, boxes in image pixels and
in reading order; image paths relative to the annotation file. Each book becomes a project
(one block per box, the Japanese as its text), translated by the app's own stage, or read from
translations made before; scored per book and overall:

- chrF and BLEU over the whole corpus (sacrebleu, its defaults: chrF with character 6-grams
  and beta 2, BLEU with its 13a tokenizer; `zh` targets with BLEU's zh tokenizer);
- name accuracy: the share of character names in the references that the translation renders
  the same way. A name is a capitalised word (or hyphenated words, "Kuchitaka", "Shiora-chan")
  that occurs in at least two of the book's references and never lower-case, and is not a
  common English word; each (box, name) pair counts once, matched case-insensitively as a
  whole word in the translation of that box. For `zh` references, names are not counted.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.core.document.types import Block, Page, Project
from app.errors import UserError
from app.textfile import read_json_file

REFERENCE_KEYS = {"en": "text_en", "zh": "text_zh", "ja": "text_ja"}
_NOT_NAMES = {
    "I", "I'm", "I'll", "I've", "I'd", "Oh", "Ah", "OK", "Okay", "Yes", "No", "Hey", "Well", "What", "Why", "How",
    "Who", "Where", "When", "The", "A", "An", "This", "That", "It", "It's", "You", "We", "He", "She", "They", "My",
    "Mr", "Mrs", "Ms", "Miss", "Sir", "But", "And", "So", "If", "Is", "Are", "Do", "Don't", "Please", "Thank",
    "Thanks", "Sorry", "Wait", "Huh", "Hmm", "Um", "Uh", "Wow", "Let's", "Now", "There", "Here", "Then", "Just",
    "Not", "All", "Be", "Come", "Go", "Look", "See", "Stop", "Good", "Right", "Sure", "Really", "Me", "Your",
    "Our", "His", "Her", "Their", "Its", "Of", "In", "On", "At", "For", "To", "With", "Hello", "Hi", "Bye",
}
_WORD = re.compile(r"[A-Z][a-z]+(?:-[A-Za-z]+)*")


@dataclass(frozen=True)
class RefBox:
    box: tuple[float, float, float, float]
    source: str
    reference: str


@dataclass
class Book:
    title: str
    source: Path  # the folder the page names are relative to
    pages: list[tuple[str, int, int, list[RefBox]]] = field(default_factory=list)  # name, width, height, boxes

    def project(self, order: str = "rtl") -> Project:
        pages = []
        for name, width, height, boxes in self.pages:
            blocks = tuple(Block(id=f"b{i + 1}", order=i + 1, kind="bubble",
                                 box=b.box, ocr_text=b.source) for i, b in enumerate(boxes))
            pages.append(Page(name=name, width=width, height=height, blocks=blocks, processed=True))
        return Project(source=str(self.source), pages=pages, order=order)

    def references(self) -> list[str]:
        return [b.reference for _n, _w, _h, boxes in self.pages for b in boxes]


def load_references(path: str | Path, target: str = "en", books: Sequence[str] = (), max_pages: int = 0
                    ) -> list[Book]:
    """The books of an OpenMantra-format annotation file; UserError naming the file when it is
    not one."""
    path = Path(path)
    if path.is_dir():
        path = path / "annotation.json"
    key = REFERENCE_KEYS.get(target)
    if key is None:
        raise UserError(f"eval-translation: no references for target language {target!r} (OpenMantra has "
                        f"{', '.join(sorted(REFERENCE_KEYS))})")
    data = read_json_file(path, "annotation file", "Give the annotation.json of the OpenMantra data set.")
    if not isinstance(data, list):
        raise UserError(f"{path}: an OpenMantra annotation is a JSON list of books")
    out = []
    for i, raw in enumerate(data):
        try:
            title = str(raw["book_title"])
            if books and title not in books:
                continue
            book = Book(title, path.parent / "images" / title)
            for page in raw["pages"][: max_pages or None]:
                rel = Path(page["image_paths"]["ja"])
                name = rel.relative_to(Path("images") / title).as_posix() if rel.parts[:2] == ("images", title) \
                    else rel.as_posix()
                boxes = [RefBox((float(t["x"]), float(t["y"]), float(t["x"] + t["w"]), float(t["y"] + t["h"])),
                                str(t.get("text_ja") or ""), str(t.get(key) or ""))
                         for t in page["text"] if str(t.get("text_ja") or "").strip()]
                w = int(page.get("width") or max((b.box[2] for b in boxes), default=0))
                h = int(page.get("height") or max((b.box[3] for b in boxes), default=0))
                book.pages.append((name, w, h, boxes))
        except (KeyError, TypeError, ValueError) as exc:
            raise UserError(f"{path}: book {i + 1} is not in the OpenMantra format ({type(exc).__name__}: {exc})"
                            ) from None
        out.append(book)
    if books and not out:
        raise UserError(f"{path}: none of the books {', '.join(books)} is in the annotation")
    return out


def reference_names(references: Sequence[str]) -> set[str]:
    """Character names in a book's references (see the module doc)."""
    counts: Counter[str] = Counter()
    lower: set[str] = set()
    for ref in references:
        for word in set(_WORD.findall(ref)):
            counts[word] += 1
        lower.update(w.lower() for w in re.findall(r"\b[a-z][a-z-]+\b", ref))
    return {w for w, n in counts.items() if n >= 2 and w not in _NOT_NAMES and w.lower() not in lower}


def name_hits(references: Sequence[str], hypotheses: Sequence[str], names: set[str]) -> tuple[int, int]:
    """(names rendered as in the reference, names in the references), per (box, name)."""
    hit = total = 0
    for ref, hyp in zip(references, hypotheses, strict=True):
        for name in names:
            if re.search(rf"(?<![A-Za-z]){re.escape(name)}(?![A-Za-z])", ref):
                total += 1
                hit += bool(re.search(rf"(?<![A-Za-z]){re.escape(name)}(?![A-Za-z])", hyp, re.IGNORECASE))
    return hit, total


@dataclass(frozen=True)
class Score:
    book: str
    segments: int
    translated: int
    chrf: float
    bleu: float
    names_hit: int
    names_total: int

    @property
    def name_accuracy(self) -> float | None:
        return self.names_hit / self.names_total if self.names_total else None

    def as_dict(self) -> dict:
        return {"book": self.book, "segments": self.segments, "translated": self.translated,
                "chrf": round(self.chrf, 2), "bleu": round(self.bleu, 2),
                "name_accuracy": None if self.name_accuracy is None else round(self.name_accuracy, 4),
                "names": f"{self.names_hit}/{self.names_total}"}


def score(book: str, references: Sequence[str], hypotheses: Sequence[str], target: str = "en",
          names: set[str] | None = None) -> Score:
    import sacrebleu

    refs, hyps = list(references), [h or "" for h in hypotheses]
    chrf = sacrebleu.corpus_chrf(hyps, [refs]).score if refs else 0.0
    bleu = sacrebleu.corpus_bleu(hyps, [refs], tokenize="zh" if target == "zh" else "13a").score if refs else 0.0
    if names is None:
        names = reference_names(refs) if target == "en" else set()
    hit, total = name_hits(refs, hyps, names)
    return Score(book, len(refs), sum(1 for h in hyps if h.strip()), chrf, bleu, hit, total)


def hypotheses_of(project: Project) -> list[str]:
    """The translations of a project's blocks, in the order of the references."""
    return [b.translation for p in project.pages for b in sorted(p.blocks, key=lambda b: b.order)]


def evaluate(books: Sequence[Book], translate: Callable[[Book], Project], target: str = "en") -> list[Score]:
    """Each book translated by `translate(book) -> project`, then scored; the last row is the
    whole corpus (names counted per book)."""
    rows, all_refs, all_hyps = [], [], []
    hit = total = 0
    for book in books:
        project = translate(book)
        refs, hyps = book.references(), hypotheses_of(project)
        if len(hyps) != len(refs):
            raise UserError(f"{book.title}: {len(hyps)} translated blocks for {len(refs)} references; the "
                            "translations do not belong to this annotation")
        row = score(book.title, refs, hyps, target)
        rows.append(row)
        all_refs += refs
        all_hyps += hyps
        hit, total = hit + row.names_hit, total + row.names_total
    overall = score("all", all_refs, all_hyps, target, names=set())
    rows.append(Score("all", overall.segments, overall.translated, overall.chrf, overall.bleu, hit, total))
    return rows
