# Two commands on a fresh machine:  make run   |   make test
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test lint bench bundle clean llama-server

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(PY) -m app $(ARGS)

# The suite in parallel (pytest-xdist: one worker a CPU, at most 4), the 25 slowest tests listed.
TEST_WORKERS ?= auto
test: $(STAMP)
	QT_QPA_PLATFORM=offscreen $(PY) -m pytest -n $(TEST_WORKERS) --maxprocesses 4 --durations 25 $(PYTEST_ARGS)

# For contributors: llama.cpp's llama-server and a small GGUF model, built once into a cache
# folder outside the repository (~/.cache/hayai-desktop-tests/llama); `make test` then runs the
# real-server tests (tests/test_llama_server.py) too. 10-15 minutes on 2 cores the first time.
llama-server: $(STAMP)
	$(PY) -m tools.llama_server

lint: $(STAMP)
	$(VENV)/bin/ruff check app tests bench tools
	$(VENV)/bin/lint-imports

bench: $(STAMP)
	$(PY) bench/ocr_throughput.py

bundle: $(STAMP)
	bash packaging/smoke_test.sh

clean:
	rm -rf build dist
