"""The options `serve` and `mcp` share, and the service they make from them."""
from __future__ import annotations

import ipaddress
import sys

from app.errors import UserError
from app.service.security import MAX_BODY


def add_service_options(p, port: int) -> None:
    from app.commands.common import add_detector_options, add_model_options
    from app.commands.translate import add_translation_options

    g = p.add_argument_group("service")
    g.add_argument("--root", action="append", default=[], metavar="DIR",
                   help="a folder callers may open volumes in and export to (repeatable; none: nothing can be opened)")
    g.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    g.add_argument("--port", type=int, default=port, help=f"port (default {port}; 0: any free port)")
    g.add_argument("--listen-public", action="store_true",
                   help="allow --host to be an address other machines can reach (a warning is printed)")
    g.add_argument("--token-file", metavar="FILE",
                   help="the bearer token's file (default: api-token in the settings folder; made on first start)")
    g.add_argument("--cors", action="append", default=[], metavar="ORIGIN",
                   help="allow a browser page from ORIGIN to call the API (repeatable; default: none)")
    g.add_argument("--max-body", type=int, default=MAX_BODY, help=f"largest request body in bytes (default {MAX_BODY})")
    g.add_argument("--inpaint", choices=("auto", "opencv", "lama"), default="auto", help="text removal of exports")
    g.add_argument("--lang", default="en", help="hyphenation language of the translation (default: en)")
    add_detector_options(p)
    add_model_options(p)
    add_translation_options(p, model_flag="--translation-model")


def check_host(args) -> None:
    host = args.host
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if loopback:
        return
    if not args.listen_public:
        raise UserError(f"--host {host}: other machines could reach the server there. Add --listen-public if "
                        "that is meant (the token is then all that guards your files), or keep 127.0.0.1.")
    print(f"hayai-desktop: WARNING: listening on {host}: any machine that can reach it and knows the token "
          "can read and change the volumes under the roots.", file=sys.stderr)


def make_service(args):
    from app.commands.common import check_detector_options, check_model_options
    from app.service.security import Roots
    from app.service.volumes import Service

    check_model_options(args)
    check_detector_options(args)
    if not args.root:
        print("hayai-desktop: no --root given: no volume can be opened until the server is started with "
              "--root DIR.", file=sys.stderr)
    return Service(Roots(args.root), args)


def token_for(args) -> str:
    from app.service.security import default_token_file, load_or_make_token

    token, made = load_or_make_token(args.token_file)
    if made:
        print(f"hayai-desktop: a new API token (kept in {args.token_file or default_token_file()}; shown "
              f"once): {token}", file=sys.stderr)
    return token
