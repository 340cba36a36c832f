"""The document: a project is its source plus pages; a page holds blocks in reading order.

Plain data, no Qt. Blocks and pages are frozen: an edit makes a new value with
`dataclasses.replace`, which makes undo/redo and thread hand-off safe. Coordinates are in
source-image pixels (x0, y0, x1, y1), origin top-left.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from app.render.strokes import MaskStroke
from app.render.style import StyleOverride, TextStyle
from app.translate.base import GlossaryEntry
from app.translate.memory import StoryMemory

Box = tuple[float, float, float, float]

KINDS = ("bubble", "text", "caption", "sfx", "other", "manual")
# Text outside bubbles (app.detect.freetext): captions (free text, narration) and sound effects.
# "text" (a text detection read without the page, a mokuro import, projects before 1.3) is not
# told apart from dialogue, so it is lettered in place like a bubble.
OUTSIDE_KINDS = ("caption", "sfx")
# What the lettering does with them (Project.outside, per kind): "translate" cleans the text and
# letters the translation in its place (as a bubble); "keep" leaves it as it is (not cleaned, not
# lettered; the translation is still made and kept); "beside" leaves it and letters a small
# translation beside it.
OUTSIDE_POLICIES = ("translate", "keep", "beside")


def default_outside() -> dict[str, str]:
    return dict.fromkeys(OUTSIDE_KINDS, "translate")


def outside_from(data, where: str = "outside") -> dict[str, str]:
    """The policies for text outside bubbles from a file's object (None: the defaults). A kind
    this build does not know is kept (a newer build's); ValueError names a policy it does not
    know, or an object that is none."""
    out = default_outside()
    if data is None:
        return out
    if not isinstance(data, dict):
        raise ValueError(f"{where}: expected an object")
    for kind, policy in data.items():
        if kind in OUTSIDE_KINDS and policy not in OUTSIDE_POLICIES:
            raise ValueError(f"{where}.{kind}: must be one of {', '.join(OUTSIDE_POLICIES)}, not {policy!r}")
        out[str(kind)] = policy
    return out


def outside_group(kind: str) -> str | None:
    """The policy a block of `kind` follows: "caption", "sfx", or None (bubbles, plain "text" and
    boxes the user drew are always translated in place)."""
    return kind if kind in OUTSIDE_KINDS else None


@dataclass(frozen=True)
class Block:
    id: str  # stable id, unique within its page
    order: int  # 1-based reading-order number
    kind: str  # one of KINDS
    box: Box
    polygon: tuple[tuple[float, float], ...] | None = None
    vertical: bool = False
    score: float | None = None  # detector confidence, None for user-drawn boxes
    ocr_text: str = ""  # the model's text
    text: str | None = None  # the user's edited text, None when not edited
    translation: str = ""  # the translation to use: the machine's, or the user's own
    model: str = ""  # which OCR model produced ocr_text
    patches: int | None = None  # patch budget used for ocr_text
    style: StyleOverride | None = None  # lettering changes to the project's style (None: as the project)
    mask_edits: tuple[MaskStroke, ...] = ()  # brush strokes on the text mask, page pixels, in order
    machine_translation: str = ""  # what the last translation run gave ("" = none)
    translator: str = ""  # which backend/model produced machine_translation
    # "untranslated": the last run's answer (in machine_translation) looks untranslated (the
    # source copied back, or still in the source's script): not used as the translation, not
    # counted, and the next run asks again. "degenerate": the same for an answer that looks
    # degenerate (app.translate.judge: "The" for a sentence, one text for many lines). "" otherwise.
    machine_flag: str = ""
    # the user accepted the machine translation as it is (one key in the GUI): it enters the
    # translation memory (app.core.translation.translation_memory) like a translation typed by hand
    approved: bool = False
    # keys of a newer build's file this build does not know: kept and written back (app.core.project.versioning)
    extra: dict | None = field(default=None, compare=False, repr=False)

    @property
    def display_text(self) -> str:
        """What the user sees: the edited text when there is one, else the model's."""
        return self.text if self.text is not None else self.ocr_text

    @property
    def edited(self) -> bool:
        return self.text is not None and self.text != self.ocr_text

    @property
    def translation_edited(self) -> bool:
        """The translation is the user's own (typed, imported, or a machine one changed by hand):
        a translation run keeps it unless told to replace it."""
        return bool(self.translation) and self.translation != self.machine_translation

    @property
    def looks_untranslated(self) -> bool:
        """The machine's answer was not a translation and nothing else stands in for it."""
        return self.machine_flag == "untranslated" and not self.translation.strip()

    @property
    def looks_degenerate(self) -> bool:
        """The machine's answer looked degenerate and nothing else stands in for it."""
        return self.machine_flag == "degenerate" and not self.translation.strip()

    @property
    def needs_translation(self) -> bool:
        """Has source text and no translation yet."""
        return bool(self.display_text.strip()) and not self.translation.strip()


@dataclass(frozen=True)
class Page:
    name: str  # path relative to the source root (or the archive member name)
    width: int = 0
    height: int = 0
    blocks: tuple[Block, ...] = ()
    processed: bool = False  # detection + OCR has run on this page
    error: str | None = None  # why the page could not be read, if it could not
    sizes: str | None = None  # how its bubbles' sizes are harmonised (SIZE_MODES); None: as the project
    order_by_hand: bool = False  # the user renumbered the blocks: reading the page again keeps their order
    # "check the order": why the reading order may be wrong (app.detect.confidence's doubt, in
    # words) when the rules were not sure of it; None: no mark. A renumbering by hand clears it.
    order_check: str | None = None
    # the user checked the page's text ("Mark page checked"): its blocks' texts, edited or left as
    # read, are what the page says (app.core.reading.corrections: confirmations for adapting the OCR)
    checked: bool = False
    extra: dict | None = field(default=None, compare=False, repr=False)  # unknown keys, kept (Block.extra)

    @property
    def translated(self) -> bool:
        """Read, and every block with text has a translation (a translation run skips it)."""
        return self.processed and self.error is None and not any(b.needs_translation for b in self.blocks)

    def block(self, block_id: str) -> Block | None:
        return next((b for b in self.blocks if b.id == block_id), None)

    def with_blocks(self, blocks) -> Page:
        """A copy with these blocks, renumbered 1..n in the given order."""
        ordered = tuple(replace(b, order=i + 1) for i, b in enumerate(blocks))
        return replace(self, blocks=ordered)


@dataclass
class Project:
    source: str  # absolute path of the folder or archive
    pages: list[Page] = field(default_factory=list)
    order: str = "rtl"  # reading order used for detection: rtl (manga) or ltr
    version: int = 1
    style: TextStyle = field(default_factory=TextStyle)  # the project's lettering style
    glossary: list[GlossaryEntry] = field(default_factory=list)  # the project's own terms
    # Identity for readers of the .mokuro export (app.core.exports.mokuro): the series' UUID, random once
    # and kept; the volume's UUID only when the volume came from a .mokuro file ("" = derived
    # from the series' UUID and the volume's name), so that a reader keeps its progress.
    series_uuid: str = ""
    volume_uuid: str = ""
    # top-level keys this build does not know, per file format they came from (written back to it)
    extra: dict[str, dict] = field(default_factory=dict, compare=False, repr=False)
    # why this project must not be written over (a file of a newer major version), else None
    read_only: str | None = field(default=None, compare=False)
    sizes: str = "each"  # the pages' size harmonisation (app.render.page.SIZE_MODES) unless a page says
    memory: StoryMemory = field(default_factory=StoryMemory)  # characters, terms, story so far
    dismissed_proposals: list[str] = field(default_factory=list)  # glossary proposals dismissed (source terms)
    # text outside bubbles: {"caption": policy, "sfx": policy} (OUTSIDE_POLICIES)
    outside: dict[str, str] = field(default_factory=default_outside)

    def outside_policy(self, kind: str) -> str:
        """How a block of `kind` is lettered: its group's policy, "translate" for bubbles."""
        group = outside_group(kind)
        return self.outside.get(group, "translate") if group else "translate"

    def page_sizes(self, page: Page) -> str:
        """The size harmonisation a page is lettered with: its own, else the project's."""
        return page.sizes or self.sizes

    def page_index(self, name: str) -> int:
        for i, p in enumerate(self.pages):
            if p.name == name:
                return i
        raise KeyError(name)
