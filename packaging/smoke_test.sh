#!/usr/bin/env bash
# Build the one-folder bundle from hayai-desktop.spec, then check that the frozen app works where no
# Python environment exists: each check runs under `env -i` (PATH=/usr/bin:/bin, a fresh HOME,
# QT_QPA_PLATFORM=offscreen) from a scratch working directory.
#
#   bash packaging/smoke_test.sh              build, then check   (make bundle)
#   SKIP_BUILD=1 bash packaging/smoke_test.sh check the existing dist/hayai-desktop
#   PY=/path/to/python bash packaging/smoke_test.sh   build with another environment (default: .venv)
#
# Checks (the frozen results must equal those of the source install on the same tiny models):
#   version    hayai-desktop --version
#   recognize  a tiny random-weight OCR checkpoint (app.ocr.testing) on two generated crops
#   ocr        a generated folder of pages with a tiny random-weight YOLO detector (app.detect.testing)
#   gui        --smoke-test: main window offscreen, one page through the pipeline, exit 0
#   render     the ocr export with a translation in every block -> PNG pages and layered PSDs
#   psd        those PSDs read back with psd-tools: one editable type layer per block, holding its translation
#   mokuro     `export --format mokuro`: VOLUME.mokuro (pages, blocks, lines), the page images, the reader page
#   translate  `translate` against a loopback OpenAI-compatible server (tests/llm_server.py's FakeLLM,
#              started by this script) with a series file: its translation memory fills a line
#              without a request, its glossary reaches the server, the rest comes from the server
#   fonts      (within gui) the bundled CJK font draws 漢字かなカナ한글, no glyph is the missing-glyph box
#   notices    LICENSE and THIRD_PARTY_LICENSES in the bundle; the frozen app finds both (within gui)
# Exit status: 0 when every check passed, 1 otherwise. Build log: build/pyinstaller.log.
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT" || exit 1
PY="${PY:-$ROOT/.venv/bin/python}"
[ -x "$PY" ] || PY="$(command -v python3)"
BUNDLE="$ROOT/dist/hayai-desktop/hayai-desktop"
WORK="$(mktemp -d "${TMPDIR:-/tmp}/hayai-bundle-smoke.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
failures=0
passed=()

exec 3>&1  # messages go to the script's stdout even where a command's output is redirected
say() { printf '[smoke] %s\n' "$*" >&3; }
fail() { say "FAIL $*"; failures=$((failures + 1)); }

if [ "${SKIP_BUILD:-0}" != 1 ]; then
    mkdir -p build
    say "building with $("$PY" -m PyInstaller --version 2>/dev/null || echo '?') ($PY); log: build/pyinstaller.log"
    start=$(date +%s)
    if ! "$PY" -m PyInstaller --noconfirm --log-level WARN hayai-desktop.spec >build/pyinstaller.log 2>&1; then
        tail -n 30 build/pyinstaller.log
        say "FAIL build (see build/pyinstaller.log)"
        exit 1
    fi
    say "build time: $(( $(date +%s) - start )) s"
fi
[ -x "$BUNDLE" ] || { say "FAIL no bundle at $BUNDLE"; exit 1; }
say "bundle size: $(du -sh "$ROOT/dist/hayai-desktop" | cut -f1) ($ROOT/dist/hayai-desktop)"

# --- fixtures, made with the build environment before entering the clean one -----------------------
mkdir -p "$WORK/home" "$WORK/cwd" "$WORK/crops" "$WORK/pages" "$WORK/src"
HAVE_DETECT=0; [ -f app/detect/testing.py ] && [ -f app/commands/ocr.py ] && HAVE_DETECT=1
HAVE_GUI=0; [ -f app/ui/shell/main.py ] && HAVE_GUI=1
"$PY" - "$WORK" "$HAVE_DETECT" <<'EOF' || { say "FAIL fixtures"; exit 1; }
import os, sys
from pathlib import Path
from PIL import Image, ImageDraw
work, have_detect = Path(sys.argv[1]), sys.argv[2] == "1"
os.environ.update(YOLO_OFFLINE="1", YOLO_VERBOSE="false", YOLO_AUTOINSTALL="false")
from app.ocr.testing import write_tiny_checkpoint
write_tiny_checkpoint(work / "tiny-ocr")
for i, (w, h) in enumerate([(48, 160), (200, 40)]):
    im = Image.new("RGB", (w, h), "white")
    ImageDraw.Draw(im).text((4, 4), "あい"[i], fill="black")
    im.save(work / "crops" / f"crop{i}.png")
import numpy as np
for i in range(2):  # noisy white pages: the random-weight detector finds boxes in them at conf 0
    rng = np.random.RandomState(i)
    arr = np.full((320, 240, 3), 245, np.uint8)
    arr[rng.rand(320, 240) < 0.05] = 20
    Image.fromarray(arr).save(work / "pages" / f"page-{i + 1:03d}.png")
if have_detect:
    from app.detect.testing import write_tiny_detector
    write_tiny_detector(work / "tiny-detect.pt")
EOF

# Runs the bundle from a clean environment: no venv, no PYTHON*, another working directory.
frozen() {
    (cd "$WORK/cwd" && env -i PATH=/usr/bin:/bin HOME="$WORK/home" QT_QPA_PLATFORM=offscreen "$BUNDLE" "$@")
}
frozen_env() {  # frozen_env VAR=VALUE... -- ARGS...: the same, with these variables set too
    local vars=()
    while [ "$1" != "--" ]; do vars+=("$1"); shift; done
    shift
    (cd "$WORK/cwd" && env -i PATH=/usr/bin:/bin HOME="$WORK/home" QT_QPA_PLATFORM=offscreen "${vars[@]}" "$BUNDLE" "$@")
}
timed() {  # timed NAME CMD...: runs CMD, prints its time
    local name=$1 t0 ms rc; shift
    t0=$(date +%s%N)
    "$@"; rc=$?
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    say "$name: $((ms / 1000)).$(( (ms % 1000) / 100 )) s, exit $rc"
    return $rc
}

# version
want="hayai-desktop $("$PY" -c 'import app; print(app.__version__)')"
got="$(frozen --version 2>&1)"
if [ "$got" = "$want" ]; then passed+=(version); else fail "version: got '$got', want '$want'"; fi

# recognize: frozen output == source output
"$PY" -m app recognize --model "$WORK/tiny-ocr" --device cpu --patches 64 --max-new-tokens 16 --json "$WORK"/crops/*.png >"$WORK/src/recognize.json" 2>"$WORK/src/recognize.err" \
    || { cat "$WORK/src/recognize.err"; fail "recognize (source run)"; }
if timed "recognize (frozen)" frozen recognize --model "$WORK/tiny-ocr" --device cpu --patches 64 --max-new-tokens 16 --json "$WORK"/crops/*.png \
        >"$WORK/recognize.json" 2>"$WORK/recognize.err"; then
    if cmp -s "$WORK/recognize.json" "$WORK/src/recognize.json"; then passed+=(recognize)
    else fail "recognize: frozen output differs from the source install"; diff "$WORK/src/recognize.json" "$WORK/recognize.json" | head; fi
else
    tail -n 20 "$WORK/recognize.err"; fail recognize
fi

# ocr: same pages, texts and boxes as the source install
same_pages() {  # same_pages A.json B.json: the pages and blocks (box, text) agree
    "$PY" - "$1" "$2" <<'EOF'
import json, sys
def key(path):
    doc = json.load(open(path, encoding="utf-8"))
    return [(p["name"], p["error"], [(b["kind"], [round(v, 1) for v in b["box"]], b["text"]) for b in p["blocks"]])
            for p in doc["pages"]]
a, b = key(sys.argv[1]), key(sys.argv[2])
print(f"pages: {len(b)}, blocks: {sum(len(p[2]) for p in b)}")
sys.exit(0 if a == b and len(a) == 2 and all(p[2] for p in b) else 1)
EOF
}
if [ "$HAVE_DETECT" = 1 ]; then
    ocr_args=(ocr "$WORK/pages" --detector "$WORK/tiny-detect.pt" --model "$WORK/tiny-ocr" --device cpu
              --imgsz 256 --conf 0 --patches 64 --max-new-tokens 6 --format json)
    "$PY" -m app "${ocr_args[@]}" --out "$WORK/src/ocr.json" 2>"$WORK/src/ocr.err" \
        || { tail -n 20 "$WORK/src/ocr.err"; fail "ocr (source run)"; }
    if timed "ocr (frozen)" frozen "${ocr_args[@]}" --out "$WORK/ocr.json" 2>"$WORK/ocr.err"; then
        if same_pages "$WORK/src/ocr.json" "$WORK/ocr.json"; then passed+=(ocr)
        else fail "ocr: frozen output differs from the source install"; fi
    else
        tail -n 20 "$WORK/ocr.err"; fail ocr
    fi
    # models: the frozen app imports a detector into the user's data folder (the fresh HOME) and
    # finds it there by name, as the source install does
    if [ -f app/commands/models.py ] && frozen models import "$WORK/tiny-detect.pt" bubbles >"$WORK/import.out" 2>&1 \
        && [ -n "$(find "$WORK/home" -name '*.pt' 2>/dev/null)" ] \
        && frozen models list 2>&1 | grep -q "comic-speech-bubble-detector.*yes" \
        && timed "ocr with the imported detector (frozen)" frozen ocr "$WORK/pages" --detector bubbles --model "$WORK/tiny-ocr" \
            --device cpu --imgsz 256 --conf 0 --patches 64 --max-new-tokens 6 --format json --out "$WORK/ocr2.json" 2>"$WORK/ocr2.err" \
        && same_pages "$WORK/ocr.json" "$WORK/ocr2.json" >/dev/null; then
        passed+=(models)
    elif [ -f app/commands/models.py ]; then
        cat "$WORK/import.out" "$WORK/ocr2.err" 2>/dev/null | tail -n 20; fail "models import + ocr by name"
    fi
else
    say "SKIP ocr (app/commands/ocr.py or app/detect/testing.py not in this tree)"
fi

# render: the frozen app letters a translation into every block of the ocr export and writes
# PNG pages and layered PSDs (Pillow with raqm, pyphen's dictionaries, psd-tools, the shipped fonts)
if [ "$HAVE_DETECT" = 1 ] && [ -f app/commands/render.py ] && [ -f "$WORK/ocr.json" ]; then
    "$PY" - "$WORK/ocr.json" "$WORK/translated.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1], encoding="utf-8"))
for page in doc["pages"]:
    for block in page["blocks"]:
        block["translation"] = "Hyphenation everywhere!"
json.dump(doc, open(sys.argv[2], "w", encoding="utf-8"), ensure_ascii=False)
EOF
    if timed "render png + psd (frozen)" frozen render "$WORK/translated.json" --out "$WORK/rendered" --format png 2>"$WORK/render.err" \
        && frozen render "$WORK/translated.json" --out "$WORK/rendered-psd" --format psd 2>>"$WORK/render.err" \
        && [ "$(ls "$WORK/rendered" | grep -c '\.png$')" = 2 ] && [ "$(ls "$WORK/rendered-psd" | grep -c '\.psd$')" = 2 ]; then
        passed+=(render)
    else
        tail -n 20 "$WORK/render.err"; fail "render"
    fi
fi

# psd: the layered PSDs read back with psd-tools, as another program would open them
if [ -d "$WORK/rendered-psd" ]; then
    if "$PY" - "$WORK/rendered-psd" "$WORK/translated.json" >"$WORK/psd.out" 2>&1 <<'EOF'
import json, sys
from pathlib import Path
from psd_tools import PSDImage
doc = json.load(open(sys.argv[2], encoding="utf-8"))
want = sum(len(p["blocks"]) for p in doc["pages"])
got, bad = 0, []
for path in sorted(Path(sys.argv[1]).glob("*.psd")):
    for layer in PSDImage.open(path).descendants():
        if layer.kind == "type":
            got += 1
            if "Hyphenationeverywhere" not in "".join(ch for ch in layer.text if ch.isalnum()):
                bad.append((path.name, layer.name, layer.text))
print(f"type layers: {got} (blocks: {want})" + (f"; wrong text: {bad[:3]}" if bad else ""))
sys.exit(0 if got == want and not bad else 1)
EOF
    then passed+=(psd); say "psd: $(cat "$WORK/psd.out")"
    else tail -n 20 "$WORK/psd.out"; fail "psd: type layers"; fi
fi

# mokuro: a .mokuro volume, its page images and the reader page, from the translated export
if [ -f "$WORK/translated.json" ] && [ -f app/commands/export.py ]; then
    if timed "export mokuro (frozen)" frozen export "$WORK/translated.json" --out "$WORK/mokuro" --format mokuro \
            --volume vol1 --title "Smoke series" 2>"$WORK/mokuro.err" \
        && "$PY" - "$WORK/mokuro" "$WORK/translated.json" >"$WORK/mokuro.out" 2>&1 <<'EOF'
import json, sys
from pathlib import Path
out, doc = Path(sys.argv[1]), json.load(open(sys.argv[2], encoding="utf-8"))
volume = json.loads((out / "vol1.mokuro").read_text(encoding="utf-8"))
pages = volume["pages"]
texts = [line for p in pages for b in p["blocks"] for line in b["lines"]]
images = sorted(p.name for p in (out / "vol1").iterdir())
html = (out / "vol1.html").read_text(encoding="utf-8")
want = [b["text"] for p in doc["pages"] for b in p["blocks"]]
print(f"{len(pages)} pages, {len(texts)} lines, images {images}, reader page {len(html)} characters")
ok = (len(pages) == 2 and len(images) == 2 and volume["title"] == "Smoke series" and volume["volume"] == "vol1"
      and "".join(texts).replace(" ", "") == "".join(want).replace("\n", "").replace(" ", "")
      and "<html" in html.lower() and "Hyphenation everywhere!" in html)
sys.exit(0 if ok else 1)
EOF
    then passed+=(mokuro); say "mokuro: $(cat "$WORK/mokuro.out")"
    else cat "$WORK/mokuro.err" "$WORK/mokuro.out" 2>/dev/null | tail -n 20; fail "mokuro export"; fi
fi

# translate: a JSON export in Japanese against a loopback OpenAI-compatible server, with a series file
if [ -f "$WORK/ocr.json" ] && [ -f app/commands/translate.py ] && [ -f tests/llm_server.py ]; then
    mkdir -p "$WORK/series"
    "$PY" - "$WORK/ocr.json" "$WORK/ja.json" "$WORK/series/.hayai-series.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1], encoding="utf-8"))
texts = ["さようなら", "こんにちは", "ありがとう"]
for page in doc["pages"]:  # three blocks a page, one for each text (the tiny detector finds one or two)
    first = page["blocks"][0]
    page["blocks"] = [dict(first, id=f"{first['id']}-{i}", text=text, translation="") for i, text in enumerate(texts)]
json.dump(doc, open(sys.argv[2], "w", encoding="utf-8"), ensure_ascii=False)
series = {"format": "hayai-desktop-series", "version": 1, "minor": 0, "app_version": "0.1.0",
          "glossary": [{"source": "ありがとう", "target": "Thanks-from-the-glossary", "note": ""}],
          "memory": {"characters": [], "terms": [], "summary": ""},
          "tm": [{"source": "さようなら", "target": "Farewell, from the series"}], "style": None}
json.dump(series, open(sys.argv[3], "w", encoding="utf-8"), ensure_ascii=False)
EOF
    "$PY" -c '
import sys, time
sys.path.insert(0, sys.argv[1])
from tests.llm_server import FakeLLM
server = FakeLLM()
print(server.port, server.key, flush=True)
while True:
    time.sleep(1)
' "$ROOT" >"$WORK/llm.port" 2>"$WORK/llm.err" &
    llm_pid=$!
    for _ in $(seq 50); do [ -s "$WORK/llm.port" ] && break; sleep 0.2; done
    read -r llm_port llm_key <"$WORK/llm.port"
    if [ -n "${llm_port:-}" ] && timed "translate with a series file (frozen)" frozen_env OPENAI_API_KEY="$llm_key" -- \
            translate "$WORK/ja.json" --out "$WORK/translated-llm.json" --provider openai \
            --base-url "http://127.0.0.1:$llm_port/v1" --model test-model --to en --use-env-key --timeout 30 \
            --series "$WORK/series/.hayai-series.json" 2>"$WORK/translate.err" \
        && grep -q "a new volume of the series" "$WORK/translate.err" \
        && "$PY" - "$WORK/translated-llm.json" >"$WORK/translate.out" 2>&1 <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1], encoding="utf-8"))
blocks = [b for p in doc["pages"] for b in p["blocks"]]
ok = len(blocks) == 6 and all(b["translation"].strip() for b in blocks)
for b in blocks:
    got = b["translation"].strip()
    if b["text"] == "さようなら":  # the series' translation memory, no request
        ok = ok and got == "Farewell, from the series"
    elif b["text"] == "こんにちは":  # the server's (romanized)
        ok = ok and got.lower() == "konnichiha"
    else:  # the server's, with the series' glossary sent along
        ok = ok and "Thanks-from-the-glossary" in got
print(f"{len(blocks)} blocks translated: " + "; ".join(sorted({f"{b['text']} -> {b['translation'].strip()}" for b in blocks})))
sys.exit(0 if ok else 1)
EOF
    then passed+=(translate); say "translate: $(cat "$WORK/translate.out")"
    else cat "$WORK/llm.err" "$WORK/translate.err" "$WORK/translate.out" 2>/dev/null | tail -n 20; fail "translate against the loopback server"; fi
    kill "$llm_pid" 2>/dev/null
fi

# notices: the licence and THIRD_PARTY_LICENSES beside the bundle's data (the gui check sees the app find them)
internal="$ROOT/dist/hayai-desktop/_internal"
if [ -f "$internal/LICENSE" ] && cmp -s "$internal/LICENSE" LICENSE && [ -f "$internal/THIRD_PARTY_LICENSES" ] \
    && grep -q "^  ultralytics .*AGPL" "$internal/THIRD_PARTY_LICENSES" && grep -q "^  PySide6_Essentials .*LGPL" "$internal/THIRD_PARTY_LICENSES" \
    && grep -q "SIL OPEN FONT LICENSE" "$internal/THIRD_PARTY_LICENSES"; then
    passed+=(notices)
    say "notices: THIRD_PARTY_LICENSES $(wc -c <"$internal/THIRD_PARTY_LICENSES") bytes, $(grep -c '^  [^ ].* [^ ]*: ' "$internal/THIRD_PARTY_LICENSES") distributions listed"
else
    fail "notices: LICENSE or THIRD_PARTY_LICENSES missing from the bundle or incomplete"
fi

# gui: --smoke-test with the tiny models
if [ "$HAVE_GUI" = 1 ] && [ "$HAVE_DETECT" = 1 ]; then
    if timed "gui --smoke-test (frozen)" frozen --smoke-test --model "$WORK/tiny-ocr" --detector "$WORK/tiny-detect.pt" \
            "$WORK/pages" 2>"$WORK/gui.err"; then
        passed+=(gui); grep -i "smoke test" "$WORK/gui.err" | sed 's/^/[smoke]   /'
        # fonts: the bundled CJK face draws every glyph of the check string (none is the missing-glyph box)
        if grep -q "smoke test: font Noto Sans CJK JP: every glyph" "$WORK/gui.err"; then passed+=(fonts)
        else fail "fonts: the bundled CJK font is missing or draws boxes"; fi
        if grep -q "smoke test: licence AGPL-3.0-or-later: .*_internal/LICENSE; third-party notices: bundled THIRD_PARTY_LICENSES" "$WORK/gui.err"; then passed+=(about)
        else fail "about: the frozen app does not find its LICENSE or THIRD_PARTY_LICENSES"; fi
    else
        tail -n 20 "$WORK/gui.err"; fail "gui --smoke-test"
    fi
else
    say "SKIP gui (app/ui/shell/main.py or the detector not in this tree)"
fi

# resources: every shipped file of app/resources/ is in the bundle; the demo runs from them when present
if [ -d app/resources ]; then
    missing=$("$PY" - "$ROOT/dist/hayai-desktop/_internal" <<'EOF'
import sys
from pathlib import Path
sys.path.insert(0, "packaging")
import spec_data as sd
print(" ".join(src for src, _ in sd.resource_datas() if not (Path(sys.argv[1]) / src).is_file()))
EOF
)
    if [ -z "$missing" ]; then passed+=(resources); else fail "resources missing from the bundle: $missing"; fi
    if [ -n "$(find app/resources/demo -name config.json 2>/dev/null)" ] && [ -n "$(find app/resources/demo -name '*.pt' 2>/dev/null)" ]; then
        if timed "gui --demo --smoke-test (frozen)" frozen --demo --smoke-test 2>"$WORK/demo.err"; then
            passed+=(demo); grep -i "smoke test" "$WORK/demo.err" | sed 's/^/[smoke]   /' >&3
        else
            tail -n 20 "$WORK/demo.err"; fail "gui --demo --smoke-test"
        fi
    else
        say "SKIP demo (no demo models in app/resources/demo)"
    fi
fi

# nothing may have been written next to the bundle or into the working directory
if [ -n "$(ls -A "$WORK/cwd")" ]; then fail "the frozen app wrote into its working directory: $(ls "$WORK/cwd")"; fi

say "passed: ${passed[*]:-none}; failed: $failures"
[ "$failures" = 0 ]
