# Two commands on a fresh machine:  make run   |   make test
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# Two stamps: `make run` installs the app alone (`pip install -e .`, no developer tools);
# `make test` (and lint, bench, bundle, llama-server) installs `.[dev]`, which includes the app,
# so it marks both. Each reinstalls only when pyproject.toml is newer than its stamp: a run after
# a test installs nothing; a test after a run adds the dev extras only.
RUN_STAMP := $(VENV)/.installed
DEV_STAMP := $(VENV)/.installed-dev

.PHONY: run test lint bench bundle clean llama-server

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

$(RUN_STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q -e .
	touch $(RUN_STAMP)

$(DEV_STAMP): pyproject.toml | $(PY)
	$(PY) -m pip install -q -e '.[dev]'
	touch $(DEV_STAMP) $(RUN_STAMP)

run: $(RUN_STAMP)
	$(PY) -m app $(ARGS)

# The suite in parallel (pytest-xdist: one worker a CPU, at most 4), the 25 slowest tests listed.
TEST_WORKERS ?= auto
test: $(DEV_STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -n $(TEST_WORKERS) --maxprocesses 4 --durations 25 $(PYTEST_ARGS)

# For contributors: llama.cpp's llama-server and a small GGUF model, built once into a cache
# folder outside the repository (~/.cache/hayai-desktop-tests/llama); `make test` then runs the
# real-server tests (tests/test_llama_server.py) too. 10-15 minutes on 2 cores the first time.
llama-server: $(DEV_STAMP)
	$(PY) -m tools.llama_server

lint: $(DEV_STAMP)
	$(VENV)/bin/ruff check app tests bench tools
	$(VENV)/bin/lint-imports
	$(VENV)/bin/vulture
	$(VENV)/bin/pyright --pythonpath $(PY)

bench: $(DEV_STAMP)
	$(PY) bench/ocr_throughput.py

bundle: $(DEV_STAMP)
	bash packaging/smoke_test.sh

clean:
	rm -rf build dist
