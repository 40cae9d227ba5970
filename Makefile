# Two-command quick start: `make demo` (main job) and `make test` (whole suite).
# Both create .venv if absent and install what they need into it.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.bco_gym-installed
PYTEST_ARGS ?=

.PHONY: setup demo test lint format bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	# The CPU build of torch first: an unpinned install through stable-baselines3
	# would pull a multi-GB CUDA build.
	$(BIN)/python -m pip install --quiet torch==2.13.0
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

setup: $(STAMP)

# BBCG, FKM, BFW and random on BCO-Simplex-v0 (n=10, linear losses), T=100000, seeds 0..4:
# constants tuned on seeds 100..102 first, then compared with theory defaults and tuned
# ones. About three minutes on 2 cores; re-running resumes (finished cells are kept).
# Progress: a bar per command on a terminal, a line per finished run otherwise.
demo: $(STAMP)
	$(BIN)/bco-gym tune --env BCO-Simplex-v0 --agents bbcg,fkm,bfw --horizon 100000 \
		--tune-seeds 100:103 --grid 0.1:10 --points 9 --backend process \
		--out results/tuned_constants.json
	$(BIN)/bco-gym compare --env BCO-Simplex-v0 --agents bbcg,fkm,bfw,random --horizon 100000 \
		--seeds 0:5 --backend process --out results/theory
	$(BIN)/bco-gym compare --env BCO-Simplex-v0 --agents bbcg,fkm,bfw,random --horizon 100000 \
		--seeds 0:5 --backend process --out results/tuned \
		--tuned results/tuned_constants.json

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

format: $(STAMP)
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

test: lint
	OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $(BIN)/python -m pytest $(PYTEST_ARGS)

# Benchmarks 0-5 of issue 7 (peer FKM loop, loop overhead, fast path, projection-free
# payoff, memory at T=10^7, scaling in n): each ratio printed beside its target; JSON,
# summary.md and scaling.png in benchmarks/out/. About 10 minutes on 2 cores.
bench: $(STAMP)
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) results benchmarks/out .pytest_cache .ruff_cache
