"""`hayai-desktop mcp`: an MCP server for AI agents over the volumes under --root.

    hayai-desktop mcp --root DIR [--http [--host 127.0.0.1] [--port 8766] [--token-file FILE]]
        [model, reading and translation options]

Without --http it speaks MCP over stdio (the agent client starts it). With --http it serves
streamable HTTP at /mcp, every request behind the same bearer token as `serve`.
"""
from __future__ import annotations

import argparse
import sys

from app.service.options import add_service_options, check_host, make_service, token_for

PORT = 8766


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("mcp", help="an MCP server for AI agents (stdio, or streamable HTTP with --http)",
                              description=__doc__.split("\n\n", 1)[1],
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--http", action="store_true", help="serve streamable HTTP at /mcp instead of stdio")
    add_service_options(p, PORT)
    p.set_defaults(run=run)
    return p


def run(args) -> int:
    from app.service.mcp_server import create_mcp, http_app

    if args.http:
        check_host(args)
    service = make_service(args)
    try:
        if not args.http:
            create_mcp(service).run("stdio")
            return 0
        import uvicorn

        token = token_for(args)
        mcp = create_mcp(service, host=args.host, port=args.port)
        print(f"hayai-desktop: MCP on http://{args.host}:{args.port}/mcp", file=sys.stderr)
        uvicorn.run(http_app(mcp, token, args.max_body), host=args.host, port=args.port, log_level="warning")
    finally:
        service.close()
    return 0
