"""The HTTP API (`hayai-desktop serve`): FastAPI routes over `Service`, behind the bearer token.

The OpenAPI schema is at /openapi.json and its pages at /docs (both behind the token too, like
everything else). Errors map to statuses: a missing or wrong token 401, a path outside the
roots 403, no such volume / page / block / job 404, a job already running 409, a body over the
limit 413, a read-only volume 423 (who holds it), any other error a user can fix 400.
"""
from __future__ import annotations

import asyncio
import json

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from pydantic import BaseModel, Field

from app.errors import UserError
from app.service.jobs import JobBusy
from app.service.security import MAX_BODY, OutsideRoots, token_matches
from app.service.volumes import NotFound, ReadOnly, Service

PNG = {"content": {"image/png": {}}}


class OpenVolume(BaseModel):
    path: str = Field(description="a folder of pages, a CBZ/ZIP archive, an image or a .mokuro volume under a root")


class BlockChange(BaseModel):
    text: str | None = Field(None, description="the block's text (the transcription)")
    translation: str | None = None
    kind: str | None = Field(None, description="bubble, caption or sfx")
    order: int | None = Field(None, description="its new place in the page's reading order, from 1")


class Pages(BaseModel):
    pages: list[str] | None = Field(None, description="page names; none: every page")


class Translate(Pages):
    to: str | None = Field(None, description="target language, e.g. en (default: the server's)")
    retranslate: bool = False


class Export(BaseModel):
    format: str = Field("cbz", description="cbz, pdf, png, jpg, webp, json, txt, csv, tsv or reader")
    out: str = Field(description="the output file (or folder for png / jpg / webp) under a root")
    text: str = Field("translation", description="what to letter: translation, source or none")


class Guard:
    """ASGI middleware: the token on every HTTP request, and the body bounded."""

    def __init__(self, app, token: str, max_body: int):
        self.app, self.token, self.max_body = app, token, max_body

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        auth = headers.get("authorization", "")
        given = auth[7:] if auth.lower().startswith("bearer ") else None
        if not token_matches(given, self.token):
            return await _plain(send, 401, "a bearer token is needed: Authorization: Bearer <token> "
                                           "(printed when the server first started; kept in its token file).",
                                {"www-authenticate": "Bearer"})
        # the body is read here first, up to the limit (whatever Content-Length says, chunked or
        # not), then handed on: the app never sees more than `max_body` bytes
        body, more = b"", True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.max_body:
                return await _plain(send, 413, f"request body over {self.max_body} bytes.")
        sent = False

        async def replay():
            nonlocal sent
            if sent:
                return await receive()  # the disconnect, when the client goes
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


async def _plain(send, status: int, detail: str, headers: dict | None = None) -> None:
    body = json.dumps({"detail": detail}).encode()
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


STATUS = ((OutsideRoots, 403), (NotFound, 404), (JobBusy, 409), (ReadOnly, 423), (UserError, 400))


def create_app(service: Service, token: str, cors: list[str] | None = None, max_body: int = MAX_BODY) -> FastAPI:
    from app import __version__

    api = FastAPI(title="Hayai Desktop", version=__version__,
                  description="Open volumes under the server's roots, read, correct, translate, check and "
                              "export them. Every request needs `Authorization: Bearer <token>`.")

    @api.exception_handler(UserError)
    async def _user_error(_request: Request, exc: UserError):
        status = next(code for kind, code in STATUS if isinstance(exc, kind))
        return JSONResponse({"detail": str(exc)}, status_code=status)

    @api.exception_handler(KeyError)
    async def _no_job(_request: Request, exc: KeyError):
        return JSONResponse({"detail": str(exc.args[0]) if exc.args else "not found"}, status_code=404)

    @api.get("/health")
    def health() -> dict:
        return {"ok": True, "volumes": len(service.volumes)}

    @api.post("/volumes", summary="Open a volume (a folder, CBZ, image or .mokuro under a root)")
    def open_volume(body: OpenVolume) -> dict:
        return service.open_volume(body.path)

    @api.get("/volumes")
    def volumes() -> list[dict]:
        return service.list_volumes()

    @api.get("/volumes/{vid}/pages", summary="The pages with their state")
    def pages(vid: str) -> list[dict]:
        return service.list_pages(vid)

    @api.get("/volumes/{vid}/pages/{page}/image", response_class=Response, responses={200: PNG})
    def page_image(vid: str, page: str) -> Response:
        return Response(service.page_png(vid, page), media_type="image/png")

    @api.get("/volumes/{vid}/pages/{page}/blocks")
    def blocks(vid: str, page: str) -> list[dict]:
        return service.get_blocks(vid, page)

    @api.get("/volumes/{vid}/pages/{page}/blocks/{block}/crop", response_class=Response, responses={200: PNG})
    def crop(vid: str, page: str, block: str) -> Response:
        return Response(service.crop_png(vid, page, block), media_type="image/png")

    @api.patch("/volumes/{vid}/pages/{page}/blocks/{block}", summary="Set a block's text, translation, kind or order")
    def change_block(vid: str, page: str, block: str, body: BlockChange) -> dict:
        return service.edit_block(vid, page, block, text=body.text, translation=body.translation,
                                  kind=body.kind, position=body.order)

    @api.post("/volumes/{vid}/read", status_code=202, summary="Start a job: detect and read pages")
    def read(vid: str, body: Pages) -> dict:
        return service.start_read(vid, body.pages).as_dict()

    @api.post("/volumes/{vid}/translate", status_code=202, summary="Start a job: translate pages")
    def translate(vid: str, body: Translate) -> dict:
        return service.start_translate(vid, body.pages, body.to, body.retranslate).as_dict()

    @api.post("/volumes/{vid}/export", status_code=202, summary="Start a job: render or export the volume")
    def export(vid: str, body: Export) -> dict:
        return service.start_export(vid, body.format, body.out, body.text).as_dict()

    @api.get("/volumes/{vid}/check", summary="The consistency and fit report")
    def check(vid: str, layout: bool = True) -> dict:
        return service.check(vid, layout)

    @api.get("/jobs")
    def jobs() -> list[dict]:
        return [j.as_dict() for j in service.jobs.jobs.values()]

    @api.get("/jobs/{job_id}")
    def job(job_id: str) -> dict:
        return service.jobs.get(job_id).as_dict()

    @api.post("/jobs/{job_id}/cancel")
    def cancel(job_id: str) -> dict:
        return service.cancel(job_id)

    @api.get("/jobs/{job_id}/events", summary="The job's progress as server-sent events, until it ends")
    async def events(job_id: str) -> StreamingResponse:
        job = service.jobs.get(job_id)

        async def stream():
            seen = -1
            while True:
                if job.changed != seen:
                    seen = job.changed
                    yield f"event: progress\ndata: {json.dumps(job.as_dict())}\n\n"
                    if job.state != "running":
                        return
                await asyncio.sleep(0.1)

        return StreamingResponse(stream(), media_type="text/event-stream")

    api.add_middleware(Guard, token=token, max_body=max_body)
    if cors:  # outside the guard: a browser's preflight carries no token
        from fastapi.middleware.cors import CORSMiddleware

        api.add_middleware(CORSMiddleware, allow_origins=list(cors), allow_methods=["*"],
                           allow_headers=["Authorization", "Content-Type"])
    return api
