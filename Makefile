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

.PHONY: render test check bench vendor golden fixture-golden diff lint clean ray-generators \
  engine engine-test helm-cli kuberay kuberay-test argocd-harness

# krc's native engine (engine/: Helm's SDK at Argo CD 3.5.1's Helm, one Go module pinned by go.mod/go.sum), rebuilt
# when its sources change; krc renders every chart through it. What the first build costs: engine/README.md.
ENGINE := engine/bin/krc-engine
ENGINE_SOURCES := $(wildcard engine/*.go) engine/go.mod engine/go.sum

engine: $(ENGINE)

$(ENGINE): $(ENGINE_SOURCES)
	cd engine && CGO_ENABLED=0 go build -trimpath -o bin/krc-engine .

# The real helm command built from the engine's module (the Helm the engine embeds, stamped with its release
# version): what the benchmarks run Kapitan and the floor with.
HELM_CLI := engine/bin/helm
helm-cli: $(HELM_CLI)

$(HELM_CLI): engine/go.mod engine/go.sum
	cd engine && CGO_ENABLED=0 go build -trimpath -o bin/helm \
	  -ldflags "-X helm.sh/helm/v4/internal/version.version=$$(go list -m -f '{{.Version}}' helm.sh/helm/v4)" \
	  helm.sh/helm/v4/cmd/helm

# The engine's own tests (its render against the real helm CLI built from the same module, byte for byte) and
# the versions its module resolves to; go test builds what it tests, so not the binary.
engine-test:
	engine/check_versions.sh
	cd engine && go test -count=1 ./...

# KubeRay's own validators and Pod builders, one small Go module per KubeRay version (engine/kuberay/vX.Y.Z/, each
# with its own go.mod: one module cannot hold two versions of KubeRay), each built when its sources change.
KUBERAY_VERSIONS := $(patsubst engine/kuberay/v%/go.mod,%,$(wildcard engine/kuberay/v*/go.mod))
KUBERAY_GLUE := $(wildcard engine/kuberay/glue/*.go) engine/kuberay/glue/go.mod
define KUBERAY_BUILD
engine/kuberay/bin/krc-kuberay-v$(1): $(wildcard engine/kuberay/v$(1)/*.go) engine/kuberay/v$(1)/go.mod engine/kuberay/v$(1)/go.sum $(KUBERAY_GLUE)
	cd engine/kuberay/v$(1) && CGO_ENABLED=0 go build -trimpath -o ../bin/krc-kuberay-v$(1) .
endef
$(foreach v,$(KUBERAY_VERSIONS),$(eval $(call KUBERAY_BUILD,$(v))))
KUBERAY := $(foreach v,$(KUBERAY_VERSIONS),engine/kuberay/bin/krc-kuberay-v$(v))
kuberay: $(KUBERAY)

# Argo CD's own code (v3.5.1) running krc's plugin: its cmp server with deploy/argocd/plugin.yaml, the repo-server's
# manifest generation, the ApplicationSet generators, the health checks, gitops-engine's sync order
# (tests/argocd/harness/README.md). Go's build cache keeps the build between runs; the first one costs minutes.
argocd-harness: $(VENV)/.installed $(ENGINE) $(KUBERAY)
	tests/argocd/harness/run.sh test -count=1

kuberay-test:
	@for d in glue $(addprefix v,$(KUBERAY_VERSIONS)); do echo "go test engine/kuberay/$$d"; \
	  (cd engine/kuberay/$$d && go test -count=1 ./...) || exit 1; done

$(VENV)/.installed: pyproject.toml
	@echo "installing krc and its dependencies into $(VENV) (first run: about 30 s)"
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -e '.[test,bench]'
	touch $@

vendor: $(VENV)/.installed
	$(KRC) vendor

# Ray's KubeRay autoscaling-config generator, one isolated virtual environment per Ray version the environments
# name (`krc autoscaler --ray-versions`), outside krc's own: krc runs its Python, never imports Ray. About 80 MB of
# wheels per version, installed once.
RAY_ENVS := .venv-ray

ray-generators: $(RAY_ENVS)/.versions
	@for v in $$(cat $(RAY_ENVS)/.versions); do $(MAKE) --no-print-directory $(RAY_ENVS)/$$v/.installed || exit 1; done

# The Ray versions the environments name, asked of krc again only when an environment file (or krc) changed: every
# `make render` and `make test` checks the generators, and a krc process to ask costs 0.4 s before anything runs.
$(RAY_ENVS)/.versions: $(VENV)/.installed $(wildcard environments/*)
	@mkdir -p $(RAY_ENVS) && $(KRC) autoscaler --ray-versions > $@.new && mv $@.new $@

$(RAY_ENVS)/%/.installed:
	rm -rf $(RAY_ENVS)/$*
	$(PYTHON) -m venv $(RAY_ENVS)/$*
	$(RAY_ENVS)/$*/bin/pip install --quiet --disable-pip-version-check 'ray==$*'
	touch $@

# The engine (engine/) renders the charts and runs the policies (CUE v0.17.1 inside it).
render: vendor ray-generators $(ENGINE)
	$(KRC) render
	$(KRC) check

golden: vendor $(ENGINE)
	$(KRC) golden

# The tests' own project (tests/fixtures/project: its environments and golden/) after a template change: render it
# with this checkout's templates in a scratch folder and take its golden/ back. The shipped golden/ is `make golden`.
FIXTURE := tests/fixtures/project
fixture-golden: vendor $(ENGINE)
	@scratch=$$(mktemp -d) && trap 'rm -rf "$$scratch"' EXIT && \
	cp -r $(FIXTURE)/environments $(FIXTURE)/golden templates vendor "$$scratch"/ && \
	$(KRC) --project "$$scratch" golden && \
	rm -rf $(FIXTURE)/golden && cp -r "$$scratch"/golden $(FIXTURE)/golden

diff: vendor $(ENGINE) ray-generators
	$(KRC) diff

lint: vendor $(ENGINE) ray-generators
	$(KRC) lint

# Two workers: the suite is mostly CPU-bound (Jsonnet, schema validation, CUE) and machines here have two cores.
# Its scratch files (thousands of project copies, the run's krc cache) go to one folder, removed afterwards: on
# tmpfs (/dev/shm) when that has 2 GB free, where making and deleting them costs a fraction of a disk's time.
TEST_SCRATCH_PARENT = $(shell free=$$(df --output=avail -k /dev/shm 2>/dev/null | tail -n 1); \
  if [ -w /dev/shm ] && [ "$${free:-0}" -gt 2000000 ] 2>/dev/null; then echo /dev/shm; else echo "$${TMPDIR:-/tmp}"; fi)

# Mermaid for the review's diagram test (tests/review/test_review_html.py), pinned by its lockfile
MERMAID := tests/review/mermaid/node_modules/.package-lock.json
$(MERMAID): tests/review/mermaid/package-lock.json
	npm ci --prefix tests/review/mermaid --no-audit --no-fund --loglevel=error

# Bytecode is written even where PYTHONDONTWRITEBYTECODE is set: every krc process a test starts imports krc (from
# source, without it: 2 s instead of 0.6 s), and each worker rewrites the test modules' asserts (3 s) otherwise.
# --maxschedchunk 2: tests are handed out two at a time as workers free up, in collection order, which puts the
# slowest first (tests/conftest.py), so neither worker is left with a long test at the end.
test: $(VENV)/.installed $(ENGINE) $(KUBERAY) ray-generators engine-test kuberay-test argocd-harness $(MERMAID)
	@[ -x /usr/bin/chromium ] || { echo "make test: the HTML review's tests open the page in Debian's Chromium," \
	  "not found at /usr/bin/chromium: install it (apt-get install chromium), then run make test again" >&2; exit 2; }
	@scratch=$$(mktemp -d -p "$(TEST_SCRATCH_PARENT)" krc-test-XXXXXX) && trap 'rm -rf "$$scratch"' EXIT && \
	echo "$(VENV)/bin/pytest -q -n 2 --maxschedchunk 2 (scratch files in $$scratch)" && \
	TMPDIR="$$scratch" PYTHONDONTWRITEBYTECODE= $(VENV)/bin/pytest -q -n 2 --maxschedchunk 2 --basetemp="$$scratch/pytest"

# Guard rails: style and bugs (ruff; the CI scripts too), types (mypy --strict), and the import layers (import-linter,
# pyproject.toml).
check: $(VENV)/.installed
	$(VENV)/bin/ruff check compiler tests bench .github/scripts
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports --no-cache
	cd engine && go mod tidy -diff && go vet ./...
	@for d in glue $(addprefix v,$(KUBERAY_VERSIONS)); do \
	  (cd engine/kuberay/$$d && go mod tidy -diff && go vet ./...) || exit 1; done
	cd tests/argocd/harness && go mod tidy -diff && ./run.sh vet

# bench_scale.py builds synthetic projects of 1, 10 and 100 environments (500 with BENCH_SCALE_FLAGS=--large)
# and installs Kapitan into its own virtual environment under ~/.cache/krc-bench (KRC_BENCH_CACHE).
BENCH_SCALE_FLAGS ?=
# Each benchmark's output also goes to docs/figures/<name>.txt (written whole once it finished): the figures the
# docs point to come from here, never typed by hand. bench_pods asks KubeRay's builds, so they are made first.
# krc is measured as pip installs it, its bytecode compiled once (under PYTHONDONTWRITEBYTECODE, which CI machines
# and containers often set, a checkout would compile every module again in every process).
bench: vendor ray-generators $(ENGINE) $(HELM_CLI) $(KUBERAY)
	$(VENV)/bin/python -m compileall -q compiler
	@mkdir -p docs/figures; for b in bench/bench_*.py; do echo "== $$b"; name=$$(basename $$b .py); \
	  flags=; if [ "$$b" = bench/bench_scale.py ]; then flags="$(BENCH_SCALE_FLAGS)"; fi; \
	  $(VENV)/bin/python $$b $$flags | tee docs/figures/.$$name.new && [ $${PIPESTATUS[0]} -eq 0 ] \
	    && mv docs/figures/.$$name.new docs/figures/$$name.txt || { rm -f docs/figures/.$$name.new; exit 1; }; done

clean:
	rm -rf rendered $(VENV) $(RAY_ENVS) vendor/charts engine/bin engine/kuberay/bin
