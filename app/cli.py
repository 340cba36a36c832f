"""The `hayai-desktop` command: the GUI by default, headless subcommands for scripted work.

    hayai-desktop [PATH] [--demo] [--smoke-test ...]      open the desktop app
    hayai-desktop recognize ...                           OCR of crops      (app/commands/recognize.py)
    hayai-desktop models list|download|verify ...         the model store   (app/commands/models.py)
    hayai-desktop eval ...                                CER / exact match (app/commands/evaluate.py)
    hayai-desktop ocr ...                                 pages to text     (app/commands/ocr.py)
    hayai-desktop render ...                              translated pages  (app/commands/render.py)
    hayai-desktop translate ...                           machine translation (app/commands/translate.py)
    hayai-desktop batch ...                               a whole library   (app/commands/batch.py)
    hayai-desktop export ...                              mokuro volume, reader page, JSON, TXT (app/commands/export.py)
    hayai-desktop check ...                               consistency check (app/commands/check.py)
    hayai-desktop import-script ...                       a script edited in a spreadsheet (app/commands/import_script.py)
    hayai-desktop eval-translation ...                    translations against references (app/commands/eval_translation.py)
    hayai-desktop serve ...                               the local HTTP API (app/service/serve_command.py)
    hayai-desktop mcp ...                                 the MCP server for agents (app/service/mcp_command.py)
    hayai-desktop adapt ...                               teach the OCR a series' corrections (app/commands/adapt.py)

Each subcommand lives in its own module under app.commands with `add_parser(subparsers)` and a
`run(args) -> int`. Errors a user can fix raise `UserError`: one clear line on stderr, exit 2,
no traceback.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from app import __version__
from app.errors import UserError
from app.logs import configure_logging

SUBCOMMANDS = {
    "recognize": "app.commands.recognize",
    "models": "app.commands.models",
    "eval": "app.commands.evaluate",
    "ocr": "app.commands.ocr",
    "render": "app.commands.render",
    "translate": "app.commands.translate",
    "batch": "app.commands.batch",
    "export": "app.commands.export",
    "import-script": "app.commands.import_script",
    "check": "app.commands.check",
    "eval-translation": "app.commands.eval_translation",
    "serve": "app.service.serve_command",  # the service's faces sit above the commands they reuse
    "mcp": "app.service.mcp_command",
    "adapt": "app.commands.adapt",
}


def _subcommand_parser(name: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hayai-desktop")
    parser.add_argument("--version", action="version", version=f"hayai-desktop {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    module = importlib.import_module(SUBCOMMANDS[name])
    module.add_parser(sub)
    return parser


def _gui_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hayai-desktop",
        description="Hayai Desktop: read manga pages with the Hayai OCR model. "
        f"Subcommands: {', '.join(SUBCOMMANDS)} (hayai-desktop SUBCOMMAND --help).",
    )
    parser.add_argument("--version", action="version", version=f"hayai-desktop {__version__}")
    parser.add_argument("path", nargs="?", help="a folder of pages or a CBZ/ZIP archive to open")
    parser.add_argument("--demo", action="store_true", help="open the sample pages with the demo models")
    parser.add_argument("--smoke-test", action="store_true",
                        help="open the window offscreen, load a page, run the pipeline, exit 0")
    parser.add_argument("--model", help="OCR model folder or name")
    parser.add_argument("--detector", help="detector name or .pt path")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if argv and argv[0] in SUBCOMMANDS:
            args = _subcommand_parser(argv[0]).parse_args(argv)
            configure_logging(stderr=True)
            return int(args.run(args) or 0)
        args = _gui_parser().parse_args(argv)
        from app.ui.shell.main import run_gui  # deferred: Qt only when the GUI is wanted

        return int(run_gui(args) or 0)
    except UserError as exc:
        print(f"hayai-desktop: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("hayai-desktop: interrupted", file=sys.stderr)
        return 130


def exit_now(code: int) -> None:
    """Leave the process with `code` at once, once everything the app wrote is out: the exit
    handlers run (logging, temporary folders) and stdout/stderr are flushed, but the interpreter's
    own teardown is skipped. That teardown unloads torch and ultralytics and took 1.5 to 4 s on a
    2-core machine after the window had closed (seen by users as a hang at exit); it frees memory the system reclaims
    anyway. Only for the program's entry points: never call it from code that others import."""
    import atexit
    import os

    try:
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError, AttributeError):  # closed or replaced streams
                pass
        os._exit(code)


def entry() -> None:
    """The `hayai-desktop` program: `main()`, then `exit_now` with its exit status."""
    try:
        code = main()
    except SystemExit as exc:  # argparse's --help / --version / usage errors
        if exc.code is None or isinstance(exc.code, int):
            code = exc.code or 0
        else:
            print(exc.code, file=sys.stderr)
            code = 1
    except BaseException:  # noqa: BLE001 - a bug: the traceback goes to stderr, as Python would print it
        import traceback

        traceback.print_exc()
        code = 1
    exit_now(code)


if __name__ == "__main__":
    entry()
