"""`hayai-desktop serve`: the HTTP API (FastAPI on uvicorn) over the volumes under --root.

    hayai-desktop serve --root DIR [--root DIR...] [--host 127.0.0.1] [--port 8765]
        [--token-file FILE] [--cors ORIGIN] [--listen-public] [model, reading and translation options]

Every request needs `Authorization: Bearer TOKEN`; the token is made on first start, printed
once and kept in the settings folder (or --token-file). Only paths under the roots can be opened
or exported to. The API is described at /docs (behind the token) and in docs/api.md.
"""
from __future__ import annotations

import argparse
import sys

from app.service.options import add_service_options, check_host, make_service, token_for

PORT = 8765


def add_parser(subparsers) -> argparse.ArgumentParser:
    p = subparsers.add_parser("serve", help="a local HTTP API for scripts and other programs",
                              description=__doc__.split("\n\n", 1)[1],
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    add_service_options(p, PORT)
    p.set_defaults(run=run)
    return p


def run(args) -> int:
    import uvicorn

    from app.service.http_api import create_app

    check_host(args)
    service = make_service(args)
    token = token_for(args)
    app = create_app(service, token, cors=args.cors, max_body=args.max_body)
    print(f"hayai-desktop: serving on http://{args.host}:{args.port} (docs at /docs)", file=sys.stderr)
    try:
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    finally:
        service.close()
    return 0
