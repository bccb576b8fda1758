# Set-up is part of every target: a fresh clone needs only `make run` or `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PIP_QUIET := -q --disable-pip-version-check
export DO_NOT_TRACK := 1
export PREFECT_SERVER_ANALYTICS_ENABLED := false
export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS ?= 180
export PREFECT_HOME ?= $(CURDIR)/.prefect
export PYTHONWARNINGS ?= ignore::DeprecationWarning

.PHONY: run test test-slow lint bench clean setup

setup: $(STAMP)

# torch is installed first and pinned so no other requirement can pull a newer build.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install $(PIP_QUIET) "torch==2.13.0" 2>&1 | grep -v "is ignored: it is neither" || true
	$(BIN)/pip install $(PIP_QUIET) -e ".[test,bench,dashboard]" "torch==2.13.0" 2>&1 | grep -v "is ignored: it is neither" || true
	$(BIN)/python -c "import torch, prefect, zarr, numba, ot, gameforge.engines; assert torch.__version__.startswith('2.13.0'), torch.__version__"
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/gameforge run lhe-abstraction --preset small

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	@mkdir -p build/typecheck/gameforge
	@for part in engines stages artifacts flows games; do ln -sfn ../../../$$part build/typecheck/gameforge/$$part; done
	@for file in api/*.py api/py.typed; do ln -sfn ../../../$$file build/typecheck/gameforge/$${file#api/}; done
	$(BIN)/mypy -p gameforge

# Two processes, one test file each at a time: a file's module fixtures are built once, and
# numba kernels compile on both cores instead of one (tests/conftest.py keeps each process to
# one numba/OpenMP thread, so the two do not oversubscribe the cores).
TEST_WORKERS ?= 2

test: lint
	$(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist loadfile

test-slow: $(STAMP)
	$(BIN)/python -m pytest -q -m slow

bench: $(STAMP)
	$(BIN)/python bench/bench_evaluator.py
	$(BIN)/python bench/bench_isomorphism.py
	$(BIN)/python bench/bench_river_hs.py
	$(BIN)/python bench/bench_hsd.py

clean:
	rm -rf $(VENV) .prefect .pytest_cache .mypy_cache .ruff_cache
