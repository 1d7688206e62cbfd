# One entry point for every job. Each target creates the virtual environment it needs.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test browser bench bench-quick lint typecheck serve clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)          ## the main job on the embedded default (SQLite, no server)
	$(BIN)/sabot demo
	$(BIN)/sabot audit verify

test: $(STAMP) browser  ## the whole test suite, with lint and types
	$(BIN)/ruff check .
	$(BIN)/mypy
	@# A run compiles the project and rewrites the asserts of hypothesis and the tests (~170 modules
	@# a worker) unless it may keep the bytecode, which the image forbids (PYTHONDONTWRITEBYTECODE):
	@# the unit suite keeps it under the venv, out of the tree.
	PYTHONDONTWRITEBYTECODE= PYTHONPYCACHEPREFIX=$(VENV)/pycache $(BIN)/python -m pytest -p no:cacheprovider -n 2 --max-worker-restart=0 --dist worksteal tests/unit   # pure: one process a core; an idle one takes the other's queued tests
	$(BIN)/python -m pytest -p no:cacheprovider -n 2 --max-worker-restart=0 --dist loadfile -m "not serial" --durations=30 tests/integration tests/e2e tests/bench   # isolated: tests/conftest.py; a worker that dies ends the run (xdist hangs replacing one under loadfile)
	$(BIN)/python -m pytest -p no:cacheprovider -m serial --durations=5 tests/integration tests/e2e tests/bench   # alone

browser:                ## Debian's chromium for the page tests (tests/e2e/test_page.py), if missing
	@if [ -x /usr/bin/chromium ]; then :; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	  echo "make browser: installing Debian's chromium for the page tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	else \
	  echo "make browser: /usr/bin/chromium is missing and cannot be installed here (needs root and apt-get): the browser tests skip (under CI=true they fail)"; \
	fi

bench: $(STAMP)         ## benchmarks: one table of measures, baselines of the same run, goals (.sabot/bench.json)
	$(BIN)/python -m pytest -p no:cacheprovider tests/bench -m bench

bench-quick: $(STAMP)   ## the same benchmarks on small sizes (.ci/run): they cannot break unnoticed
	SABOT_BENCH_QUICK=1 $(BIN)/python -m pytest -p no:cacheprovider tests/bench -m bench

lint: $(STAMP)
	$(BIN)/ruff check .

typecheck: $(STAMP)
	$(BIN)/mypy

serve: $(STAMP)
	$(BIN)/sabot serve

clean:
	rm -rf $(VENV) .sabot .mypy_cache .ruff_cache
