# Two-command quick start: `make demo` (main job) and `make test` (whole suite).
# Both create .venv if absent and install what they need into it.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.bco_gym-installed
PYTEST_ARGS ?=

.PHONY: setup demo test lint format bench docs chromium page-check screenshots clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# The CPU build of torch first: an unpinned install through stable-baselines3
	# would pull a multi-GB CUDA build.
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

setup: $(STAMP)

# The main job, about 5 minutes on two cores: the scenarios of bco_gym/reports/demo.py (the
# paper's claim on the 32x32 Birkhoff polytope, regret against CPU seconds with BBCG beside
# FKM; five scenarios where the methods differ; PPO as the RL baseline), every run in one
# resumable sweep on a pool of every core (results/runs/demo), then results/report.md and
# results/index.html (open it in a browser). A progress bar with an ETA over the whole job;
# re-running resumes. The full suites: bco-gym demo --suite standard-v1.
demo: $(STAMP)
	OMP_NUM_THREADS=1 $(BIN)/bco-gym demo --out results

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# The whole suite on every core (pytest-xdist); plain `pytest` runs it on one. Python's
# bytecode cache is written even where the environment sets PYTHONDONTWRITEBYTECODE:
# without it every xdist worker and every process the tests start (isolated agents, CLI
# runs, pool workers, the portable checks' children) compiles the package's sources and
# rewrites the test modules' asserts again.
test: lint
	PYTHONDONTWRITEBYTECODE= OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(BIN)/python -m pytest -n auto $(PYTEST_ARGS)

# Benchmarks 0-5 of issue 7 (peer FKM loop, loop overhead, fast path, projection-free
# payoff, memory at T=10^7, scaling in n): each ratio printed beside its target; JSON,
# summary.md and scaling.png in benchmarks/out/. About 10 minutes on 2 cores.
bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

# The Sphinx site into docs/_build/html, warnings as errors and every cross-reference
# checked (-n), then the doctests of the pages (env examples, docstrings). Pages for
# env ids, agents, loss families, examples and modules are generated from the code
# (docs/_ext/bco_pages.py); generation runs once per change of its inputs.
DOCS_FLAGS := -W --keep-going -n -q -d docs/_build/doctrees
docs: $(STAMP)
	OMP_NUM_THREADS=1 $(BIN)/sphinx-build -b html $(DOCS_FLAGS) docs docs/_build/html
	OMP_NUM_THREADS=1 $(BIN)/sphinx-build -b doctest $(DOCS_FLAGS) docs docs/_build/doctest

# docs/screenshots/: four pages of the built site as headless Chromium renders them
# (apt package chromium-headless-shell; 1280x1000, MathJax given 15 s of virtual time).
SHOTS := index:index.html bbcg:generated/agents/bbcg.html mathematics:mathematics.html \
	BCO-Portfolio-v0:generated/envs/BCO-Portfolio-v0.html
screenshots: docs chromium
	for shot in $(SHOTS); do \
	  chromium-headless-shell --headless --no-sandbox --disable-gpu --hide-scrollbars \
	    --window-size=1280,1000 --virtual-time-budget=15000 \
	    --screenshot=docs/screenshots/$${shot%%:*}.png "file://$(CURDIR)/docs/_build/html/$${shot#*:}"; \
	done

# Debian's headless Chromium (the page check and the screenshots), installed if absent.
chromium:
	command -v chromium-headless-shell >/dev/null || \
	  (apt-get update && apt-get install -y chromium-headless-shell)

# results/index.html as headless Chromium loads it: the page tests (no console error, every
# image loaded), then a screenshot of the demo's page in docs/screenshots/report.png (the
# demo is run first if results/index.html is absent).
page-check: $(STAMP) chromium
	OMP_NUM_THREADS=1 $(BIN)/python -m pytest -q tests/reports/test_page.py
	test -f results/index.html || $(MAKE) demo
	chromium-headless-shell --headless --no-sandbox --disable-gpu --hide-scrollbars \
	  --window-size=1280,1600 --virtual-time-budget=10000 \
	  --screenshot=docs/screenshots/report.png "file://$(CURDIR)/results/index.html"

clean:
	rm -rf $(VENV) results benchmarks/out .pytest_cache .ruff_cache docs/_build docs/generated
