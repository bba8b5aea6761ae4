"""The cross-build rule's parts against hand-computed values: the build's name, the Wilson interval, the rule's
threshold and its power."""

import math
from pathlib import Path

from fgpo_lib.crossbuild import agreement_rule, build_name, measured_rate, pass_probability, wilson_interval

AVX512 = "CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | AVX512 = 1 | AVX512_VNNI = 1 | OPENMP = 1"
PORTABLE = "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1"


def test_build_names():
    assert build_name({"system_info": AVX512}) == "avx512"
    assert build_name({"system_info": PORTABLE}) == "x86-64-v3"
    assert build_name({"system_info": PORTABLE.replace("AVX2 = 1", "AVX2 = 0")}) == "other"
    assert build_name({}) == build_name(None) == "none"


def test_wilson_interval_by_hand():
    # 95 of 100, z = 1.959964: centre (0.95 + z^2/200) / (1 + z^2/100), half-width z sqrt(p q / n + z^2 / 4n^2) / (1 + z^2/n)
    z = 1.959964
    centre = (0.95 + z * z / 200) / (1 + z * z / 100)
    half = z * math.sqrt(0.95 * 0.05 / 100 + z * z / 40000) / (1 + z * z / 100)
    lo, hi = wilson_interval(95, 100)
    assert abs(lo - (centre - half)) < 1e-6 and abs(hi - (centre + half)) < 1e-6
    assert round(lo, 3) == 0.888 and round(hi, 3) == 0.978
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_rule_and_power_by_hand():
    # 100 of 100 measured: p_lo = z^2 / (n + z^2) complement = 100 / (100 + z^2) = 0.9630; the 1% quantile of
    # Binomial(2, 0.963): P(X <= 1) = 1 - 0.963^2 = 0.0726 > 0.01, P(X <= 0) = 0.00137 <= 0.01, so k = 1
    assert agreement_rule(2, 100, 100) == 1
    assert agreement_rule(0, 100, 100) == 0
    # a table agreeing at rate 1 with half its cells wrong passes "2 of 2" with probability 0.5^2
    assert abs(pass_probability(2, 2, 1.0, 0.5) - 0.25) < 1e-12


def test_measured_rate_picks_the_situation():
    rec = lambda tb, lb, a: {"table_build": tb, "live_build": lb, "cells": {"agree": a, "checked": 100}}  # noqa: E731
    records = {"t1": rec("avx512", "x86-64-v3", 90), "t2": rec("avx512", "x86-64-v3", 100), "t3": rec("x86-64-v3", "x86-64-v3", 97)}
    assert measured_rate(records, "t1", "cells") == (90, 100)  # its own record, across builds
    assert measured_rate(records, None, "cells") == (190, 200)  # pooled across builds
    assert measured_rate(records, "t1", "cells", same_build=True) == (97, 100)  # t1 never measured on its own build
    assert measured_rate(records, "t3", "cells", same_build=True) == (97, 100)


def _make_args(build: str) -> str:
    import subprocess

    root = Path(__file__).resolve().parents[1]
    return subprocess.run(["make", "-s", "-C", str(root), "print-llama-args", f"LLAMA_BUILD={build}"], capture_output=True, text=True, check=True).stdout.strip()


def test_the_setup_check_tells_a_cached_wheel_of_the_other_build_from_the_asked_one():
    """``make setup`` re-compiles llama-cpp-python when pip's cache handed it a wheel built with other flags: the check
    (fgpo_lib.llama_build) on the Makefile's own two builds against llama.cpp's system-info strings of each."""
    from fgpo_lib.llama_build import flag_mismatches, main

    portable_info = "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | LLAMAFILE = 1 | OPENMP = 1 | REPACK = 1 | "
    avx512_info = portable_info.replace("BMI2 = 1 |", "BMI2 = 1 | AVX512 = 1 | AVX512_VBMI = 1 | AVX512_VNNI = 1 | AVX512_BF16 = 1 |")
    portable, avx512 = _make_args("portable"), _make_args("avx512")
    assert flag_mismatches(portable, portable_info) == [] and flag_mismatches(avx512, avx512_info) == []
    assert flag_mismatches(avx512, portable_info) == [f"GGML_{f}=ON, but the build lacks {f}" for f in ("AVX512", "AVX512_VBMI", "AVX512_VNNI", "AVX512_BF16")]
    assert flag_mismatches(portable, avx512_info)[0] == "GGML_AVX512=OFF, but the build has AVX512"
    assert flag_mismatches("-DGGML_NATIVE=ON", portable_info) == []  # a native build is whatever it found
    assert main([]) == 2
