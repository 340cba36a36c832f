"""`hayai-desktop models list | download NAME | verify NAME | remove NAME | import FOLDER NAME`.

The model store from the command line (app.models.store does the work). `download` draws a progress
bar on a terminal and prints plain lines otherwise; Ctrl-C cancels between chunks and leaves
partial files that the same command resumes. `verify` exits 1 when a file does not match.
"""
from __future__ import annotations

import argparse
import signal
import sys
import threading

from app.errors import Cancelled, UserError


def add_parser(subparsers) -> None:
    parser = subparsers.add_parser("models", help="list, download and verify OCR models and detectors",
                                   description=__doc__.split("\n\n")[1])
    sub = parser.add_subparsers(dest="models_command", required=True)
    sub.add_parser("list", help="the known models, their size and whether they are installed")
    dl = sub.add_parser("download", help="download a model into the app's model folder (resumable)")
    dl.add_argument("name", help="model name or alias (see `models list`)")
    dl.add_argument("--trust-unpinned", action="store_true",
                    help="allow a model without a pinned sha256 (the detectors' .pt pickles): "
                         "only if you trust its repository")
    vf = sub.add_parser("verify", help="re-hash an installed model's files against the manifest")
    vf.add_argument("name")
    rm = sub.add_parser("remove", help="delete a model from the app's model folder")
    rm.add_argument("name")
    im = sub.add_parser("import", help="copy a local checkpoint folder into the model folder")
    im.add_argument("folder")
    im.add_argument("name")
    parser.set_defaults(run=run)


def _human(n: int | None) -> str:
    if n is None:
        return "?"
    size = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if size < 1000 or unit == "GB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1000
    return f"{n} B"


def _list(out) -> int:
    from app.models import store

    installed = store.installed_models()
    aliases: dict[str, list[str]] = {}
    for alias, name in store.ALIASES.items():
        aliases.setdefault(name, []).append(alias)
    rows = [("NAME", "SIZE", "INSTALLED", "PATH")]
    widths_rows = [rows[0]]
    groups: list[tuple[str, list[tuple[str, str, str, str]]]] = []
    for kind in store.KINDS:
        group = []
        for name, entry in store.MODELS.items():
            if entry.kind != kind:
                continue
            where = installed.get(name)
            label = name + (" (default)" if name == store.default_model(kind) else "")
            state = {"app": "yes", "hf-cache": "yes (HF cache)"}.get(where[1], "") if where else "no"
            group.append((label, _human(entry.size), state, str(where[0]) if where else "-"))
        if group:
            groups.append((store.KIND_LABELS[kind], group))
            widths_rows += group
    widths = [max(len(r[i]) for r in widths_rows) for i in range(3)]

    def line(r) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(r[:3], widths, strict=True)) + "  " + r[3]

    print(line(rows[0]), file=out)
    for label, group in groups:
        print(f"\n{label}:", file=out)
        for r in group:
            print(line(r), file=out)
    print(f"\nmodel folder: {store.models_dir()}", file=out)
    print("aliases: " + "; ".join(f"{n}: {', '.join(a)}" for n, a in aliases.items()), file=out)
    return 0


class _Progress:
    """Byte progress for one download: a redrawn bar on a TTY, one line per file (and per 25 %) else."""

    def __init__(self, out) -> None:
        self.out = out
        self.tty = bool(getattr(out, "isatty", lambda: False)())
        self.file = None
        self.bar = None
        self.last_quarter = -1

    def __call__(self, name: str, done: int, total: int | None) -> None:
        if name != self.file:
            self.finish()
            self.file, self.last_quarter = name, -1
            if self.tty:
                from tqdm import tqdm

                from app.commands.common import tqdm_size

                # redrawn at every chunk, as a download's chunks come a few a second at most
                self.bar = tqdm(total=total, initial=done, desc=name[:28], unit="B", unit_scale=True,
                                unit_divisor=1024, file=self.out, mininterval=0,
                                **tqdm_size(self.out))
        if self.bar is not None:
            self.bar.update(done - self.bar.n)
        else:
            quarter = int(4 * done / total) if total else 0
            if quarter != self.last_quarter:
                self.last_quarter = quarter
                print(f"{name}: {done} / {total if total is not None else '?'} bytes", file=self.out)

    def finish(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None
        self.file = None


def _download(name: str, trust_unpinned: bool, out) -> int:
    from app.models import store

    entry = store.get_entry(name)
    print(f"downloading {entry.name} from {entry.repo_id}@{entry.revision[:12]} "
          f"({store.hf_endpoint()}) into {store.models_dir() / entry.name}", file=out)
    interrupted = threading.Event()
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGINT, lambda *_: interrupted.set())
    bar = _Progress(out)
    try:
        path = store.download(entry, progress=bar, cancel=interrupted.is_set, trust_unpinned=trust_unpinned)
    except Cancelled:
        bar.finish()
        print(f"download cancelled; run `hayai-desktop models download {entry.name}` to resume.", file=out)
        return 130
    finally:
        bar.finish()
        if previous is not None:
            signal.signal(signal.SIGINT, previous)
    print(f"{entry.name}: verified, ready at {path}", file=out)
    return 0


def _verify(name: str, out) -> int:
    from app.models import store

    rows = store.verify(name)
    for file, ok, reason in rows:
        print(f"{'ok ' if ok else 'BAD'}  {file}: {reason}", file=out)
    bad = [file for file, ok, _ in rows if not ok]
    if bad:
        print(f"{store.get_entry(name).name}: {len(bad)} file(s) failed: {', '.join(bad)}. "
              f"Run: {store.download_command(store.get_entry(name))}", file=out)
        return 1
    return 0


def run(args: argparse.Namespace) -> int:
    from app.models import store

    out = sys.stdout
    cmd = args.models_command
    if cmd == "list":
        return _list(out)
    if cmd == "download":
        return _download(args.name, args.trust_unpinned, out)
    if cmd == "verify":
        return _verify(args.name, out)
    if cmd == "remove":
        removed = store.remove(args.name)
        print(f"{store.get_entry(args.name).name}: {'removed' if removed else 'not in the app model folder'}",
              file=out)
        return 0
    if cmd == "import":
        path = store.import_folder(args.folder, args.name)
        print(f"{store.get_entry(args.name).name}: imported to {path}", file=out)
        return 0
    raise UserError(f"unknown models command {cmd!r}")
