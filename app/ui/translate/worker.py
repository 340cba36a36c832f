"""The translation worker: a long-lived QObject on its own QThread (network waits and MarianMT
never block the OCR worker or the window). It keeps one translator per settings (a MarianMT
model loads once), reads the API key itself (keyring can be slow), runs app.core.translation.run
and reports each page as it is done. Requests carry ids and a cancel Event; `TranslateHost` is the same host as the reading worker's
(app.ui.common.worker_host).
"""
from __future__ import annotations

import sys
import threading
import traceback
from dataclasses import dataclass, field

from PySide6.QtCore import QObject, Signal, Slot

from app.errors import Cancelled, UserError
from app.ui.common.worker_host import WorkerHost


@dataclass(frozen=True)
class TranslateRequest:
    """kind: "pages" (translate `names` of `project`) or "probe" (Test connection)."""

    req_id: int
    kind: str
    settings: object  # app.translate.TranslatorSettings
    project: object = None  # a snapshot: app.core.document.types.Project
    names: tuple[str, ...] = ()
    glossary: tuple = ()
    options: object = None  # app.core.translation.run.TranslateOptions
    key: str | None = None  # a key typed in the dialog and not stored yet (probe only)
    tm: object = None  # app.core.translation.translation_memory.TranslationMemory of the run (exact repeats filled from it), or None
    cancel: threading.Event = field(default_factory=threading.Event)


class TranslateWorker(QObject):
    page_translated = Signal(int, object)  # request id, app.core.translation.run.PageOutcome
    progressed = Signal(int, object)  # request id, TranslateProgress
    probed = Signal(int, list)  # request id, lines to show
    failed = Signal(int, str)
    finished = Signal(int, str)  # done | cancelled | failed

    def __init__(self):
        super().__init__()
        self._translator = None
        self._key: tuple | None = None

    @Slot(object)
    def handle(self, req: TranslateRequest) -> None:
        status = "done"
        try:
            if req.cancel.is_set():
                raise Cancelled()
            if req.kind == "probe":
                self._probe(req)
            else:
                self._pages(req)
        except Cancelled:
            status = "cancelled"
        except UserError as exc:
            status = "failed"
            self.failed.emit(req.req_id, str(exc))
        except Exception as exc:  # noqa: BLE001 - thread boundary: a message, not a crash
            status = "failed"
            traceback.print_exc(file=sys.stderr)
            self.failed.emit(req.req_id, f"Unexpected error: {type(exc).__name__}: {exc}")
        self.finished.emit(req.req_id, status)

    def _translator_for(self, settings, key: str | None):
        from app.core.config.api_keys import find_key
        from app.translate import make_translator

        if key is None and settings.provider != "offline":
            key = find_key(settings.provider, settings.base_url).key
        wanted = (settings, key)
        if self._translator is None or self._key != wanted:
            self.close_translator()
            self._translator = make_translator(settings, key, trust_unpinned=False)
            self._key = wanted
        return self._translator

    def _probe(self, req: TranslateRequest) -> None:
        from app.core.config.api_keys import find_key
        from app.translate import make_translator, probe

        key = req.key
        if key is None and req.settings.provider != "offline":
            key = find_key(req.settings.provider, req.settings.base_url).key
        translator = make_translator(req.settings, key)  # a throwaway: the settings may not be kept
        try:
            self.probed.emit(req.req_id, probe(translator, req.cancel.is_set))
        finally:
            translator.close()

    def _pages(self, req: TranslateRequest) -> None:
        from app.core.translation.run import PageImages, translate_pages

        translator = self._translator_for(req.settings, None)
        images = PageImages(req.project.source) if req.settings.page_image != "off" else None
        try:
            for outcome in translate_pages(req.project, translator, req.names, req.glossary, req.options,
                                           progress=lambda p: self.progressed.emit(req.req_id, p),
                                           cancel=req.cancel.is_set, page_image=images, tm=req.tm):
                self.page_translated.emit(req.req_id, outcome)
        finally:
            if images is not None:
                images.close()

    @Slot()
    def close_translator(self) -> None:
        if self._translator is not None:
            self._translator.close()
            self._translator = None
            self._key = None


class TranslateHost(WorkerHost):
    """The translation worker's host (app.ui.common.worker_host): its own thread
    `hayai-translate`, the same registry of live requests and cancel as the reading worker's."""

    def __init__(self, parent=None):
        worker = TranslateWorker()
        super().__init__(worker, "hayai-translate", worker.close_translator, parent)
        self.start()

    def submit(self, kind: str, settings, context: dict | None = None, **fields) -> int:
        return self.submit_built(lambda rid, cancel: TranslateRequest(rid, kind, settings, cancel=cancel, **fields),
                                 context)
