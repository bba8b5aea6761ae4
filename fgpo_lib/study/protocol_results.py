"""The protocol's results: saved per setting, loaded for the book, and every cross-setting table of its chapter.

Files: ``results/<benchmark>__<reasoner>/protocol.json`` holds, per library (``"4 tools"``, ``"8 tools"``), the path
of its table (relative to the file), its question ids and tasks, and every arm's
:class:`~fgpo_lib.study.protocol.ArmResult`.

Loaded, a study is ``{library: {setting title: {arm: ArmResult}}}`` plus ``{(library, title): SettingMeta}``.
Array convention (as :mod:`fgpo_lib.stats`): an arm's ``scores``, ``sizes``, ``subsets`` are
``(n_seeds, n_questions)`` in its table's row order; scores are reported in points (x 100).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from ..stats import bootstrap_ci, holm, mcnemar, min_detectable_difference, paired_difference_ci
from ..table import RewardTable
from .protocol import FGPO_ARM, GRPO_PAPER, SFT_ARM
from .protocol import ARMS, DEAD_GROUP_G, LR_GRID, ArmResult


@dataclass
class SettingMeta:
    """One (setting, library): ``table`` the path of its reward table, ``benchmark``, ``reasoner``, and the table's
    ``content_hash`` when the setting ran."""

    benchmark: str
    reasoner: str
    library: str
    table: Path
    content_hash: str = ""

    def load_table(self) -> RewardTable:
        """The table, read and checked against ``content_hash`` once; every analysis of the chapter shares it."""
        return self._loaded

    @cached_property
    def _loaded(self) -> RewardTable:
        t = RewardTable.load(self.table)
        if self.content_hash and t.content_hash() != self.content_hash:
            raise ValueError(f"{self.table} changed after its setting ran ({self.reasoner} on {self.benchmark}, {self.library}); run the study again")
        return t


def save_protocol(results: dict, table_paths: dict, out: Path, benchmark: str, reasoner: str) -> None:
    """``results: {library: {arm: ArmResult}}`` (``run_protocol`` over a setting's libraries) -> ``out``;
    ``table_paths: {library: path}`` as the notebook sees them (relative to its working folder)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    doc = {"benchmark": benchmark, "reasoner": reasoner, "lr_grid": list(LR_GRID), "libraries": {}}
    for library, arms in results.items():
        doc["libraries"][library] = {
            "table": os.path.relpath(Path(table_paths[library]).resolve(), out.parent.resolve()),
            "content_hash": RewardTable.load(table_paths[library]).content_hash(),
            "arms": {name: res.to_json() for name, res in arms.items()},
        }
    out.write_text(json.dumps(doc))


def load_protocol(study_dir: Path) -> tuple[dict, dict]:
    """Every ``results/*/protocol.json`` under ``study_dir`` -> ``(results, meta)`` (module doc), settings in the
    order of the study's registries."""
    from .runner import SETTINGS, setting_name, setting_title

    results: dict = {}
    meta: dict = {}
    for benchmark, reasoner in SETTINGS:
        f = Path(study_dir) / "results" / setting_name(benchmark, reasoner) / "protocol.json"
        if not f.exists():
            continue
        doc = json.loads(f.read_text())
        title = setting_title(benchmark, reasoner)
        for library, d in doc["libraries"].items():
            results.setdefault(library, {})[title] = {name: ArmResult.from_json(a) for name, a in d["arms"].items()}
            meta[(library, title)] = SettingMeta(benchmark, reasoner, library, (f.parent / d["table"]).resolve(), d.get("content_hash", ""))
    return results, meta


def _ci_text(scores: np.ndarray) -> str:
    m, lo, hi = bootstrap_ci(scores)
    return f"{100 * m:.1f} [{100 * lo:.1f}, {100 * hi:.1f}]"


def arm_summary(arms: dict) -> pd.DataFrame:
    """One setting's arms: group, test score at the dev-selected checkpoint (95% CI), at the final checkpoint, tools
    per question, reasoner calls per training fold, and the learning rates dev chose (count per rate)."""
    rows = []
    for name, r in arms.items():
        if r.pending:
            rows.append({"arm": name, "group": ARMS[name].group, "dev-selected": "pending", "final": np.nan, "tools/q": np.nan, "calls": np.nan, "learning rates": r.pending})
            continue
        lrs = ", ".join(f"{lr:g} x{r.lrs.count(lr)}" for lr in sorted(set(r.lrs)))
        rows.append({"arm": name, "group": ARMS[name].group, "dev-selected": _ci_text(r.scores), "final": 100 * float(np.nanmean(r.final)),
                     "tools/q": float(np.nanmean(r.sizes)), "calls": float(r.calls.mean()), "learning rates": lrs or "-"})
    return pd.DataFrame(rows)


def main_table(results: dict) -> pd.DataFrame:
    """Settings x arms (``results: {setting: {arm: ArmResult}}``): mean test score in points with its 95% bootstrap
    CI over seeds and questions, as the paper's Table 2 is laid out. Columns: ``setting``, ``questions``, then one
    ``"mean [lo, hi]"`` column per arm ("pending" where the arm has no result)."""
    rows = []
    for setting, arms in results.items():
        row = {"setting": setting}
        for name, res in arms.items():
            row["questions"] = res.scores.shape[1]
            row[name] = "pending" if res.pending else _ci_text(res.scores)
        rows.append(row)
    return pd.DataFrame(rows)


def paired_comparison(results: dict, a: str, b: str) -> pd.DataFrame:
    """``a`` against ``b`` in every setting: the mean paired difference in points with its CI, McNemar's p on
    full-credit answers (score 1; per question, correct under the majority of seeds), Holm's adjustment across
    settings, the minimum detectable difference at 80% power, and tools per question of both."""
    rows = []
    for setting, arms in results.items():
        if a not in arms or b not in arms or arms[a].pending or arms[b].pending:
            continue
        ra, rb = arms[a], arms[b]
        diff, lo, hi = paired_difference_ci(ra.scores, rb.scores)
        test = mcnemar((ra.scores == 1).mean(0) > 0.5, (rb.scores == 1).mean(0) > 0.5)
        rows.append({
            "setting": setting, "questions": ra.scores.shape[1], f"{a} - {b}": 100 * diff, "lo": 100 * lo, "hi": 100 * hi,
            "a only": test["b10"], "b only": test["b01"], "McNemar p": test["p"],
            "MDD (80%)": 100 * min_detectable_difference(ra.scores.mean(0) - rb.scores.mean(0)),
            f"tools/q {a}": float(ra.sizes.mean()), f"tools/q {b}": float(rb.sizes.mean()),
        })
    df = pd.DataFrame(rows)
    if len(df):
        df.insert(df.columns.get_loc("McNemar p") + 1, "Holm p", holm(df["McNemar p"].to_numpy()))
    return df


def checkpoint_table(results: dict) -> pd.DataFrame:
    """Per trained arm, over settings: mean test score (points) at the dev-selected and at the final checkpoint."""
    rows = [{"arm": name, "setting": s, "dev-selected": 100 * np.nanmean(r.scores), "final": 100 * np.nanmean(r.final)}
            for s, arms in results.items() for name, r in arms.items() if ARMS[name].config is not None and not r.pending]
    df = pd.DataFrame(rows)
    return df.groupby("arm", sort=False)[["dev-selected", "final"]].mean().reset_index() if len(df) else df


DEAD_GROUP_POLICIES = {  # label -> (arm, checkpoint) of the dead-group analysis
    "uniform": ("Random", "selected"),
    "SFT": ("SFT", "selected"),
    f"{GRPO_PAPER}, converged": (GRPO_PAPER, "final"),
    f"{GRPO_PAPER}, dev-selected": (GRPO_PAPER, "selected"),
    "FGPO": ("FGPO", "selected"),
}


def dead_group_frame(results: dict) -> pd.DataFrame:
    """Long frame ``setting, policy, G, dead_group_rate`` (a share, 0-1) for the policies of
    :data:`DEAD_GROUP_POLICIES`, closed form over Eq. 1's reward classes."""
    rows = []
    for s, arms in results.items():
        for label, (arm, ckpt) in DEAD_GROUP_POLICIES.items():
            if arm in arms and not arms[arm].pending and ckpt in arms[arm].dead:
                rows += [{"setting": s, "policy": label, "G": g, "dead_group_rate": float(v)} for g, v in zip(DEAD_GROUP_G, arms[arm].dead[ckpt])]
    return pd.DataFrame(rows)


def parsimony_table(results: dict, with_lam: str = "FGPO", without: str = "FGPO (lambda 0)") -> pd.DataFrame:
    """The parsimony ablation per setting: score (points) and tools per question with lambda = 0.1 and 0, and the
    paired difference with its CI."""
    rows = []
    for s, arms in results.items():
        if with_lam not in arms or without not in arms:
            continue
        a, b = arms[with_lam], arms[without]
        d, lo, hi = paired_difference_ci(a.scores, b.scores)
        rows.append({"setting": s, "score (lambda 0.1)": 100 * a.scores.mean(), "score (lambda 0)": 100 * b.scores.mean(), "difference": 100 * d, "lo": 100 * lo, "hi": 100 * hi,
                     "tools/q (lambda 0.1)": a.sizes.mean(), "tools/q (lambda 0)": b.sizes.mean()})
    return pd.DataFrame(rows)


def transfer_frame(results: dict, meta: dict, library: str, arm: str = "FGPO") -> pd.DataFrame:
    """Transfer across reasoners: ``arm``'s subset choices, trained on one reasoner's table (cross-fitted: each
    question chosen by a policy that never trained on it), scored by another reasoner's table of the same benchmark
    and library, on the questions both tables hold. Columns ``benchmark, trained on, evaluated on, questions,
    transfer`` (points), ``own`` (the evaluated reasoner's own policy on those questions) and ``loss = own - transfer``."""
    loaded = {key: m.load_table() for key, m in meta.items() if key[0] == library}
    rows = []
    for (lib_a, a), ma in meta.items():
        for (lib_b, b), mb in meta.items():
            if lib_a != library or lib_b != library or ma.benchmark != mb.benchmark:
                continue
            ra, rb = results[library][a].get(arm), results[library][b].get(arm)
            ta, tb = loaded[(library, a)], loaded[(library, b)]
            if ra is None or rb is None or ra.pending or rb.pending or ta.tool_names != tb.tool_names or ta.n_subsets != tb.n_subsets:
                continue
            row_b = {q: i for i, q in enumerate(tb.question_ids)}
            common = [(i, row_b[q]) for i, q in enumerate(ta.question_ids) if q in row_b]
            if not common:
                continue
            ia, ib = np.array(common).T
            chosen = ra.subsets[:, ia]  # (n_seeds, n_common), A's choices
            transfer = tb.rewards[ib[None, :], chosen].mean()
            own = rb.scores[:, ib].mean()
            rows.append({"benchmark": ma.benchmark, "trained on": ma.reasoner, "evaluated on": mb.reasoner, "questions": len(common), "transfer": 100 * transfer, "own": 100 * own, "loss": 100 * (own - transfer)})
    return pd.DataFrame(rows)


def tool_call_rates(results: dict, meta: dict, library: str, arms=(FGPO_ARM, GRPO_PAPER)) -> pd.DataFrame:
    """Each tool's call rate per task: long frame ``benchmark, arm, task, tool, rate`` (share of (seed, question)
    whose called subset holds the tool), pooled over the library's settings of each benchmark."""
    rows = []
    for (lib, title), m in meta.items():
        if lib != library:
            continue
        table = m.load_table()
        for arm in arms:
            r = results[library][title].get(arm)
            if r is None or r.pending or (r.subsets < 0).any():
                continue
            masks = np.asarray(table.space.masks)[r.subsets]  # (n_seeds, n_questions, n_tools)
            tasks = np.asarray(table.tasks if table.tasks is not None else [""] * table.n_questions)
            for task in np.unique(tasks):
                rate = masks[:, tasks == task].reshape(-1, table.space.n_tools).mean(0)
                rows += [{"benchmark": m.benchmark, "arm": arm, "task": task, "tool": t, "rate": float(v), "n": int((tasks == task).sum())} for t, v in zip(table.tool_names, rate)]
    df = pd.DataFrame(rows)
    if not len(df):
        return df
    # pool settings: weight by questions
    df["w"] = df["rate"] * df["n"]
    g = df.groupby(["benchmark", "arm", "task", "tool"], sort=False)[["w", "n"]].sum()
    return (g["w"] / g["n"]).rename("rate").reset_index()


def top_subsets(results: dict, meta: dict, library: str, arms=(FGPO_ARM, GRPO_PAPER, SFT_ARM), top: int = 3) -> pd.DataFrame:
    """The subsets each arm calls most, pooled over the library's settings of each benchmark: ``benchmark, arm,
    rank, subset, share`` (of (seed, question) pairs)."""
    counts: dict = {}
    for (lib, title), m in meta.items():
        if lib != library:
            continue
        space = m.load_table().space
        for arm in arms:
            r = results[library][title].get(arm)
            if r is None or r.pending:
                continue
            c = counts.setdefault((m.benchmark, arm), {})
            for s in r.subsets.ravel():
                label = "+".join(space.names_of(int(s))) or "(no tool)" if s >= 0 else "(outside the table)"
                c[label] = c.get(label, 0) + 1
    rows = []
    for (b, arm), c in counts.items():
        total = sum(c.values())
        for rank, (label, n) in enumerate(sorted(c.items(), key=lambda kv: -kv[1])[:top], 1):
            rows.append({"benchmark": b, "arm": arm, "rank": rank, "subset": label, "share": n / total})
    return pd.DataFrame(rows)


def input_tokens_table(results: dict, meta: dict, library: str, arms=(FGPO_ARM, GRPO_PAPER, SFT_ARM, "Tools w/ Desc", "Random", "Oracle")) -> pd.DataFrame:
    """Tools per question and tool-output tokens per question (SmolLM2 tokenizer,
    :mod:`fgpo_lib.genomics.prompt_tokens`) of each arm's called subsets, against All-Tools (every tool of the library
    on every question), pooled over the library's settings: ``arm, tools/q, tokens/q, tokens vs All-Tools``."""
    from ..genomics.prompt_tokens import ToolOutputTokens

    counters: dict = {}
    rows = []
    for (lib, title), m in meta.items():
        if lib != library:
            continue
        table = m.load_table()
        counter = counters.setdefault(m.benchmark, ToolOutputTokens(m.benchmark))
        every = np.array([counter.count(q, table.tool_names) for q in table.question_ids], np.float64)
        for arm in arms:
            r = results[library][title].get(arm)
            if r is None or r.pending:
                continue
            tokens = np.array([[counter.count(q, table.space.names_of(int(s)) if s >= 0 else table.tool_names) for q, s in zip(table.question_ids, seed_row)] for seed_row in r.subsets])
            rows.append({"setting": title, "arm": arm, "tools/q": float(np.nanmean(r.sizes)), "tokens/q": float(tokens.mean()), "All-Tools tokens/q": float(every.mean())})
    df = pd.DataFrame(rows)
    if not len(df):
        return df
    out = df.groupby("arm", sort=False)[["tools/q", "tokens/q", "All-Tools tokens/q"]].mean().reset_index()
    out["tokens vs All-Tools"] = out["tokens/q"] / out["All-Tools tokens/q"]
    return out


def reasoner_strength_frame(results: dict, meta: dict, library: str) -> pd.DataFrame:
    """Per setting of ``library``: the reasoner's size (millions of parameters, from the registry; none for a reader),
    oracle headroom (mean per-question best score minus the best single fixed subset's mean, points), the share of
    questions with the same score under every subset, and FGPO - GRPO (paper) in points."""
    from ..metrics import constant_reward
    from ..reasoners.registry import REASONERS

    rows = []
    for (lib, title), m in meta.items():
        if lib != library:
            continue
        t = m.load_table()
        arms = results[library][title]
        diff = np.nan
        if FGPO_ARM in arms and GRPO_PAPER in arms and not arms[FGPO_ARM].pending and not arms[GRPO_PAPER].pending:
            diff = 100 * float(arms[FGPO_ARM].scores.mean() - arms[GRPO_PAPER].scores.mean())
        rows.append({"setting": title, "benchmark": m.benchmark, "reasoner": m.reasoner, "params (M)": REASONERS[m.reasoner].params_m or np.nan,
                     "oracle headroom": 100 * float(t.rewards.max(1).mean() - t.rewards.mean(0).max()),
                     "constant share": 100 * float(constant_reward(t.rewards).mean()), "FGPO - GRPO": diff})
    return pd.DataFrame(rows)
