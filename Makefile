# Two commands do everything (see README):  make test   |   make book
# Each creates .venv (and installs the pinned requirements with the package, in one pip command) if missing.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.fgpo-installed

.PHONY: setup test book bench clean-book

setup: $(STAMP)

$(STAMP): requirements.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --disable-pip-version-check -r requirements.txt -e .
	touch $(STAMP)

test: setup
	$(PY) -m pytest

book: setup
	$(PY) -m fgpo_lib.book --book-dir book

bench: setup
	$(PY) benchmarks/bench_env.py
	$(PY) benchmarks/bench_optim.py

clean-book:
	rm -rf book/_build book/_generated
