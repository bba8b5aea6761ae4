"""Cross-build agreement: how well a committed LLM table's cells re-derive under another llama.cpp build.

llama.cpp's arithmetic follows the kernels it was compiled with. A table made by an AVX-512 build and re-derived by
the portable x86-64-v3 build (AVX2, FMA, F16C, BMI2: what ``make setup`` compiles on every x86-64 machine) can differ
where greedy decoding meets a near-tie. This module names a build (:func:`build_name`), measures a table's
agreement on a sample of its cells and extra cells (:func:`measure`, one JSON record per table under
``records/crossbuild/``), and turns the measured rate into the live test's rule (:func:`agreement_rule`):

at least ``k`` of ``n`` re-derived cells must agree, where ``k`` is the 1% quantile of ``Binomial(n, p_lo)`` and
``p_lo`` the lower end of the 95% Wilson interval of the measured rate: the table's own record where it was measured
in the same situation (on its own build, or on another), else every record of that situation pooled. A faithful
table then fails with probability at most about 1%; :func:`pass_probability` says how often a table corrupted in a
share of its cells would still pass.

**Not exact on the same build.** The issue asked for exact agreement on a table's own build. Measured, it is not: a
SmolLM2 table made by the portable build re-derives 97 of 100 cells under that very build. llama.cpp reuses the
longest cached prompt prefix, and a re-derivation of a few subsets of a question evaluates them after other
prompts than the precompute did, so the prompt is split into other batches and summed in another order; a
near-tie flips. So the same-build rule is also a measured threshold (from the same-build records).

Counts convention: ``agree`` of ``checked`` re-derived cells; rates in [0, 1].
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from pathlib import Path

import numpy as np
from scipy import stats

from .table import RewardTable

from .paths import CROSSBUILD_RECORDS as RECORDS  # noqa: E402
#: the rule's tolerated chance that a faithful table fails, and the interval of the measured rate
FALSE_ALARM = 0.01
CONFIDENCE = 0.95


def build_name(backend: dict | None) -> str:
    """The kernel set a table's cells were computed with, from a reasoner's ``backend()`` (a table's
    ``provenance.backend``): ``'avx512'``, ``'x86-64-v3'`` (the portable build), ``'other'``, or ``'none'``
    (no llama.cpp: a reader's cells are plain Python and agree on every build)."""
    info = (backend or {}).get("system_info")
    if not info:
        return "none"
    flags = dict(re.findall(r"(\w+) = (\d)", info))
    if flags.get("AVX512") == "1":
        return "avx512"
    if all(flags.get(f) == "1" for f in ("AVX2", "FMA", "F16C")) and not any(v == "1" for k, v in flags.items() if k.startswith(("AVX512", "AMX", "AVX_VNNI"))):
        return "x86-64-v3"
    return "other"


def wilson_interval(agree: int, checked: int, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The Wilson score interval ``(lo, hi)`` of a rate ``agree / checked``; ``(0, 1)`` for no trial."""
    if checked == 0:
        return 0.0, 1.0
    z = stats.norm.ppf(0.5 + confidence / 2)
    p = agree / checked
    centre = (p + z * z / (2 * checked)) / (1 + z * z / checked)
    half = z * np.sqrt(p * (1 - p) / checked + z * z / (4 * checked * checked)) / (1 + z * z / checked)
    return float(max(0.0, centre - half)), float(min(1.0, centre + half))


def file_sha256(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def measure(path: Path, cells: int = 100, extras: int = 20, seed: int = 1) -> dict:
    """Re-derive ``cells`` random cells and the extra cells of ``extras`` random questions of the table at ``path``
    with this machine's build, and return the record (module doc). ``seed`` differs from the live test's (0), so the
    test's cells are not the ones the rule was measured on."""
    from .verify import table_reasoner, verify_extras, verify_table

    table = RewardTable.load(path)
    reasoner = table_reasoner(table)
    t0 = time.perf_counter()
    res = verify_table(table, cells, seed, reasoner)
    extra = verify_extras(table, extras, seed, reasoner)
    return {
        "table": Path(path).stem,
        "table_sha256": file_sha256(path),
        "reasoner": table.provenance.get("reasoner"),
        "table_build": build_name(table.provenance.get("backend")),
        "table_backend": table.provenance.get("backend"),
        "live_build": build_name(reasoner.backend()),
        "live_backend": reasoner.backend(),
        "seed": seed,
        "cells": {"checked": res["checked"], "agree": res["agree"], "interval": wilson_interval(res["agree"], res["checked"]), "disagreements": res["disagreements"]},
        "extras": {"checked": extra["checked"], "agree": extra["agree"], "interval": wilson_interval(extra["agree"], extra["checked"]), "disagreements": extra["disagreements"]},
        "seconds": time.perf_counter() - t0,
    }


#: what every cross-build record holds (:func:`measure`); a file without them is not one
RECORD_FIELDS = {"table_sha256": str, "live_backend": dict, "table_build": str, "live_build": str, "cells": dict, "extras": dict}


def load_records(directory: Path = RECORDS) -> dict[str, dict]:
    """The records by table stem. A file that is not valid JSON, or lacks a field a record holds, is a ``ValueError``
    naming it (delete it, and ``fgpo cross-build`` measures that table again)."""
    out = {}
    for p in sorted(Path(directory).glob("*.json")):
        try:
            rec = json.loads(p.read_text())
        except (ValueError, UnicodeDecodeError) as exc:
            raise ValueError(f"{p}: not a cross-build record (not readable JSON: {exc}); delete it to measure the table again") from None
        missing = [k for k, kind in RECORD_FIELDS.items() if not isinstance(rec, dict) or not isinstance(rec.get(k), kind)]
        if not missing and not all(isinstance(rec[k].get(f), int) for k in ("cells", "extras") for f in ("agree", "checked")):
            missing = ["cells/extras agree, checked"]
        if missing:
            raise ValueError(f"{p}: not a complete cross-build record (missing or malformed: {', '.join(missing)}); delete it to measure the table again")
        out[p.stem] = rec
    return out


def measured_rate(records: dict[str, dict], table: str | None, kind: str, same_build: bool = False) -> tuple[int, int]:
    """``(agree, checked)`` of ``kind`` (``'cells'`` or ``'extras'``) re-derived on the table's own build
    (``same_build``) or on another: the table's own record if it was measured so, else every such record pooled
    (also where ``table`` is None)."""
    situation = [r for r in records.values() if (r["table_build"] == r["live_build"]) == same_build]
    own = records.get(table) if table is not None else None
    chosen = [own] if own is not None and (own["table_build"] == own["live_build"]) == same_build else situation
    return sum(r[kind]["agree"] for r in chosen), sum(r[kind]["checked"] for r in chosen)


def agreement_rule(n: int, agree: int, checked: int) -> int:
    """The fewest of ``n`` re-derived cells that must agree (module doc): the ``FALSE_ALARM`` quantile of
    ``Binomial(n, p_lo)``, with ``p_lo`` the lower Wilson bound of the measured ``agree / checked``. 0 means the
    check cannot fail at this ``n``: a caller must not present it as a check."""
    if n == 0:
        return 0
    if checked == 0:
        raise ValueError("no measurement to derive the rule from: run `fgpo cross-build` on the table first")
    p_lo = wilson_interval(agree, checked)[0]
    return int(stats.binom.ppf(FALSE_ALARM, n, p_lo))


def pass_probability(n: int, k: int, agree_rate: float, corrupt_share: float) -> float:
    """The chance that a table whose cells agree at ``agree_rate`` across builds, with a further ``corrupt_share``
    of its cells wrong (each disagreeing), still passes the rule "at least ``k`` of ``n`` agree"."""
    return float(stats.binom.sf(k - 1, n, agree_rate * (1 - corrupt_share)))


#: the negative controls: a wrong part swapped into a table's re-derivation (``model``, ``prompt``), or the table's
#: own cells corrupted (``corrupt``: a share :data:`CORRUPT_SHARE` of its rewards r replaced by 1 - r)
CONTROLS = ("model", "prompt", "corrupt")
CORRUPT_SHARE = 0.3
WRONG_SYSTEM_PROMPT = "You answer questions about genes. Reply with one short phrase."


def wrong_reasoner(table: RewardTable, kind: str):
    """The table's reasoner with one part wrong: ``'model'``, another built-in LLM (Gemma 3 for every table but
    Gemma's, which gets SmolLM2), or ``'prompt'``, the table's model with another system prompt
    (:data:`WRONG_SYSTEM_PROMPT`)."""
    from dataclasses import replace

    from .reasoners import make_reasoner
    from .verify import table_reasoner

    kwargs = table.provenance.get("reasoner_kwargs") or {}
    if kind == "model":
        return make_reasoner("smollm2-135m" if table.provenance["reasoner"] == "gemma3-270m" else "gemma3-270m", **kwargs)
    if kind == "prompt":
        reasoner = table_reasoner(table)
        reasoner.template = replace(reasoner.template, system=WRONG_SYSTEM_PROMPT)
        return reasoner
    raise ValueError(f"unknown negative control {kind!r}; use one of {', '.join(CONTROLS)}")


def corrupted(table: RewardTable, share: float = CORRUPT_SHARE, seed: int = 0) -> RewardTable:
    """A copy of ``table`` with a seeded ``share`` of its cells' rewards r replaced by ``hi + lo - r`` (1 - r on
    [0, 1]): what a table damaged after it was made looks like to the live check."""
    rng = np.random.default_rng(seed)
    bad = rng.random(table.rewards.shape) < share
    lo, hi = table.reward_range
    copy = table.select(np.arange(table.n_questions))
    copy.rewards = np.where(bad, hi + lo - table.rewards, table.rewards).astype(np.float32)
    return copy


def corrupted_agreement(table: RewardTable, live: dict) -> int:
    """How many live rewards ``{(row, subset index): reward}``, re-derived against ``table`` itself, agree with
    :func:`corrupted`'s copy of it: the corrupted-table control on cells already computed (the copy asks the same
    cells, so none is computed again)."""
    bad = corrupted(table).rewards
    return sum(abs(v - float(bad[row, s])) < 1e-6 for (row, s), v in live.items())


def control_rule(stem: str, n: int, records: dict) -> int:
    """The rule a negative control of ``n`` cells of the table ``stem`` is judged by: the cells' measured rate, as
    :func:`measured_rate` gives it on another build."""
    return agreement_rule(n, *measured_rate(records, stem, "cells"))


def negative_control(path: Path, kind: str, cells: int, seed: int = 0, records: dict | None = None) -> dict:
    """Re-derive ``cells`` cells of the table at ``path`` with a wrong part (:func:`wrong_reasoner`) or against a
    corrupted copy of it (:func:`corrupted`), and judge them by the live test's cross-build rule: ``{"table",
    "control", "checked", "agree", "rule_k", "passes"}``. A wrong model or prompt is refused before any cell by the
    fingerprint check of :func:`fgpo_lib.verify.verify_table`; these controls bypass it to show what cell agreement
    alone sees."""
    from .verify import rederive_cells, table_reasoner, table_spec

    table = RewardTable.load(path)
    if kind == "corrupt":
        res = rederive_cells(table, table_spec(table), table_reasoner(table), cells, seed)
        res["agree"] = corrupted_agreement(table, res["live"])
    else:
        res = rederive_cells(table, table_spec(table), wrong_reasoner(table, kind), cells, seed)
    records = load_records() if records is None else records
    k = control_rule(Path(path).stem, res["checked"], records)
    return {"table": Path(path).stem, "control": kind, "checked": res["checked"], "agree": res["agree"], "rule_k": k, "passes": res["agree"] >= k}


def rule_for(path: Path, table: RewardTable, n: int, kind: str, live_backend: dict, records: dict | None = None) -> int:
    """The live test's rule for ``n`` re-derived ``kind`` (``'cells'`` or ``'extras'``) of the table at ``path``, on
    ``live_backend``'s build: from the table's record if it was measured on this very file in the same situation (own
    build or another), else from every record of that situation pooled."""
    records = load_records() if records is None else records
    same = build_name(table.provenance.get("backend")) == build_name(live_backend)
    own = records.get(Path(path).stem)
    stem = Path(path).stem if own and own["table_sha256"] == file_sha256(path) else None
    return agreement_rule(n, *measured_rate(records, stem, kind, same))
