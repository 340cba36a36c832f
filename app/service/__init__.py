"""The local service: Hayai as a door for other programs and agents. `http_api` is the HTTP API
(FastAPI on uvicorn, `hayai-desktop serve`), `mcp_server` the MCP server (`hayai-desktop mcp`,
stdio or streamable HTTP), both thin faces over `volumes` (the projects opened through the
service: the same core edit functions, edit journal, autosave and project lock as the window)
and `jobs` (reading, translating and exporting in the background, one job per project, with
progress, time left and cancel). `security` holds the safety model: the bearer token, the
allowed roots every path must lie under, the bounded request bodies. Nothing here imports Qt;
the work itself is the subcommands' and the core's, never logic of its own.
"""
