# gradgen: `make demo` installs, regenerates and runs the example; `make test` tests.
# Everything runs in a local virtual environment (.venv) that these targets create.

PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
# The generator runs as the top-level package `codegen` (from this directory), so it
# never imports the gradgen package it is about to regenerate.
CODEGEN := $(PY) -m codegen --native-functions native_functions.yaml --derivatives derivatives.yaml --out generated

.PHONY: all install generate check-generated coverage test golden demo bench bench-quick bench-memory clean

all: generate

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

install: $(VENV)/.installed

generate: install
	$(CODEGEN)

check-generated: install
	$(CODEGEN) --check

# How much of PyTorch's derivatives.yaml gradgen has, and how much of it the generator
# reads pasted verbatim (PyTorch's file comes from torchgen; without torch, it says so).
coverage: install
	$(PY) -m codegen.coverage --array-forms

test: install
	$(PY) -m pytest -q

# Record PyTorch's answers to the comparison tests into tests/golden/ (one JSON file per
# test module), which `make test` uses where torch is not installed. Needs torch.
golden: install
	@$(PY) -c "import torch" 2>/dev/null || { echo "make golden needs torch: $(PY) -m pip install torch"; exit 1; }
	find tests/golden -name "*.json" -delete
	GRADGEN_RECORD_GOLDEN=1 $(PY) -m pytest -q -p no:cacheprovider

demo: generate
	$(PY) -m gradgen.demo

# Benchmarks against numpy and the peers installed (torch, autograd, mygrad, micrograd);
# the full table goes to bench/results.md.
bench: install
	$(PY) bench/run.py
	$(PY) bench/memory.py

# A quick run (CI runs it so the benchmarks cannot rot).
bench-quick: install
	$(PY) bench/run.py --quick
	$(PY) bench/memory.py --steps 1000

bench-memory: install
	$(PY) bench/memory.py

clean:
	rm -rf $(VENV) .pytest_cache
