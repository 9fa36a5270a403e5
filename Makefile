# finkg: the two set-up commands of the README, and a few helpers.
#   make demo   create .venv, install finkg, build and query the demo store
#   make test   create .venv, install finkg with test tools, run the suite against both
#               store backends (an Oxigraph server is started on a loopback port)

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.finkg-installed

.PHONY: demo test lint clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check "torch==2.13.0"
	$(BIN)/pip install --quiet --disable-pip-version-check -e ".[test]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/finkg demo

test: $(STAMP)
	scripts/with-oxigraph-server $(BIN)/python -m pytest

lint: $(STAMP)
	$(BIN)/ruff check finkg tests benchmarks

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
