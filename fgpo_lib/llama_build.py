"""Does the installed llama.cpp carry the kernels its build flags ask for?

pip keys its wheel cache on the package and version, not on ``CMAKE_ARGS``: on a machine whose cache holds a
``llama-cpp-python`` wheel built one way (say the portable x86-64-v3 build), ``make setup LLAMA_BUILD=avx512`` would
silently reinstall that wheel, and every table computed afterwards would record the portable build while its user
believed otherwise. ``make setup`` runs::

    python -m fgpo_lib.llama_build "$(LLAMA_CMAKE_ARGS)"

after installing, and compiles the package again without the cache when it exits 1.

The check reads each ``-DGGML_<FEATURE>=ON|OFF`` of the flags against llama.cpp's own ``llama_print_system_info()``
(``"... AVX2 = 1 | F16C = 1 ..."``): ``ON`` must show ``<FEATURE> = 1``, ``OFF`` must not. Flags that are not kernel
features (``GGML_NATIVE``, ``LLAVA_BUILD``) are not checked, so a ``GGML_NATIVE=ON`` build passes on whatever it found.
"""

from __future__ import annotations

import re
import sys

#: GGML options that are build switches, not instruction-set features shown by llama_print_system_info()
NOT_FEATURES = ("NATIVE", "CUDA", "METAL", "VULKAN", "OPENMP", "LLAMAFILE", "BLAS", "CCACHE")


def flag_mismatches(cmake_args: str, system_info: str) -> list[str]:
    """The kernel features whose ``-DGGML_<FEATURE>=ON|OFF`` in ``cmake_args`` the build's ``system_info`` contradicts,
    one line each (module doc); ``[]`` when the build is what the flags asked for."""
    shown = {k: v == "1" for k, v in re.findall(r"(\w+) = (\d)", system_info)}
    out = []
    for feature, value in re.findall(r"-DGGML_(\w+)=(\w+)", cmake_args):
        if feature in NOT_FEATURES:
            continue
        want = value.upper() in ("ON", "1", "TRUE", "YES")
        if shown.get(feature, False) != want:
            out.append(f"GGML_{feature}={value}, but the build {'lacks' if want else 'has'} {feature}")
    return out


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print('usage: python -m fgpo_lib.llama_build "<the CMAKE_ARGS llama-cpp-python was built with>"', file=sys.stderr)
        return 2
    try:
        import llama_cpp
    except ImportError as e:
        print(f"llama-cpp-python is not installed here: {e}", file=sys.stderr)
        return 1
    info = llama_cpp.llama_print_system_info().decode()
    bad = flag_mismatches(args[0], info)
    if bad:
        print("the installed llama-cpp-python was built with other flags (pip's wheel cache ignores CMAKE_ARGS):\n  "
              + "\n  ".join(bad), file=sys.stderr)
        return 1
    print(f"llama.cpp build matches its flags: {info.strip(' |')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
