"""`hayai-desktop mcp` driven by the MCP SDK's own client: over stdio (the server a subprocess,
as a desktop agent starts it) the whole flow of an agent: open the demo volume, read it
(progress reported), look at a block's crop, correct its text, translate against the loopback
LLM server, check, export a CBZ; and the streamable HTTP transport behind the token."""
from __future__ import annotations

import asyncio
import json
import os
import sys
import zipfile

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from app.core.project.files import load_project
from app.core.project.paths import find_project_file
from tests.llm_server import fake_translate
from tests.service_helpers import ROOT, TOKEN, Running, demo_volume, llm_flags, model_flags, serve_args

TOOLS = {"open_volume", "list_pages", "read_pages", "get_blocks", "get_crop", "set_text", "set_translation",
         "translate_pages", "check_volume", "export"}


def _data(result):
    assert not result.isError, result.content
    data = result.structuredContent
    if data is None:
        return json.loads(result.content[0].text)
    return data["result"] if set(data) == {"result"} else data


async def _agent(params, progress: list) -> dict:
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert TOOLS <= set(tools), sorted(tools)
        assert all(len(tools[name].description) > 40 for name in TOOLS)  # something an agent can act on
        vid = _data(await session.call_tool("open_volume", {"path": "vol"}))["id"]

        async def on_progress(done, total, message):
            progress.append((done, total, message))

        job = _data(await session.call_tool("read_pages", {"volume": vid}, progress_callback=on_progress))
        assert job["state"] == "done" and job["result"]["pages"] == 2, job
        pages = _data(await session.call_tool("list_pages", {"volume": vid}))
        first = pages[0]["name"]
        blocks = _data(await session.call_tool("get_blocks", {"volume": vid, "page": first}))
        crop = await session.call_tool("get_crop", {"volume": vid, "page": first, "block": blocks[0]["id"]})
        assert crop.content[0].type == "image" and crop.content[0].mimeType == "image/png"
        resource = await session.read_resource(f"hayai://{vid}/pages/{first}/image")
        assert resource.contents[0].mimeType == "image/png" and resource.contents[0].blob
        fixed = _data(await session.call_tool("set_text", {"volume": vid, "page": first, "block": blocks[0]["id"],
                                                           "text": "ありがとう"}))
        assert fixed["text"] == "ありがとう"
        job = _data(await session.call_tool("translate_pages", {"volume": vid}))
        assert job["state"] == "done" and job["result"]["not_translated"] == 0, job
        report = _data(await session.call_tool("check_volume", {"volume": vid, "layout": False}))
        assert not [f for f in report["findings"] if f["kind"] == "untranslated"], report
        job = _data(await session.call_tool("export", {"volume": vid, "out": "out/vol.cbz", "format": "cbz"}))
        assert job["state"] == "done", job
        outside = await session.call_tool("open_volume", {"path": "/etc"})
        assert outside.isError and "outside" in outside.content[0].text
        return {"first": first, "block": blocks[0]["id"]}


@pytest.mark.timeout(600)
def test_an_agent_over_stdio_reads_corrects_translates_and_exports(fake_llm, tmp_path):
    root = tmp_path / "root"
    vol = demo_volume(root / "vol")
    env = dict(os.environ, OPENAI_API_KEY=fake_llm.key, PYTHONPATH=str(ROOT))
    params = StdioServerParameters(command=sys.executable, cwd=str(ROOT), env=env,
                                   args=["-m", "app", "mcp", "--root", str(root), *model_flags(),
                                         *llm_flags(fake_llm), "--memory", "off"])
    progress: list = []
    seen = asyncio.run(_agent(params, progress))
    assert progress and progress[-1][0] <= progress[-1][1] == 2, progress
    project = load_project(find_project_file(vol))
    block = next(b for b in project.pages[0].blocks if b.id == seen["block"])
    assert block.display_text == "ありがとう" and block.translation == fake_translate("ありがとう")
    assert all(b.translation == fake_translate(b.display_text) for p in project.pages for b in p.blocks
               if b.display_text.strip())
    assert len([n for n in zipfile.ZipFile(root / "out" / "vol.cbz").namelist() if n.endswith(".png")]) == 2


def test_streamable_http_is_behind_the_token(tmp_path):
    from app.service.mcp_server import create_mcp, http_app
    from app.service.options import make_service

    root = tmp_path / "root"
    root.mkdir()
    service = make_service(serve_args("--root", str(root)))
    running = Running(http_app(create_mcp(service), TOKEN, 1 << 20))
    try:
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": "test", "version": "1"}}}
        headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
        assert httpx.post(running.url + "/mcp", json=hello, headers=headers).status_code == 401
        wrong = httpx.post(running.url + "/mcp", json=hello, headers={**headers, "authorization": "Bearer x"})
        assert wrong.status_code == 401
        ok = httpx.post(running.url + "/mcp", json=hello, headers={**headers, "authorization": f"Bearer {TOKEN}"})
        assert ok.status_code == 200 and "hayai-desktop" in ok.text, ok.text
    finally:
        running.stop()
        service.close()
