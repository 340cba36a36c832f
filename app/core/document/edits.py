"""Edits of one page as pure functions: Page in, new Page out (no Qt).

The GUI wraps each in an undo command holding the page before and after. Boxes are
(x0, y0, x1, y1) in source-image pixels. Unknown block ids raise KeyError.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from app.core.document.types import Block, Box, Page
from app.render.strokes import MaskStroke
from app.render.style import StyleOverride


def _index(page: Page, block_id: str) -> int:
    for i, b in enumerate(page.blocks):
        if b.id == block_id:
            return i
    raise KeyError(f"no block {block_id!r} on page {page.name!r}")


def _replace_block(page: Page, block: Block) -> Page:
    blocks = list(page.blocks)
    blocks[_index(page, block.id)] = block
    return replace(page, blocks=tuple(blocks))


def set_text(page: Page, block_id: str, text: str) -> Page:
    """The user's text for a block; text equal to the model's clears the edit."""
    b = page.blocks[_index(page, block_id)]
    return _replace_block(page, replace(b, text=None if text == b.ocr_text else text))


def restore_text(page: Page, block_id: str) -> Page:
    """Drop the user's edit: the block shows the model's text again."""
    b = page.blocks[_index(page, block_id)]
    return _replace_block(page, replace(b, text=None))


def set_translation(page: Page, block_id: str, translation: str) -> Page:
    """The user's translation for a block (a machine translation stays restorable)."""
    b = page.blocks[_index(page, block_id)]
    return _replace_block(page, replace(b, translation=translation, approved=b.approved and translation == b.translation))


def restore_translation(page: Page, block_id: str) -> Page:
    """Drop the user's translation: the block shows its machine translation again."""
    b = page.blocks[_index(page, block_id)]
    return _replace_block(page, replace(b, translation=b.machine_translation))


def apply_machine_translations(page: Page, texts, translator: str, replace_edited: bool = False,
                               untranslated=None, degenerate=None) -> Page:
    """Machine translations (`texts`: block id -> text) into the page. Each block keeps the
    text as its machine translation; its translation becomes that text unless the user wrote
    their own (`Block.translation_edited`) and `replace_edited` is False. `untranslated`: block
    id -> an answer that looks untranslated: kept as the machine text, flagged, never used as
    the translation; `degenerate`: the same for answers that look degenerate (app.translate.judge).
    Ids no longer on the page (a block deleted meanwhile) are ignored."""
    untranslated = untranslated or {}
    degenerate = degenerate or {}
    blocks = []
    for b in page.blocks:
        text = texts.get(b.id)
        if text is None:
            echo, flag = untranslated.get(b.id), "untranslated"
            if echo is None:
                echo, flag = degenerate.get(b.id), "degenerate"
            if echo is not None and not b.translation.strip():  # a translation it had stays
                b = replace(b, machine_translation=echo, translator=translator, machine_flag=flag)
            blocks.append(b)
            continue
        keep = b.translation_edited and not replace_edited
        blocks.append(replace(b, machine_translation=text, translator=translator, machine_flag="",
                              translation=b.translation if keep else text,
                              approved=b.approved and keep))
    return replace(page, blocks=tuple(blocks))


def clamp_box(box: Box, width: int, height: int) -> Box:
    """The box inside the image, corners sorted; width/height 0 = no clamp."""
    x0, y0, x1, y1 = box
    x0, x1 = sorted((x0, x1))
    y0, y1 = sorted((y0, y1))
    if width > 0 and height > 0:
        x0, x1 = max(0.0, min(x0, width)), max(0.0, min(x1, width))
        y0, y1 = max(0.0, min(y0, height)), max(0.0, min(y1, height))
    return (float(x0), float(y0), float(x1), float(y1))


def set_box(page: Page, block_id: str, box: Box) -> Page:
    """Move or resize a block; the polygon no longer matches, so it is dropped."""
    b = page.blocks[_index(page, block_id)]
    return _replace_block(page, replace(b, box=clamp_box(box, page.width, page.height), polygon=None))


def take_reading(page: Page, read: Sequence[Block]) -> Page:
    """`page` with what a reading of its blocks gave (`read`: blocks re-read by the pipeline, as
    they were when the reading was asked for): each block of the page that is still there with
    the same box takes the reading's `ocr_text`, model and patches, and keeps everything else it
    has now: the user's text, translation and style, even when changed during the reading (a
    text that now equals the model's is no longer an edit). Blocks moved or deleted since are
    left as they are."""
    by_id = {b.id: b for b in read}
    blocks = []
    for b in page.blocks:
        r = by_id.get(b.id)
        if r is not None and r.box == b.box:
            b = replace(b, ocr_text=r.ocr_text, model=r.model, patches=r.patches,
                        text=None if b.text == r.ocr_text else b.text)
        blocks.append(b)
    return replace(page, blocks=tuple(blocks))


def unique_id(page: Page, wanted: str) -> str:
    """`wanted` if no block on the page uses it, else `wanted-2`, `wanted-3`, ..."""
    taken = {b.id for b in page.blocks}
    if wanted and wanted not in taken:
        return wanted
    base = wanted or "m"
    n = 2
    while f"{base}-{n}" in taken:
        n += 1
    return f"{base}-{n}"


def add_block(page: Page, block: Block, position: int | None = None) -> Page:
    """Insert a block (at the end by default), give it a unique id, renumber."""
    block = replace(block, id=unique_id(page, block.id))
    blocks = list(page.blocks)
    blocks.insert(len(blocks) if position is None else position, block)
    return page.with_blocks(blocks)


def add_block_in_reading_order(page: Page, block: Block, order: str = "rtl", panels=None) -> Page:
    """Insert a block (a box drawn by hand) where it falls in the page's reading order, as a
    detected block would be numbered (`panels`: the page's panels in reading order, from
    app.detect.panels), and renumber."""
    from app.detect.order import insertion_index

    position = insertion_index([b.box for b in page.blocks], block.box, order, panels)
    return add_block(page, block, position)


def delete_blocks(page: Page, block_ids) -> Page:
    ids = set(block_ids)
    for i in ids:
        _index(page, i)
    return page.with_blocks([b for b in page.blocks if b.id not in ids])


def merge_blocks(page: Page, block_ids) -> Page:
    """One block covering the given ones, in the first one's place; texts joined in reading order."""
    ids = set(block_ids)
    parts = [b for b in page.blocks if b.id in ids]
    if len(parts) != len(ids):
        missing = ids - {b.id for b in parts}
        raise KeyError(f"no block {sorted(missing)!r} on page {page.name!r}")
    if len(parts) < 2:
        return page
    first = parts[0]
    box = (
        min(b.box[0] for b in parts), min(b.box[1] for b in parts),
        max(b.box[2] for b in parts), max(b.box[3] for b in parts),
    )
    sep = "" if first.vertical or all(_is_cjk_text(b.display_text) for b in parts) else " "
    edited = any(b.text is not None for b in parts)
    merged = replace(
        first,
        box=box,
        polygon=None,
        ocr_text=sep.join(b.ocr_text for b in parts),
        text=sep.join(b.display_text for b in parts) if edited else None,
        translation=" ".join(b.translation for b in parts if b.translation),
        score=None,
    )
    blocks = [merged if b.id == first.id else b for b in page.blocks if b.id == first.id or b.id not in ids]
    return page.with_blocks(blocks)


def reorder(page: Page, block_ids) -> Page:
    """Blocks in the given id order, renumbered 1..n (ids must be exactly the page's): the order
    is the user's now (`order_by_hand`), and the page's "check the order" mark is cleared."""
    ids = list(block_ids)
    if sorted(ids) != sorted(b.id for b in page.blocks):
        raise KeyError(f"reorder of page {page.name!r} must list each block once")
    by_id = {b.id: b for b in page.blocks}
    return replace(page.with_blocks([by_id[i] for i in ids]), order_by_hand=True, order_check=None)


HAND_ORDER_IOU = 0.5  # a block read again is the same block when its box overlaps the old one this much


def read_again(old: Page, new: Page) -> Page:
    """The page `new` as the pipeline read it again, where `old` is the page as it was. When the
    user renumbered `old`'s blocks by hand (`order_by_hand`), the new blocks keep that order: each
    new block that matches an old one (IoU >= HAND_ORDER_IOU) takes its place, the others keep
    their place after the matched block that precedes them in the computed order, and the page
    carries no "check the order" mark (the user set its order)."""
    if not old.order_by_hand or not old.blocks or not new.blocks:
        return new
    from app.core.document.boxes import match_boxes

    pairs = dict((ni, oi) for oi, ni in match_boxes([b.box for b in old.blocks], [b.box for b in new.blocks],
                                                    HAND_ORDER_IOU))
    rank: list[tuple[float, int]] = []
    last = -1.0
    for ni in range(len(new.blocks)):  # computed order; unmatched blocks follow the matched one before them
        last = float(pairs[ni]) if ni in pairs else last + 1e-3
        rank.append((last, ni))
    ordered = [new.blocks[ni] for _, ni in sorted(rank)]
    return replace(new.with_blocks(ordered), order_by_hand=True, order_check=None)


def set_checked(page: Page, checked: bool = True) -> Page:
    """Mark the page's text checked by the user (or take the mark away)."""
    return replace(page, checked=bool(checked))


def move_block(page: Page, block_id: str, new_index: int) -> Page:
    """Move one block to a 0-based position in the reading order."""
    ids = [b.id for b in page.blocks]
    ids.remove(page.blocks[_index(page, block_id)].id)
    ids.insert(max(0, min(new_index, len(ids))), block_id)
    return reorder(page, ids)


def _is_cjk_text(text: str) -> bool:
    return bool(text) and all(ord(c) >= 0x3000 or c.isspace() for c in text)


def set_style(page: Page, block_ids, style: StyleOverride | None) -> Page:
    """Give blocks a style override (None or an empty override: back to the project's style)."""
    style = None if style is None or style.is_empty() else style
    blocks = list(page.blocks)
    for block_id in block_ids:
        i = _index(page, block_id)
        blocks[i] = replace(blocks[i], style=style)
    return replace(page, blocks=tuple(blocks))


HAND_KINDS = ("bubble", "caption", "sfx")  # what a block can be set to by hand


def set_kind(page: Page, block_ids, kind: str) -> Page:
    """Set blocks' kind by hand: a bubble (lettered in place), a caption or a sound effect (the
    project's policy for text outside bubbles applies). The text and translation stay."""
    if kind not in HAND_KINDS:
        raise ValueError(f"block kind {kind!r}: use one of {', '.join(HAND_KINDS)}")
    blocks = list(page.blocks)
    for block_id in block_ids:
        i = _index(page, block_id)
        blocks[i] = replace(blocks[i], kind=kind)
    return replace(page, blocks=tuple(blocks))


def add_mask_stroke(page: Page, block_id: str, stroke: MaskStroke) -> Page:
    """One more brush stroke on a block's text mask."""
    b = page.blocks[_index(page, block_id)]
    return _replace_block(page, replace(b, mask_edits=(*b.mask_edits, stroke)))


def clear_mask_edits(page: Page, block_id: str) -> Page:
    """Back to the automatic text mask."""
    b = page.blocks[_index(page, block_id)]
    return _replace_block(page, replace(b, mask_edits=()))


def approve_translation(page: Page, block_id: str, approved: bool = True) -> Page:
    """Accept the block's machine translation as it is (it enters the translation memory)."""
    b = page.blocks[_index(page, block_id)]
    return _replace_block(page, replace(b, approved=approved and bool(b.translation.strip())))
