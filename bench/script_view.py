"""The Script dock on a big volume: 500 pages, 10,000 blocks (20 a page).

Builds the project in memory (no images needed), gives every page a lettering-fit result (one
block in 7 "overflows", one in 11 "below minimum size", as the fit checker keeps them once it
has laid the pages out), then times, on the GUI thread, in an offscreen QApplication:

- open: the Script model over the document (every row, its translation and fit statuses), its
  filter proxy and the table shown at 1280x800 and painted once;
- filter: showing only "not translated" blocks, then "overflows", then a page range (pages
  100-200), then a text, then all blocks again (each: the proxy re-filtered and the table painted);
- an edit: one translation typed into a cell (the edit through an undo command, the page's rows
  updated, the table painted).

Each figure is the median of --repeat runs, in milliseconds of wall clock, and the process's CPU
time beside it (what the figure would be on an idle machine; the wall clock on a busy one waits
for a core).

    python bench/script_view.py [--pages 500] [--blocks 20] [--repeat 5]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


def _project(pages: int, blocks: int):
    from app.core.document.types import Block, Page, Project

    out = []
    for p in range(pages):
        bs = []
        for b in range(blocks):
            block = Block(id=f"b{b}", order=b + 1, kind="bubble", box=(10, 10 + b, 50, 60 + b),
                          ocr_text=f"ページ{p + 1}の吹き出し{b + 1}、少し長めの台詞です")
            if (p + b) % 3 == 0:
                block = replace(block, translation=f"Line {b + 1} of page {p + 1}",
                                machine_translation=f"Line {b + 1} of page {p + 1}", translator="bench")
            elif (p + b) % 3 == 1:
                block = replace(block, translation=f"My line {b + 1}")
            bs.append(block)
        out.append(Page(name=f"{p + 1:04d}.png", width=1000, height=1500, blocks=tuple(bs), processed=True))
    return Project(source="/bench/volume", pages=out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=500)
    ap.add_argument("--blocks", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args(argv)
    from PySide6.QtGui import QUndoStack
    from PySide6.QtWidgets import QApplication

    from app.ui.editor.document_model import DocumentModel
    from app.ui.editor.undo import push_edit
    from app.ui.script.fit import FitChecker
    from app.ui.script.model import TRANSLATION, ScriptModel
    from app.ui.script.view import ScriptView

    app = QApplication.instance() or QApplication([])
    times: dict[str, list[float]] = {}

    cpu: dict[str, list[float]] = {}

    def clock(key, fn):
        t, c = time.perf_counter(), time.process_time()
        fn()
        app.processEvents()
        times.setdefault(key, []).append((time.perf_counter() - t) * 1000)
        cpu.setdefault(key, []).append((time.process_time() - c) * 1000)

    for _ in range(args.repeat):
        doc = DocumentModel()
        doc.set_project(_project(args.pages, args.blocks))
        stack = QUndoStack()

        def edit(fn, text, merge_key=None, page=None, doc=doc, stack=stack):
            return push_edit(stack, doc, page, fn, text, merge_key)

        holder = {}
        fit = FitChecker(doc, lambda: None)
        for page in doc.project.pages:
            fit.remember(page.name, (), {b.id: "overflows" if i % 7 == 0 else "below minimum size"
                                         for i, b in enumerate(page.blocks) if i % 7 == 0 or i % 11 == 0})

        def open_view(doc=doc, edit=edit, holder=holder, fit=fit):
            view = holder["view"] = ScriptView(ScriptModel(doc, edit, fit=fit))
            view.resize(1280, 800)
            view.show()
            view.repaint()

        clock("open", open_view)
        view = holder["view"]
        rows = view.model.rowCount()
        clock("filter: not translated", lambda v=view: (v.set_status_filter("not translated"), v.table.repaint()))
        shown_untranslated = view.proxy.rowCount()
        clock("filter: overflows", lambda v=view: (v.set_status_filter("overflows"), v.table.repaint()))
        shown_overflows = view.proxy.rowCount()
        clock("filter: all statuses", lambda v=view: (v.set_status_filter(""), v.table.repaint()))
        clock("filter: pages 100-200", lambda v=view: (v.first_page.setValue(100), v.last_page.setValue(200),
                                                        v.table.repaint()))
        clock("filter: text", lambda v=view: (v.search.setText("吹き出し7"), v.table.repaint()))
        clock("filter: all again", lambda v=view: (v.search.clear(), v.first_page.setValue(1), v.last_page.setValue(0),
                                                    v.set_status_filter(""), v.table.repaint()))
        index = view.model.index(rows // 2, TRANSLATION)
        clock("edit one cell", lambda v=view, i=index: (v.model.setData(i, "typed"), v.table.repaint()))
        assert doc.page(view.model.key(rows // 2)[0]).block(view.model.key(rows // 2)[1]).translation == "typed"
        view.close()
        view.deleteLater()
        fit.stop()
        app.processEvents()
    print(f"{args.pages} pages, {rows} blocks ({shown_untranslated} not translated, {shown_overflows} overflow); "
          f"median of {args.repeat}, ms:")
    for key, values in times.items():
        print(f"  {key:24s} {statistics.median(values):8.1f}   (min {min(values):.1f}, max {max(values):.1f})"
              f"   CPU {statistics.median(cpu[key]):8.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
