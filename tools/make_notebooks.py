"""Writes notebooks/*.ipynb from the cell lists below (the notebooks are committed; this keeps them reviewable).

Run: .venv/bin/python tools/make_notebooks.py
"""

from pathlib import Path

import nbformat as nbf

ROOT = Path(__file__).resolve().parents[1]


def notebook(cells, hide_code=False, name="nb"):
    """``hide_code``: code cells get the book's ``hide-input`` tag (a toggle shows them). Cell ids are fixed
    (``<name>-<index>``), so regenerating an unchanged notebook gives the same file."""
    nb = nbf.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    for kind, src, *tags in cells:
        cell = nbf.v4.new_markdown_cell(src.strip()) if kind == "md" else nbf.v4.new_code_cell(src.strip())
        if kind == "code" and hide_code:
            tags = [*tags, "hide-input"]
        if tags:
            cell.metadata["tags"] = list(tags)
        cell["id"] = f"{name}-{len(nb.cells)}"
        nb.cells.append(cell)
    return nb


WORKED_EXAMPLE = [
    ("md", """
# Worked example: four tools over a protein-structure database

An agent answers questions about protein structures with four tools: `keyword_search`, `sequence_search`,
`structure_fetch` and `literature_search`. It may call any non-empty subset, so there are 15 choices per question.

**This reward table is illustrative.** The success probabilities below are invented to reproduce the situation in
the paper's illustration; they are not measurements of any reasoner. `keyword_search` is safe but mediocre: with it,
the reasoner is right about 60% of the time whatever else it is given. `sequence_search` and `structure_fetch` are
poor alone but together are right about 90% of the time. The policy starts where a tool-using LLM's habits would put
it: most of its mass on the safe tool.
"""),
    ("md", """
Both methods use the *flat* policy (one logit per subset), so the comparison is about sampling only: with a flat
head, each subset's probability can move on its own.
"""),
    ("code", """
n_questions = 200      # questions in the illustrative table
table_seed = 0         # seed of the table's draws
seeds = [0, 1, 2, 3, 4]
steps = 100            # updates (FGPO steps, GRPO generation batches)
lr = 0.05              # Adam learning rate, both methods
batch_questions = 8    # questions per update, both methods
group_size = 8         # GRPO's G
safe_prior = 0.95      # initial probability of calling keyword_search alone
""", "parameters"),
    ("code", """
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from myst_nb import glue

from fgpo_lib import TrainConfig
from fgpo_lib.compare import compare_runs, curves_frame, summarize
from fgpo_lib.examples import PROTEIN_SUCCESS, protein_structure_table
from fgpo_lib.study.book import glue_figure, show

table = protein_structure_table(n_questions=n_questions, seed=table_seed)
space = table.space
success = pd.DataFrame({"subset": [space.label(s) for s in range(len(space))],
                        "success probability": [PROTEIN_SUCCESS[space.names_of(s)] for s in range(len(space))],
                        "share of questions answered": table.rewards.mean(axis=0)})
show(success)
"""),
    ("code", """
base = TrainConfig(steps=steps, lr=lr, batch_questions=batch_questions, group_size=group_size, parameterization="flat",
                   prior={"keyword_search": safe_prior}, eval_every=max(1, steps // 20))
runs = compare_runs(table, base, ["fgpo", "grpo", "uniform", "oracle-best"], seeds)
summary = summarize(runs, "test")
show(summary[["method", "greedy_reward", "ci_lo", "ci_hi", "expected_reward", "greedy_size", "failure_rate_closed_form", "reasoner_calls", "unique_reasoner_calls"]])
"""),
    ("code", """
curves = curves_frame({m: runs[m] for m in ("fgpo", "grpo")}, "train")
fig, axes = plt.subplots(1, 2, figsize=(10, 3.6))
sns.lineplot(data=curves, x="step", y="expected_reward", hue="method", errorbar=("pi", 100), ax=axes[0])
axes[0].set(xlabel="update", ylabel="expected reward, train (fraction correct)", title="Learning curves (band: min-max over seeds)")
sns.lineplot(data=curves, x="step", y="failure_rate_closed_form", hue="method", errorbar=("pi", 100), ax=axes[1])
axes[1].set(xlabel="update", ylabel=f"P(group of G={group_size} has equal rewards)", title="GRPO failure probability (closed form)")
fig.tight_layout()
glue_figure("fig_worked_curves", fig)
"""),
    ("code", """
labels = [space.label(s) for s in range(len(space))]
probs = pd.DataFrame([{"method": m, "seed": r["config"]["seed"], "subset": labels[s], "probability": p}
                      for m in ("fgpo", "grpo") for r in runs[m] for s, p in enumerate(r["subset_probs"]["test"])])
fig, ax = plt.subplots(figsize=(9, 5))
sns.barplot(data=probs, y="subset", x="probability", hue="method", errorbar=("pi", 100), orient="h", ax=ax)
ax.set(ylabel="tool subset", xlabel="mean probability pi(S|q) on test questions after training", title="Where each method puts its probability")
fig.tight_layout()
glue_figure("fig_worked_probs", fig)
"""),
    ("code", """
row = summary.set_index("method")
pair, safe = "sequence_search+structure_fetch", "keyword_search"
mean_prob = probs.groupby(["method", "subset"])["probability"].mean()
grpo_zero_var = np.mean([c["group_zero_variance"] for r in runs["grpo"] for c in r["curves"] if c["group_zero_variance"] is not None])
values = {
    "we_n_test": int(len(table.split_index("test"))), "we_n_seeds": len(seeds), "we_steps": steps, "we_batch": batch_questions,
    "we_G": group_size, "we_prior": safe_prior,
    "we_fgpo_acc": row.loc["fgpo", "greedy_reward"], "we_fgpo_lo": row.loc["fgpo", "ci_lo"], "we_fgpo_hi": row.loc["fgpo", "ci_hi"],
    "we_grpo_acc": row.loc["grpo", "greedy_reward"], "we_grpo_lo": row.loc["grpo", "ci_lo"], "we_grpo_hi": row.loc["grpo", "ci_hi"],
    "we_uniform_acc": row.loc["uniform", "greedy_reward"], "we_oracle_acc": row.loc["oracle-best", "greedy_reward"],
    "we_fgpo_pair_prob": mean_prob.loc[("fgpo", pair)], "we_grpo_safe_prob": mean_prob.loc[("grpo", safe)],
    "we_grpo_pair_prob": mean_prob.loc[("grpo", pair)],
    "we_fgpo_seeds_pair": sum(labels[int(np.argmax(r["subset_probs"]["test"]))] == pair for r in runs["fgpo"]),
    "we_grpo_seeds_pair": sum(labels[int(np.argmax(r["subset_probs"]["test"]))] == pair for r in runs["grpo"]),
    "we_grpo_seeds_safe": sum(labels[int(np.argmax(r["subset_probs"]["test"]))] == safe for r in runs["grpo"]),
    "we_uniform_expected": row.loc["uniform", "expected_reward"],
    "we_grpo_zero_var": grpo_zero_var, "we_constant_share": float((table.rewards == table.rewards[:, :1]).all(1).mean()),
    "we_fgpo_calls": row.loc["fgpo", "reasoner_calls"], "we_grpo_calls": row.loc["grpo", "reasoner_calls"], "we_grpo_unique": row.loc["grpo", "unique_reasoner_calls"],
}
values = {k: v.item() if hasattr(v, "item") else v for k, v in values.items()}  # numpy scalars -> Python numbers
for k, v in values.items():
    glue(k, v, display=False)
"""),
    ("md", """
## What happened

Both methods start from the same policy, {glue:text}`we_prior:.2f` of whose mass is on `keyword_search` alone, and
take {glue:text}`we_steps` updates on minibatches of {glue:text}`we_batch` questions with the same learning rate.

```{glue:figure} fig_worked_curves
:name: fig-worked-curves

Expected reward and GRPO's closed-form failure probability, over {glue:text}`we_n_seeds` seeds. The failure
probability is computed for both policies, but only GRPO depends on it: a policy that has settled on one subset has
equal-reward groups whichever method trained it, and that is harmless for FGPO, whose gradient never comes from
groups.
```

Under GRPO, a group of {glue:text}`we_G` samples from this policy almost always holds only `keyword_search`-containing
subsets, which all get the same reward on a given question, so the advantage is zero. Over training,
{glue:text}`we_grpo_zero_var:.1%` of GRPO's sampled groups had equal rewards and gave no gradient. After training
GRPO's most probable subset is still `keyword_search` alone in {glue:text}`we_grpo_seeds_safe` of
{glue:text}`we_n_seeds` seeds, and the pair in {glue:text}`we_grpo_seeds_pair`; averaged over seeds it puts
{glue:text}`we_grpo_safe_prob:.2f` of its mass on `keyword_search` alone and {glue:text}`we_grpo_pair_prob:.2f` on the
pair. A seed escapes only if the rare pair happens to be sampled on questions that the safe tool gets wrong often
enough before the policy concentrates further. FGPO computes the exact gradient from all 15 subsets, so the pair's
advantage reaches it however little mass the pair has: its most probable subset is the pair in
{glue:text}`we_fgpo_seeds_pair` of {glue:text}`we_n_seeds` seeds, with {glue:text}`we_fgpo_pair_prob:.2f` of the mass
on average.

```{glue:figure} fig_worked_probs
:name: fig-worked-probs

Mean probability of each subset on test questions after training (bars: mean over seeds, whiskers: min-max).
```

On the {glue:text}`we_n_test` test questions, the greedy subset is right for
{glue:text}`we_fgpo_acc:.3f` (95% CI {glue:text}`we_fgpo_lo:.3f`-{glue:text}`we_fgpo_hi:.3f`) of questions under FGPO
and {glue:text}`we_grpo_acc:.3f` ({glue:text}`we_grpo_lo:.3f`-{glue:text}`we_grpo_hi:.3f`) under GRPO (95% CIs
bootstrap over seeds and questions). A subset drawn uniformly at random is right {glue:text}`we_uniform_expected:.3f`
of the time; the per-question best subset (oracle-best, an upper bound that looks at test rewards) gets
{glue:text}`we_oracle_acc:.3f`. A share of {glue:text}`we_constant_share:.3f` of all questions has the same reward
under every subset (every subset answers it, or none does); no method can learn from those.

FGPO read {glue:text}`we_fgpo_calls:,.0f` table cells (15 per training question); GRPO asked its oracle
{glue:text}`we_grpo_calls:,.0f` times, of which {glue:text}`we_grpo_unique:,.0f` were distinct (question, subset)
pairs.
"""),
]


ENVIRONMENT = [
    ("md", """
# The genomics environment

The built-in study runs offline on real data: the GeneTuring and GeneHop questions from NCBI's GeneGPT repository
(public domain), and 4,953 real NCBI Web API responses that GeneGPT recorded in spring 2023. Eight tools answer from
those recordings (the NCBI tools) or compute with Biopython (the sequence tools). Where a recording has no record,
a tool returns NCBI's own no-hit answer; nothing is invented.
"""),
    ("code", """
max_size = 4   # largest tool subset considered for coverage
""", "parameters"),
    ("code", """
import pandas as pd
from myst_nb import glue

from fgpo_lib.genomics.benchmarks import BENCHMARKS, load_benchmark
from fgpo_lib.genomics.coverage import coverage_table
from fgpo_lib.genomics.tools import TOKEN_CAP, make_tools
from fgpo_lib.study.book import show

tools = pd.DataFrame([{"order": i, "tool": t.name, "description": t.description} for i, t in enumerate(make_tools())])
glue("env_token_cap", TOKEN_CAP, display=False)
show(tools)
"""),
    ("md", """
Tools run in this canonical order, and a later tool sees the entities found by earlier ones: `gene_record` fetches the
records of gene IDs found by `gene_search` or `snp_lookup`, and the symbols found by `disease_genes`. Each output is
capped at {glue:text}`env_token_cap` tokens.

## Benchmarks

GeneTuring keeps all 9 tasks. GeneHop keeps the two tasks whose NCBI calls were recorded; its third task, "sequence gene
alias", is left out because its GeneGPT log could not be obtained, so no recorded response could answer it. GeneSeq is
derived here: questions over the real DNA sequences of GeneTuring and GeneHop, with gold answers computed by
Biopython. Splits are fixed (version `v1`), stratified by task, 30% test.
"""),
    ("code", """
sizes = pd.DataFrame([{"benchmark": b, "task": q.task, "split": q.split} for b in BENCHMARKS for q in load_benchmark(b)])
show(sizes.groupby(["benchmark", "task", "split"]).size().unstack("split").fillna(0).astype(int).reset_index())
"""),
    ("md", """
## Coverage

A question is *reachable* when some subset of at most 4 tools yields outputs that hold the evidence for a nonzero
score under the task's rule, and *fully reachable* when they would earn full credit (for example the exact GRCh38
coordinates of an alignment, which no recorded BLAST report shows within its first 10,000 bytes).
"""),
    ("code", """
coverage = {b: coverage_table(b, max_size=max_size) for b in BENCHMARKS}
for b, table in coverage.items():
    row = table.set_index("task").loc["all"]
    glue(f"env_{b}_reachable", float(row["reachable_%"]), display=False)
    glue(f"env_{b}_full", float(row["fully_reachable_%"]), display=False)
show(pd.concat(coverage, names=["benchmark", "row"]).reset_index(level="benchmark"), 1)
"""),
    ("md", """
Overall, {glue:text}`env_geneturing_reachable:.1f`% of GeneTuring questions are reachable
({glue:text}`env_geneturing_full:.1f`% fully), {glue:text}`env_genehop_reachable:.1f`% of GeneHop
({glue:text}`env_genehop_full:.1f`% fully) and {glue:text}`env_geneseq_reachable:.1f`% of GeneSeq.
"""),
]


SETTING = [
    ("md", """
# Setting: one benchmark, one frozen reasoner

First the paper's protocol on this setting's tables (the 4-tool library, the paper's n = 4, then the 8-tool
library): every arm, cross-fitted over 5 folds so that each question is tested once per seed, with learning rate and
checkpoint chosen on dev. Then, as a sensitivity check, the earlier protocol (raw score, no entropy bonus, 200
full-batch updates) on one table.
"""),
    ("code", """
benchmark = "genehop"
reasoner = "records"
table_path = ""                 # the setting's reward table (.npz); "" builds a reader's table in a temporary folder
results_dir = ""                # where results are saved; "" for a temporary folder
library_paths = {}              # {"4 tools"|"8 tools": table path} for the paper's protocol; {} uses table_path
protocol_seeds = [0, 1, 2]
protocol_arms = None            # None: every arm of fgpo_lib.study.protocol.ARMS
methods = ["fgpo", "grpo", "uniform", "oracle-best"]
seeds = [0, 1, 2]
group_size = 8                  # GRPO's G
steps = 200                     # updates per method (GRPO: generation batches)
lr = 0.05
batch_questions = 0             # 0: all training questions per update
featurizer = "text"             # question features: "text" (hashed n-grams) or "minilm" (sentence embeddings)
parameterization = "factorized"
eval_every = 10
""", "parameters"),
    ("code", """
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from myst_nb import glue

from fgpo_lib import RewardTable, TrainConfig
from fgpo_lib.compare import compare_runs, curves_frame, summarize
from fgpo_lib.features import make_featurizer
from fgpo_lib.study import table_for
from fgpo_lib.study.book import show
from fgpo_lib.study.results import save_setting

import tempfile
from pathlib import Path

scratch = Path(tempfile.mkdtemp(prefix="fgpo-setting-"))
table = RewardTable.load(table_path or table_for(benchmark, reasoner, scratch, scratch / "cells.sqlite"))
results_dir = results_dir or str(scratch / "results")
try:
    features, used_featurizer = make_featurizer(featurizer)(table.questions), featurizer
except Exception:  # a missing model package: fall back to the text featurizer; the table below says which was used
    features, used_featurizer = make_featurizer("text")(table.questions), "text"
show(pd.DataFrame([{"questions": table.n_questions, "train": len(table.split_index("train")), "test": len(table.split_index("test")),
                    "subsets": table.n_subsets, "tools": ", ".join(table.tool_names), "features": f"{used_featurizer} ({features.shape[1]})",
                    "scoring": table.provenance.get("scoring", "lenient")}]))
"""),
    ("md", """
## The paper's protocol

Test score in points at the dev-selected checkpoint (95% bootstrap interval over seeds and questions) and at the final
checkpoint, tools per question, reasoner calls per training fold (table cells read, or GRPO's on-demand calls), and
the learning rates the dev split chose from the shared grid (how many of the seed x fold trainings chose each).
"""),
    ("code", """
from fgpo_lib.study.protocol import ARMS, run_protocol, section_arms
from fgpo_lib.study.protocol_results import arm_summary, save_protocol

library_paths = library_paths or {"8 tools" if table.n_subsets > 16 else "4 tools": str(table_path or "")}
proto_tables = {lib: RewardTable.load(p) if p else table for lib, p in library_paths.items()}
# the headline library runs every arm; a second library (the 8-tool section) leaves out the dial and sensitivity rows
proto = {lib: run_protocol({lib: t}, protocol_seeds, protocol_arms if i == 0 else section_arms(protocol_arms), progress=False)[lib]
         for i, (lib, t) in enumerate(proto_tables.items())}
if all(library_paths.values()):
    save_protocol(proto, library_paths, Path(results_dir) / "protocol.json", benchmark, reasoner)
summary = pd.concat([arm_summary(arms_).assign(library=f"{lib} ({proto_tables[lib].n_subsets} subsets)") for lib, arms_ in proto.items()], ignore_index=True)
show(summary[["library", *summary.columns[:-1]]], 2)
"""),
    ("code", """
budget = pd.DataFrame([{"library": lib, "arm": a, "group": ARMS[a].group, "score": 100 * float(np.nanmean(r.scores)), "calls": float(r.calls.mean())}
                       for lib, arms_ in proto.items() for a, r in arms_.items() if not r.pending and a not in ("Oracle", "No-Tool")])
fig, axes = plt.subplots(1, len(proto), figsize=(5.2 * len(proto), 3.8), squeeze=False)
for ax, (lib, df) in zip(axes[0], budget.groupby("library", sort=False)):
    sns.scatterplot(data=df, x="calls", y="score", hue="group", style="group", s=60, ax=ax)
    for _, r in df.iterrows():
        ax.annotate(r.arm, (r.calls, r.score), fontsize=6, xytext=(3, 2), textcoords="offset points")
    for a, ls in (("Oracle", ":"), ("No-Tool", "--")):
        ax.axhline(100 * float(np.nanmean(proto[lib][a].scores)), color="grey", ls=ls, lw=1, label=a.lower())
    ax.set(xscale="log", xlabel="reasoner calls per training fold (log scale)", ylabel="test score (points)", title=f"{benchmark} / {reasoner}, {lib}")
    ax.legend(fontsize=7)
fig.tight_layout()
"""),
    ("md", """
## Sensitivity: the earlier protocol

FGPO and GRPO on the raw score, without entropy bonus, 200 full-batch updates, on the table's own train/test split.
"""),
    ("code", """
base = TrainConfig(steps=steps, lr=lr, batch_questions=batch_questions, group_size=group_size, parameterization=parameterization, eval_every=eval_every)
runs = compare_runs(table, base, methods, seeds, progress=False, features=features)
save_setting(runs, table, results_dir, {"benchmark": benchmark, "reasoner": reasoner, "featurizer": used_featurizer, "seeds": seeds, "steps": steps, "lr": lr, "group_size": group_size, "batch_questions": batch_questions, "parameterization": parameterization})
summary = summarize(runs, "test")
show(summary[["method", "greedy_reward", "ci_lo", "ci_hi", "expected_reward", "greedy_size", "failure_rate_closed_form", "reasoner_calls", "unique_reasoner_calls"]])
"""),
    ("code", """
curves = curves_frame({m: runs[m] for m in ("fgpo", "grpo") if m in runs}, "test")
fig, axes = plt.subplots(1, 2, figsize=(10, 3.4))
sns.lineplot(data=curves, x="step", y="expected_reward", hue="method", errorbar=("pi", 100), ax=axes[0])
axes[0].set(xlabel="update", ylabel="expected test reward (score, 0-1)", title=f"{benchmark} / {reasoner}")
sns.lineplot(data=curves, x="step", y="failure_rate_closed_form", hue="method", errorbar=("pi", 100), ax=axes[1])
axes[1].set(xlabel="update", ylabel=f"P(G={group_size} group has equal rewards)", title="failure probability (closed form)")
fig.tight_layout()
"""),
]

RESULTS = [
    ("md", """
# Sensitivity: the earlier protocol

The headline is the previous chapter, the paper's own protocol. This chapter keeps the study's earlier protocol as a
sensitivity check, and the two differ in ways that decide the outcome:

* **Reward.** Here both methods train on the raw score; the paper trains FGPO on Eq. 1, whose parsimony term breaks
  ties between subsets that score alike, and its GRPO on the differential reward (tools against no tool).
* **Schedule.** Here both get 200 full-batch updates (matched in updates); the paper matches epochs, gives FGPO an
  entropy bonus of 0.03, and gives GRPO G = 6 and 2.4 times FGPO's table cells in reasoner calls.
* **Evaluation.** Here each setting has one fixed train/test split and reports the final policy; the paper selects
  the checkpoint on a dev split, and the headline chapter cross-fits so that every question is tested once per seed.

Every number on this page is computed from the setting runs of this build (the sensitivity section of each setting
page), on the 8-tool table where the setting has one, and glued into the text. The paper's numbers are quoted beside
ours for comparison, never used.
"""),
    ("code", """
study_dir = "."   # the study's _generated folder
""", "parameters"),
    ("code", """
import json
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from myst_nb import glue

from fgpo_lib.stats import iqm
from fgpo_lib.study.book import glue_figure, show
from fgpo_lib.study.results import evaluations_table, finals_by_method, load_study, main_table, scores

study = load_study(Path(study_dir))
status = json.loads((Path(study_dir) / "study.json").read_text())
glue("n_settings", len(study), display=False)
glue("n_pending", len(status["pending"]), display=False)
glue("pending_list", ", ".join(status["pending"]) or "none", display=False)
"""),
    ("md", """
This build ran {glue:text}`n_settings` settings; {glue:text}`n_pending` settings have no reward table in the book yet
({glue:text}`pending_list`). A table still being computed enters the book once it holds as many questions as
the other LLMs' 8-tool samples; until then the list says how far it has got.

## FGPO against GRPO

Test accuracy (the score of the greedy subset, in points) with 95% confidence intervals from a bootstrap over seeds
and questions; the difference is paired by question.
"""),
    ("code", """
mt = main_table(study)
diff = mt["FGPO-GRPO"]
glue("mean_diff", float(diff.mean()), display=False)
glue("max_diff", float(diff.max()), display=False)
glue("max_diff_setting", mt.loc[diff.idxmax(), "benchmark"] + " / " + mt.loc[diff.idxmax(), "reasoner"], display=False)
glue("n_fgpo_better", int((mt["diff lo"] > 0).sum()), display=False)
glue("n_grpo_better", int((mt["diff hi"] < 0).sum()), display=False)
fmt = lambda m, lo, hi: mt[m].map("{:.1f}".format) + " [" + mt[lo].map("{:.1f}".format) + ", " + mt[hi].map("{:.1f}".format) + "]"
shown = pd.DataFrame({"benchmark": mt.benchmark, "reasoner": mt.reasoner, "n test": mt["test questions"], "FGPO": fmt("FGPO", "FGPO lo", "FGPO hi"), "GRPO": fmt("GRPO", "GRPO lo", "GRPO hi"), "FGPO-GRPO": fmt("FGPO-GRPO", "diff lo", "diff hi"), "uniform": mt["uniform (expected)"].round(1), "oracle-best": mt["oracle-best"].round(1)})
show(shown)
"""),
    ("md", """
Over these settings, the difference FGPO - GRPO averages {glue:text}`mean_diff:+.2f` points and is at most
{glue:text}`max_diff:+.2f` ({glue:text}`max_diff_setting`); the paper reports +6.75 on average and at most +14.20 over
its 15 settings. The paired 95% interval excludes zero in favour of FGPO in {glue:text}`n_fgpo_better` settings and in
favour of GRPO in {glue:text}`n_grpo_better`.

## Failure rate

The share of questions whose group of G samples has equal rewards (GRPO's zero-advantage failure): its closed form
under each final policy, and the rate observed on one sampled group per question.
"""),
    ("code", """
fm = finals_by_method(study)
fail = fm.groupby("method")[["failure_rate_closed_form", "failure_rate_observed", "constant_share"]].mean().mul(100)
for m in ("uniform", "grpo", "fgpo"):
    glue(f"fail_{m}", float(fail.loc[m, "failure_rate_closed_form"]), display=False)
    glue(f"fail_obs_{m}", float(fail.loc[m, "failure_rate_observed"]), display=False)
glue("constant_share", float(fail.loc["fgpo", "constant_share"]), display=False)
show(fail.reset_index(), 1)
"""),
    ("md", """
Under the uniform policy {glue:text}`fail_uniform:.1f`% of test questions would give GRPO no signal (observed:
{glue:text}`fail_obs_uniform:.1f`%); after GRPO training, {glue:text}`fail_grpo:.1f`% (observed
{glue:text}`fail_obs_grpo:.1f`%); under FGPO's final policy, {glue:text}`fail_fgpo:.1f`%. The paper reports 0.2% under
a uniform policy and 20.8% after GRPO training. {glue:text}`constant_share:.1f`% of test questions have the same reward
under every subset, which no method can learn from. A high rate after FGPO training is harmless: FGPO never learns
from groups.

## Tools per question
"""),
    ("code", """
tools = fm.groupby("method")[["greedy_size", "expected_size"]].mean()
for m in ("uniform", "grpo", "fgpo", "oracle-best"):
    glue(f"tools_{m}", float(tools.loc[m, "greedy_size"]), display=False)
by_size = pd.DataFrame([{"setting": n, "tools": int(k), "mean reward": v} for n, s in study.items() for k, v in s["meta"]["table"]["mean_by_size"].items()])
fig, ax = plt.subplots(figsize=(6, 3.4))
sns.lineplot(data=by_size, x="tools", y="mean reward", hue="setting", marker="o", ax=ax, legend=len(study) <= 6)
ax.set(xlabel="tools called (subset size)", ylabel="mean reward over questions and subsets (0-1)", title="Accuracy against the number of tools")
fig.tight_layout()
glue_figure("fig_tools", fig)
show(tools.reset_index(), 2)
"""),
    ("md", """
The greedy subset calls {glue:text}`tools_grpo:.2f` tools per question after GRPO and {glue:text}`tools_fgpo:.2f` after
FGPO (oracle-best: {glue:text}`tools_oracle-best:.2f`); the paper reports a fall from 2.36 to 1.40 on one benchmark.

```{glue:figure} fig_tools
:name: fig-tools

Mean reward of all subsets of each size, per setting: what calling more tools buys these reasoners.
```

## Reasoner evaluations
"""),
    ("code", """
ev = evaluations_table(study)
glue("eval_ratio", float(ev["calls / cells"].mean()), display=False)
glue("eval_ratio_unique", float(ev["unique / cells"].mean()), display=False)
meta = next(iter(study.values()))["meta"]
n_sub = meta["n_subsets"]
glue("schedule", f"{meta['steps']} generation batches of all training questions, G = {meta['group_size']}", display=False)
epochs = np.arange(1, 201)
fig, ax = plt.subplots(figsize=(6, 3.4))
for G in (4, 8, 16):
    ax.plot(epochs, epochs * G / n_sub, label=f"G = {G}")
ax.axhline(1, color="grey", lw=0.8)
ax.set(xscale="log", yscale="log", xlabel="GRPO epochs over the training questions", ylabel="GRPO calls / FGPO table cells", title=f"Evaluation ratio ({n_sub} subsets)")
ax.legend()
fig.tight_layout()
glue_figure("fig_eval_ratio", fig)
show(ev, 2)
"""),
    ("md", """
With the schedule used here ({glue:text}`schedule`), GRPO asked its oracle {glue:text}`eval_ratio:.1f` times as many
times as FGPO's table has cells, and {glue:text}`eval_ratio_unique:.2f` times as many distinct (question, subset)
pairs: a reasoner cache makes repeated samples free. The paper reports FGPO needing 2.4x fewer evaluations than
on-demand GRPO. Each GRPO epoch costs G calls per question against FGPO's one-off cost of one call per subset, so
the ratio of all calls grows as epochs x G / subsets:

```{glue:figure} fig_eval_ratio
:name: fig-eval-ratio

GRPO's on-demand calls over FGPO's table cells, as a function of GRPO epochs and G.
```

## Learning curves
"""),
    ("code", """
curves = pd.concat([s["curves"].assign(setting=n) for n, s in study.items()], ignore_index=True)
test = curves[(curves.split == "test") & curves.method.isin(["fgpo", "grpo"])]
agg = test.groupby(["setting", "method", "step"])["expected_reward"].agg(iqm=lambda v: iqm(v.to_numpy()), lo="min", hi="max").reset_index()
settings = sorted(agg.setting.unique())
cols = min(3, len(settings))
rows = int(np.ceil(len(settings) / cols))
fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 2.8 * rows), squeeze=False, sharex=True)
for ax, name in zip(axes.flat, settings):
    for m, color in (("fgpo", "C0"), ("grpo", "C1")):
        d = agg[(agg.setting == name) & (agg.method == m)]
        ax.plot(d.step, d.iqm, color=color, label=m)
        ax.fill_between(d.step, d.lo, d.hi, color=color, alpha=0.2)
    ax.set(title=name, xlabel="update", ylabel="expected test reward")
for ax in axes.flat[len(settings):]:
    ax.set_visible(False)
axes.flat[0].legend()
fig.tight_layout()
glue_figure("fig_curves", fig)
ent = curves[(curves.split == "test") & curves.method.isin(["fgpo", "grpo"])]
fig2, ax2 = plt.subplots(figsize=(6, 3.4))
sns.lineplot(data=ent, x="step", y="entropy", hue="method", estimator=lambda v: iqm(np.asarray(v)), errorbar=("pi", 50), ax=ax2)
ax2.set(xlabel="update", ylabel="policy entropy (nats)", title="Entropy, IQM over settings and seeds")
fig2.tight_layout()
glue_figure("fig_entropy", fig2)
"""),
    ("md", """
```{glue:figure} fig_curves
:name: fig-curves

Expected test reward during training: interquartile mean over seeds, band from the worst to the best seed.
```

```{glue:figure} fig_entropy
:name: fig-entropy

Policy entropy during training (IQM over settings and seeds, band: interquartile range).
```

## Per-question paired differences
"""),
    ("code", """
diffs = []
for n, s in study.items():
    d = scores(s["per_question"], "fgpo").mean(0) - scores(s["per_question"], "grpo").mean(0)
    diffs.append(pd.DataFrame({"setting": n, "difference": d}))
diffs = pd.concat(diffs, ignore_index=True)
glue("share_fgpo_better_q", float(100 * (diffs.difference > 0).mean()), display=False)
glue("share_grpo_better_q", float(100 * (diffs.difference < 0).mean()), display=False)
fig, ax = plt.subplots(figsize=(6, 3.4))
sns.histplot(data=diffs, x="difference", bins=21, ax=ax)
ax.set(xlabel="FGPO - GRPO test score per question (mean over seeds)", ylabel="questions (all settings)", title="Paired per-question differences")
fig.tight_layout()
glue_figure("fig_paired", fig)
"""),
    ("md", """
FGPO scores higher than GRPO on {glue:text}`share_fgpo_better_q:.1f`% of test questions and lower on
{glue:text}`share_grpo_better_q:.1f`%; on the rest they tie.

```{glue:figure} fig_paired
:name: fig-paired

Per-question differences between FGPO and GRPO, pooled over settings.
```
"""),
]


PROTOCOL = [
    ("md", """
# The paper's protocol

The study's headline: the paper's own experiment on every setting of the book. Its reward (Eq. 1 for FGPO, the
differential reward for its GRPO), its schedules (4 epochs of batches of 16 for FGPO; G = 6, batches of 64 and 2.4
times FGPO's table cells in reasoner calls for GRPO), its baselines, and the controls it lacks (GRPO on Eq. 1 with and
without std scaling, GRPO at 1x FGPO's cells, FGPO without the parsimony term, the k-subset dial). Every arm is
cross-fitted over 5 folds stratified by task, so each question is tested once per seed; the learning rate (from one
shared grid) and the checkpoint are chosen on a dev split inside each training fold. Scores are the raw score of the
subset each arm calls, in points. The arms are `fgpo_lib/study/protocol.py`; each setting's page shows its own arms,
learning rates and budget plot.

The overview below lists every setting's table. An LLM's Tools w/ Desc arm is the LLM's own selection call (a reader's
is MiniLM's description selector); a reply that names no tool of the library and does not say "none" is recorded as
unparseable, never guessed, and scores 0. Its last column counts those replies.
"""),
    ("code", """
study_dir = "."   # the study's _generated folder
""", "parameters"),
    ("code", """
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from myst_nb import glue

from fgpo_lib.analyses import degenerate_share_by_library_size
from fgpo_lib.table_info import extras_info, unparseable_selections
from fgpo_lib.study.book import glue_figure, show
from fgpo_lib.reasoners.registry import REASONERS
from fgpo_lib.study.protocol import ARMS, LR_GRID
from fgpo_lib.study.protocol_results import (checkpoint_table, dead_group_frame, load_protocol, main_table, paired_comparison,
                                             input_tokens_table, parsimony_table, reasoner_strength_frame, tool_call_rates, top_subsets, transfer_frame)

import re

results, meta = load_protocol(Path(study_dir))
HEAD = "4 tools" if "4 tools" in results else next(iter(results))
# the headline settings (the headline reasoners of the registry); the control readers (bm25, records) are shown apart
role = {title: REASONERS[m.reasoner].study for (lib, title), m in meta.items() if lib == HEAD}
controls = {t: a for t, a in results[HEAD].items() if role[t] == "control"}
head = {t: a for t, a in results[HEAD].items() if role[t] != "control"}
if not head:  # a study of control readers only (the CI's small book): they are its settings
    head, controls = controls, {}
first = next(iter(head.values()))
glue("proto_head_library", HEAD, display=False)
glue("proto_n_settings", len(head), display=False)
glue("proto_n_controls", len(controls), display=False)
glue("proto_n_seeds", int(next(iter(first.values())).scores.shape[0]), display=False)
glue("proto_lr_grid", ", ".join(f"{lr:g}" for lr in LR_GRID), display=False)
overview = pd.DataFrame([{"library": lib, "setting": title, "questions": (t := m.load_table()).n_questions, "subsets": t.n_subsets,
                          "tools": ", ".join(t.tool_names), "complete": t.provenance.get("complete", True),
                          "unparseable selection calls": unparseable_selections(extras_info(t))}
                         for (lib, title), m in meta.items()])
show(overview)
"""),
    ("md", """
## The main table

{glue:text}`proto_n_settings` headline settings (the benchmarks x the headline reasoners of the registry) on the
{glue:text}`proto_head_library` library, {glue:text}`proto_n_seeds` seeds each; mean test score in points with a 95%
bootstrap interval over seeds and questions. First the paper's arms, then the controls and the k-subset dial, then the
{glue:text}`proto_n_controls` settings of the two control readers (BM25 and the records parser), which no average
of this chapter includes. The learning-rate grid, shared by every trained arm, is {glue:text}`proto_lr_grid`.
"""),
    ("code", """
def split_arms(mt):
    paper = [a for a in mt.columns if a in ARMS and ARMS[a].group in ("paper", "untrained")]
    other = [a for a in mt.columns if a in ARMS and ARMS[a].group not in ("paper", "untrained")]
    return paper, other

mt = main_table(head)
paper_arms, control_arms = split_arms(mt)
show(mt[["setting", "questions", *paper_arms]])
"""),
    ("code", """
show(mt[["setting", *control_arms]])
"""),
    ("code", """
if controls:
    mtc = main_table(controls)
    show(mtc[["setting", "questions", *split_arms(mtc)[0]]])
"""),
    ("md", """
The paper's own numbers, for comparison only; they come from its tables, not from any run here:
"""),
    ("code", """
paper = pd.DataFrame([
    {"what": "GenomeQA, strongest reasoner (points)", "No-Tool": 39.28, "GRPO": 45.46, "Tools w/ Desc": 47.77, "All-Tools": 49.39, "FGPO": 52.62, "Oracle": 77.41},
])
show(paper)
"""),
    ("code", """
show(pd.DataFrame([{"what": "k-subset dial (points)", "k=2": 49.58, "k=4": 50.47, "k=8": 51.39, "k=16": 52.59}]))
"""),
    ("md", """
## FGPO against GRPO, paired by question
"""),
    ("code", """
AGAINST = ("GRPO (paper)", "GRPO (Eq. 1, std)", "Dr. GRPO (Eq. 1)", "GRPO (paper) at 1x cells", "SFT", "DPO (beta 0.1)", "Tools w/ Desc", "All-Tools")
pairs = {b: paired_comparison(head, "FGPO", b) for b in AGAINST}
pairs = {b: df for b, df in pairs.items() if len(df)}
main_pair = pairs["GRPO (paper)"]
d = main_pair["FGPO - GRPO (paper)"]
glue("proto_mean_diff", float(d.mean()), display=False)
glue("proto_max_diff", float(d.max()), display=False)
glue("proto_min_diff", float(d.min()), display=False)
glue("proto_max_setting", main_pair.loc[d.idxmax(), "setting"], display=False)
glue("proto_n_sig", int((main_pair["Holm p"] < 0.05).sum()), display=False)
glue("proto_n_pos", int((main_pair["lo"] > 0).sum()), display=False)
glue("proto_n_neg", int((main_pair["hi"] < 0).sum()), display=False)
glue("proto_tools_fgpo", float(main_pair["tools/q FGPO"].mean()), display=False)
glue("proto_tools_grpo", float(main_pair["tools/q GRPO (paper)"].mean()), display=False)
glue("proto_mdd", float(main_pair["MDD (80%)"].median()), display=False)
glue("proto_q_min", int(main_pair.questions.min()), display=False)
glue("proto_q_max", int(main_pair.questions.max()), display=False)
show(main_pair, 2)
"""),
    ("md", """
Under the paper's protocol, FGPO - GRPO averages {glue:text}`proto_mean_diff:+.2f` points over these settings
(from {glue:text}`proto_min_diff:+.2f` to {glue:text}`proto_max_diff:+.2f`, the largest in
{glue:text}`proto_max_setting`); the paper reports +6.75 on average and at most +14.20. The paired interval excludes
zero in FGPO's favour in {glue:text}`proto_n_pos` settings and in GRPO's in {glue:text}`proto_n_neg`; McNemar's test
(full-credit answers, Holm-adjusted across settings) rejects equality at 5% in {glue:text}`proto_n_sig`. The minimum
detectable difference at 80% power is {glue:text}`proto_mdd:.1f` points at the median setting (zero where the two
arms call the same subset on every question, so that there is no difference to detect); the tables hold
{glue:text}`proto_q_min` to {glue:text}`proto_q_max` questions. FGPO calls {glue:text}`proto_tools_fgpo:.2f` tools per question and GRPO {glue:text}`proto_tools_grpo:.2f`
(the paper: 1.40 against 2.36).

The controls: FGPO against GRPO trained on Eq. 1 with TRL's std scaling, without it (Dr. GRPO), the paper's GRPO
given only as many reasoner calls as FGPO's table has cells, and the untrained and imitation baselines.
"""),
    ("code", """
ctrl = pd.concat([df.assign(against=b).rename(columns={f"FGPO - {b}": "FGPO - other", f"tools/q {b}": "tools/q other"}) for b, df in pairs.items()], ignore_index=True)
agg = ctrl.groupby("against", sort=False).agg(**{"mean FGPO - other": ("FGPO - other", "mean"), "max": ("FGPO - other", "max"), "min": ("FGPO - other", "min"),
      "CI above 0": ("lo", lambda x: int((x > 0).sum())), "CI below 0": ("hi", lambda x: int((x < 0).sum())), "Holm p < 0.05": ("Holm p", lambda x: int((x < 0.05).sum())),
      "tools/q FGPO": ("tools/q FGPO", "mean"), "tools/q other": ("tools/q other", "mean")}).reset_index()
slug = lambda name: re.sub(r"\\W+", "_", name).strip("_")  # noqa: E731
for against in AGAINST:
    row = agg[agg.against == against]
    glue(f"ctrl_mean_{slug(against)}", float(row["mean FGPO - other"].iloc[0]) if len(row) else float("nan"), display=False)
glue("grpo_std_tools", float(agg.set_index("against").loc["GRPO (Eq. 1, std)", "tools/q other"]) if "GRPO (Eq. 1, std)" in set(agg.against) else float("nan"), display=False)
show(agg, 2)
"""),
    ("code", """
show(ctrl[["against", "setting", "FGPO - other", "lo", "hi", "McNemar p", "Holm p", "tools/q FGPO", "tools/q other"]], 2)
"""),
    ("md", """
Against GRPO on Eq. 1 with std scaling, FGPO leads by {glue:text}`ctrl_mean_GRPO_Eq_1_std:+.2f` points on average,
and that GRPO calls {glue:text}`grpo_std_tools:.2f` tools per question: where only the parsimony term varies within a
group, dividing by the group's standard deviation turns the 0.1 tie-break into a full-size advantage, and the policy
is pushed toward calling fewer tools whatever the answer. Without the scaling (Dr. GRPO) the gap is
{glue:text}`ctrl_mean_Dr_GRPO_Eq_1:+.2f` points; against the paper's GRPO at 1x FGPO's cells it is
{glue:text}`ctrl_mean_GRPO_paper_at_1x_cells:+.2f`.

## Dev-selected against final checkpoints

Every trained arm reports the dev-selected checkpoint above; the final one, for comparison (mean over settings,
points):
"""),
    ("code", """
show(checkpoint_table(head), 2)
"""),
    ("md", """
## Dead groups against G

The closed-form dead-group rate, the share of test questions whose group of G samples from the policy would all get
the same Eq. 1 reward (no gradient for GRPO), for the uniform policy, SFT, GRPO (at its final, converged checkpoint and
at its dev-selected one) and FGPO; mean over the settings.
"""),
    ("code", """
dg = dead_group_frame(head)
at6 = dg[dg.G == 6].groupby("policy")["dead_group_rate"].mean().mul(100)
for key, label in (("uniform", "uniform"), ("grpo_final", "GRPO (paper), converged"), ("grpo_sel", "GRPO (paper), dev-selected"), ("fgpo", "FGPO"), ("sft", "SFT")):
    glue(f"dead6_{key}", float(at6.get(label, np.nan)), display=False)
fig, ax = plt.subplots(figsize=(6.5, 3.8))
sns.lineplot(data=dg.assign(rate=100 * dg.dead_group_rate), x="G", y="rate", hue="policy", errorbar=None, ax=ax)
ax.set(xlabel="group size G (samples per question)", ylabel="dead-group rate (% of questions)", title="Dead groups against G, closed form")
fig.tight_layout()
glue_figure("fig_proto_dead", fig)
"""),
    ("md", """
```{glue:figure} fig_proto_dead
:name: fig-proto-dead

Dead-group rate against G, mean over the settings.
```

At the paper's G = 6: {glue:text}`dead6_uniform:.1f`% under the uniform policy, {glue:text}`dead6_grpo_sel:.1f`% for
GRPO at its dev-selected checkpoint and {glue:text}`dead6_grpo_final:.1f`% at its final one,
{glue:text}`dead6_sft:.1f`% after SFT, {glue:text}`dead6_fgpo:.1f`% for FGPO (the paper: 0.2% and 20.8%). A concentrated
policy is dead by this measure whatever trained it; only GRPO needs its groups alive to learn.

## Outcome-degenerate questions against library size

The share of questions whose score is the same under every subset of a sub-library (no policy can do better than
any other on them), averaged over all sub-libraries of each size, from the tables of the study's largest library
({glue:text}`deg_lib`).
"""),
    ("code", """
DEG_LIB = "8 tools" if any(lib == "8 tools" for lib, _ in meta) else HEAD  # the largest library of the study
deg = pd.concat([degenerate_share_by_library_size((t := m.load_table()).rewards, t.space).assign(setting=title)
                 for (lib, title), m in meta.items() if lib == DEG_LIB], ignore_index=True)
by_size = deg.groupby("tools")["degenerate_share"].mean().mul(100)
glue("deg_1", float(by_size.loc[1]), display=False)
glue("deg_4", float(by_size.loc[4]), display=False)
glue("deg_8", float(by_size.loc[by_size.index.max()]), display=False)
glue("deg_n", int(by_size.index.max()), display=False)
glue("deg_lib", DEG_LIB, display=False)
fig, ax = plt.subplots(figsize=(6.5, 3.8))
sns.lineplot(data=deg.assign(share=100 * deg.degenerate_share), x="tools", y="share", hue="setting", marker="o", ax=ax)
ax.set(xlabel="tools in the library", ylabel="outcome-degenerate questions (%)", title="Degenerate share against library size")
ax.legend(fontsize=6, ncol=2)
fig.tight_layout()
glue_figure("fig_proto_degenerate", fig)
"""),
    ("md", """
```{glue:figure} fig_proto_degenerate
:name: fig-proto-degenerate

Outcome-degenerate share against library size, one line per setting.
```

Averaged over the settings, {glue:text}`deg_1:.1f`% of questions are degenerate with 1 tool,
{glue:text}`deg_4:.1f`% with 4 and {glue:text}`deg_8:.1f`% with all {glue:text}`deg_n` (the paper: 73.5% with 1 tool, 37.7% with 4).

## The parsimony ablation

FGPO on Eq. 1 with lambda = 0.1 (the paper's) against lambda = 0 (no tool-count term).
"""),
    ("code", """
pars = parsimony_table(head)
glue("pars_diff", float(pars["difference"].mean()), display=False)
glue("pars_tools_01", float(pars["tools/q (lambda 0.1)"].mean()), display=False)
glue("pars_tools_0", float(pars["tools/q (lambda 0)"].mean()), display=False)
show(pars, 2)
"""),
    ("md", """
The tool-count term changes the score by {glue:text}`pars_diff:+.2f` points on average and the tools per question from
{glue:text}`pars_tools_0:.2f` (lambda = 0) to {glue:text}`pars_tools_01:.2f` (lambda = 0.1).

## Transfer across reasoners

FGPO's subset choices, trained on one reasoner's table, scored by another reasoner's table of the same questions. Each
choice comes from a cross-fitted policy that never trained on that question. The loss is the evaluated reasoner's own
FGPO minus the transferred choices, on the questions both tables hold.
"""),
    ("code", """
tr = transfer_frame(results, meta, HEAD)
off = tr[tr["trained on"] != tr["evaluated on"]]
glue("transfer_loss", float(off["loss"].mean()), display=False)
glue("transfer_loss_max", float(off["loss"].max()), display=False)
benchmarks = list(dict.fromkeys(tr.benchmark))
fig, axes = plt.subplots(1, len(benchmarks), figsize=(4.6 * len(benchmarks), 4), squeeze=False)
for ax, b in zip(axes[0], benchmarks):
    m = tr[tr.benchmark == b].pivot(index="trained on", columns="evaluated on", values="loss")
    sns.heatmap(m, annot=True, fmt=".1f", cmap="vlag", center=0, ax=ax, cbar_kws={"label": "loss (points)"}, annot_kws={"fontsize": 7})
    ax.set(title=f"{b} ({HEAD})", xlabel="evaluated on (reasoner)", ylabel="trained on (reasoner)")
fig.tight_layout()
glue_figure("fig_proto_transfer", fig)
"""),
    ("md", """
```{glue:figure} fig_proto_transfer
:name: fig-proto-transfer

Transfer loss in points (the evaluated reasoner's own FGPO minus the transferred choices); the diagonal is zero.
```

A policy trained on another reasoner's table loses {glue:text}`transfer_loss:.2f` points on average, at most
{glue:text}`transfer_loss_max:.2f`.

## Tools per question, and which subsets each method picks
"""),
    ("md", """
Tools per question and the input each arm puts in front of the reasoner: the tokens of the called tools' outputs per
question (SmolLM2's tokenizer; the template and the question are the same for every subset), against calling every
tool of the library (All-Tools), mean over the settings.
"""),
    ("code", """
tok = input_tokens_table(results, meta, HEAD)
tok_of = tok.set_index("arm")
glue("tokens_fgpo", 100 * float(tok_of.loc["FGPO", "tokens vs All-Tools"]), display=False)
glue("tokens_grpo", 100 * float(tok_of.loc["GRPO (paper)", "tokens vs All-Tools"]), display=False)
glue("tokens_all", float(tok_of["All-Tools tokens/q"].mean()), display=False)
show(tok, 2)
"""),
    ("md", """
FGPO's subsets put {glue:text}`tokens_fgpo:.0f`% of All-Tools' tool-output tokens in front of the reasoner, GRPO's
{glue:text}`tokens_grpo:.0f`% (All-Tools: {glue:text}`tokens_all:.0f` tokens per question).
"""),
    ("code", """
show(top_subsets(results, meta, HEAD), 2)
"""),
    ("code", """
rates = tool_call_rates(results, meta, HEAD)
grid = list(dict.fromkeys(zip(rates.benchmark, rates.arm)))
fig, axes = plt.subplots(len(grid) // 2, 2, figsize=(10, 2.6 * (len(grid) // 2)), squeeze=False)
for ax, (b, a) in zip(axes.ravel(), grid):
    m = rates[(rates.benchmark == b) & (rates.arm == a)].pivot(index="task", columns="tool", values="rate")
    sns.heatmap(100 * m, annot=True, fmt=".0f", vmin=0, vmax=100, cmap="Blues", ax=ax, cbar_kws={"label": "calls (%)"}, annot_kws={"fontsize": 6})
    ax.set(title=f"{b}: {a}", xlabel="tool", ylabel="task")
    ax.tick_params(labelsize=6)
fig.tight_layout()
glue_figure("fig_proto_tools", fig)
"""),
    ("md", """
```{glue:figure} fig_proto_tools
:name: fig-proto-tools

Each tool's call rate per task (% of questions and seeds), pooled over the reasoners of each benchmark.
```

## Reasoner strength

What a stronger frozen reasoner changes, on the {glue:text}`proto_head_library` library: the oracle's headroom over
the best single fixed subset, the share of questions no subset choice can change, and FGPO - GRPO (paper), against the
reasoner's size (the readers have none and are left out of the plot).
"""),
    ("code", """
strength = reasoner_strength_frame(results, meta, HEAD)
llm = strength.dropna(subset=["params (M)"])
fig, axes = plt.subplots(1, 3, figsize=(12, 3.6))
for ax, col, label in zip(axes, ("oracle headroom", "constant share", "FGPO - GRPO"), ("oracle - best fixed subset (points)", "questions scored alike by every subset (%)", "FGPO - GRPO (paper) (points)")):
    sns.lineplot(data=llm, x="params (M)", y=col, hue="benchmark", marker="o", ax=ax)
    ax.set(xscale="log", xlabel="reasoner parameters (millions, log scale)", ylabel=label)
    sizes = sorted(llm["params (M)"].unique())
    ax.set_xticks(sizes, [f"{p:,.0f}M" for p in sizes])  # one tick per model, its size
    ax.minorticks_off()
    if ax.get_legend_handles_labels()[0]:  # a study without LLM settings has nothing to plot here
        ax.legend(fontsize=7)
axes[2].axhline(0, color="grey", lw=1)
fig.tight_layout()
glue_figure("fig_proto_strength", fig)
show(strength.drop(columns=["benchmark"]), 1)
"""),
    ("md", """
```{glue:figure} fig_proto_strength
:name: fig-proto-strength

Oracle headroom, constant-reward share and FGPO - GRPO against the size of the frozen LLM reasoner.
```

## Accuracy against reasoner calls
"""),
    ("code", """
rows = [{"setting": s, "arm": a, "score": 100 * float(np.nanmean(r.scores)), "calls": float(r.calls.mean())}
        for s, arms_ in head.items() for a, r in arms_.items() if not r.pending and a != "Oracle"]
df = pd.DataFrame(rows)
fig, ax = plt.subplots(figsize=(7, 4))
sns.scatterplot(data=df, x="calls", y="score", hue="arm", style="arm", ax=ax)
ax.set(xscale="log", xlabel="reasoner calls per training fold (log scale)", ylabel="test score (points)", title="Accuracy against reasoner calls, every setting")
ax.legend(fontsize=6, ncol=2, loc="lower right")
fig.tight_layout()
glue_figure("fig_proto_budget", fig)
"""),
    ("md", """
```{glue:figure} fig_proto_budget
:name: fig-proto-budget

Each arm's mean test score against the reasoner calls it needed, one point per setting; each setting's page has its
own plot.
```

## The 8-tool library

The same protocol on the 163-subset tables (subsets of at most 4 of the 8 tools).
"""),
    ("code", """
if "8 tools" in results:
    mt8 = main_table(results["8 tools"])
    show(mt8[["setting", "questions", *split_arms(mt8)[0]]])
    p8 = paired_comparison(results["8 tools"], "FGPO", "GRPO (paper)")
    glue("proto8_mean_diff", float(p8["FGPO - GRPO (paper)"].mean()), display=False)
    glue("proto8_n_pos", int((p8["lo"] > 0).sum()), display=False)
    glue("proto8_n", len(p8), display=False)
    show(p8, 2)
else:
    for key in ("proto8_mean_diff", "proto8_n_pos", "proto8_n"):
        glue(key, float("nan"), display=False)
"""),
    ("md", """
On the 8-tool library FGPO - GRPO averages {glue:text}`proto8_mean_diff:+.2f` points over
{glue:text}`proto8_n` settings; its interval excludes zero in FGPO's favour in {glue:text}`proto8_n_pos`.
"""),
]


SCALING = [
    ("md", """
# Beyond enumeration: 8 to 20 tools

The paper leaves one question open: past 10-15 tools, enumerating every subset stops paying. Can partial enumeration
plus sampling keep FGPO's advantage? This chapter answers it on libraries of 8, 12, 16 and 20 real tools (the 8 of
the study plus twelve more: Biopython analyses and views of the recorded NCBI data, several of them distractors for
most questions), subsets of at most 4 tools. Each estimator of `fgpo_lib/scaling.py` trains for the same updates on
the same batches; its cost is the number of distinct reasoner calls it made (a cached cell is never paid twice), its
accuracy the raw score of its greedy subset on the table's test questions.

The runs are committed records (`records/scaling/`, made by `python -m fgpo_lib.scaling`, with the tables' content
hashes and the code version); `tests/test_scaling.py` re-runs one of their points live and checks it matches.
"""),
    ("code", """
runs_dir = "../../records/scaling"   # the committed scaling runs
llm_runs_dir = "../../records/scaling_llm"   # the committed on-demand LLM runs
""", "parameters"),
    ("code", """
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from myst_nb import glue

from fgpo_lib.scaling import MARGIN, SAMPLED, answer, final_points, load_runs, pareto_front
from fgpo_lib.study.book import glue_figure, show
from fgpo_lib.subsets import BYTES_PER_CELL, count_subsets, format_bytes

curves, finals, prov = load_runs(runs_dir)
REF = "FGPO (all subsets)"
runs = pd.DataFrame([{"setting": name, "questions": p["tables"]["20"]["n_questions"], "test questions": int(finals[(finals.setting == name) & (finals.tools == 20) & (finals.estimator == REF) & (finals.seed == 0)].shape[0]),
                      "tools": ", ".join(p["tables"].keys()), "seeds": len(p["schedule"]["seeds"]), "updates": p["schedule"]["steps"], "batch": p["schedule"]["batch"],
                      "reward": p["schedule"]["reward"], "code": p["code_version"]} for name, p in prov.items()])
glue("scal_n_settings", len(prov), display=False)
glue("scal_updates", int(runs.updates.iloc[0]), display=False)
show(runs)
"""),
    ("md", """
## What full enumeration costs

Subsets, the memory of a reward table and its precompute time grow with the library size N and the size cap k. The
precompute time below is cells x seconds per call for the 2,002 training questions of the paper, at a few per-call
costs (a reader takes milliseconds, the small LLMs of this study about a second on this machine's CPU, a served 7B
model some seconds); the measured rates are in `benchmarks/bench_precompute.py`.
"""),
    ("code", """
Q = 2002
cost = pd.DataFrame([{"tools N": n, "cap k": k, "subsets": count_subsets(n, k), "table memory": format_bytes(count_subsets(n, k) * Q * BYTES_PER_CELL),
                      **{f"precompute at {s:g} s/call (h)": count_subsets(n, k) * Q * s / 3600 for s in (0.001, 1.0, 5.0)}}
                     for n in (8, 12, 16, 20) for k in (2, 3, 4)])
show(cost, 1)
"""),
    ("md", """
## Accuracy against reasoner calls

One panel per library size and setting: each estimator's final test score (mean over seeds) against the distinct
reasoner calls it made, on a log scale; the line is the Pareto front (no other estimator is both cheaper and more
accurate).
"""),
    ("code", """
fp = pd.concat([final_points(curves[curves.setting == s]).assign(setting=s) for s in prov], ignore_index=True)
settings = list(prov)
fig, axes = plt.subplots(len(settings), 4, figsize=(15, 3.3 * len(settings)), squeeze=False, sharey="row")
palette = dict(zip(fp.estimator.unique(), sns.color_palette("tab20", fp.estimator.nunique())))
for i, s in enumerate(settings):
    for j, n in enumerate((8, 12, 16, 20)):
        ax, d = axes[i, j], fp[(fp.setting == s) & (fp.tools == n)]
        sns.scatterplot(data=d, x="distinct calls", y="test score", hue="estimator", palette=palette, s=45, ax=ax, legend=(i == 0 and j == 3))
        front = pareto_front(d)
        ax.plot(front["distinct calls"], front["test score"], color="black", lw=1)
        ax.set(xscale="log", title=f"{s}, N = {n}", xlabel="distinct reasoner calls (log scale)", ylabel="test score (points)")
if axes[0, 3].get_legend():
    sns.move_legend(axes[0, 3], "upper left", bbox_to_anchor=(1.02, 1), fontsize=7)
fig.tight_layout()
glue_figure("fig_scaling_pareto", fig)
"""),
    ("md", """
```{glue:figure} fig_scaling_pareto
:name: fig-scaling-pareto

Final test score against distinct reasoner calls for every estimator, per setting and library size; black: the
Pareto front.
```

## Dead groups against training step

The share of training groups whose G = 8 rewards were all equal, for each sampled estimator, mean over the settings
and seeds, per library size.
"""),
    ("code", """
dead = curves[curves.estimator.isin(SAMPLED) & curves["dead groups"].notna()]
fig, axes = plt.subplots(1, 4, figsize=(15, 3.4), sharey=True)
for ax, n in zip(axes, (8, 12, 16, 20)):
    d = dead[dead.tools == n]
    sns.lineplot(data=d.assign(rate=100 * d["dead groups"]), x="step", y="rate", hue="estimator", errorbar=None, ax=ax, legend=(n == 20))
    ax.set(title=f"N = {n}", xlabel="update", ylabel="dead groups (% of training groups)")
if axes[3].get_legend():
    sns.move_legend(axes[3], "upper left", bbox_to_anchor=(1.02, 1), fontsize=7)
fig.tight_layout()
glue_figure("fig_scaling_dead", fig)
glue("scal_dead_grpo_20", float(100 * dead[(dead.tools == 20) & (dead.estimator == "GRPO")]["dead groups"].mean()), display=False)
glue("scal_dead_grpo_8", float(100 * dead[(dead.tools == 8) & (dead.estimator == "GRPO")]["dead groups"].mean()), display=False)
"""),
    ("md", """
```{glue:figure} fig_scaling_dead
:name: fig-scaling-dead

Dead-group rate against the update, per library size, for the estimators that sample groups.
```

GRPO's groups are dead {glue:text}`scal_dead_grpo_8:.1f`% of the time with 8 tools and
{glue:text}`scal_dead_grpo_20:.1f`% with 20 (mean over training).

## The answer

Each estimator against full FGPO, paired by question (seeds averaged; 95% bootstrap interval), with the calls it made
as a share of full FGPO's. An estimator **matches** full FGPO in a setting when its mean paired difference is at
least -{glue:text}`scal_margin:.0f` points (the test splits hold a few dozen questions, too few for an interval to
decide it: the intervals are shown, and how many settings put an estimator significantly below full FGPO).
"""),
    ("code", """
summary, win = answer(curves, finals)
glue("scal_margin", MARGIN, display=False)
show(summary, 3)
"""),
    ("code", """
# per library size: the cheapest estimator that matches full FGPO in every setting
for _, r in win.iterrows():
    glue(f"scal_win_{r.tools}", r["cheapest that matches everywhere"], display=False)
    glue(f"scal_win_ratio_{r.tools}", 100 * r["its calls vs full FGPO"], display=False)
g = summary[summary.estimator == "GRPO"].set_index("tools")
glue("scal_grpo_20", float(g.loc[20, "mean vs full FGPO"]), display=False)
glue("scal_grpo_20_match", int(g.loc[20, "settings matched"]), display=False)
show(win, 3)
"""),
    ("md", """
With 20 tools (6,196 subsets), the cheapest estimator that matches full FGPO in all {glue:text}`scal_n_settings`
settings is **{glue:text}`scal_win_20`**, at {glue:text}`scal_win_ratio_20:.1f`% of full FGPO's reasoner calls; with 16
tools {glue:text}`scal_win_16` ({glue:text}`scal_win_ratio_16:.1f`%), with 12 {glue:text}`scal_win_12`
({glue:text}`scal_win_ratio_12:.1f`%), with 8 {glue:text}`scal_win_8` ({glue:text}`scal_win_ratio_8:.1f`%). GRPO is
{glue:text}`scal_grpo_20:+.2f` points from full FGPO at 20 tools and matches it in {glue:text}`scal_grpo_20_match` of
the settings. Since every estimator here is ranked by its calls, the ranking holds whatever one call costs; what the
cost per call decides is whether full FGPO is affordable at all (the cost table above): with a reader, always; with an
LLM at a second per call, a 20-tool table of 2,002 questions takes months of CPU (the cost table), and a partial estimator is the only way.

These are reader tables: their rewards are deterministic parsers' and retrievers' scores, easier than an LLM's. The
next section puts an LLM in their place.

## An LLM reasoner, on demand

A 20-tool table of an LLM is what this chapter says not to build. So here the estimators that sample train on the
20-tool library with every reward an LLM call made when first drawn, through the precompute engine's cell cache
(`fgpo_lib/ondemand.py`, `python -m fgpo_lib.ondemand`): each pays for exactly the cells it draws. The same questions
at 8 tools read the committed 163-subset table, where full FGPO is the reference. The schedule is shorter than the
reader runs' (fewer, smaller updates: the calls are CPU-minutes, not milliseconds), and a test split of this size only
shows large effects. The runs share one cell cache, in the order of the table: a run pays in wall time only for the
cells no earlier run drew, so a run that follows the same seed as an earlier one through the same subsets costs
almost nothing (the 8-tool runs read the committed table and have no wall time). The records (`records/scaling_llm/`)
commit every cell the runs touched, with the model, prompt and tools hashes; `tests/test_ondemand.py` re-derives some of those cells live with the LLM and re-runs an 8-tool
point from the committed table.
"""),
    ("code", """
from fgpo_lib.ondemand import load_on_demand

llm_curves, llm_finals, llm_prov = load_on_demand(llm_runs_dir)
llm_fp = pd.concat([final_points(llm_curves[llm_curves.setting == s]).assign(setting=s) for s in llm_prov], ignore_index=True)
last = llm_curves[llm_curves.step == llm_curves.groupby(["setting", "tools", "estimator", "seed"]).step.transform("max")]
llm_fp = llm_fp.merge(last.groupby(["setting", "tools", "estimator"])[["eval calls", "seconds"]].mean().reset_index(), how="left")
s0, p0 = next(iter(llm_prov.items()))
big = max(int(k) for k in p0["tables"])
glue("llm_setting", s0, display=False)
glue("llm_tools", big, display=False)
glue("llm_questions", int(p0["questions"]), display=False)
glue("llm_updates", int(p0["schedule"]["steps"]), display=False)
glue("llm_batch", int(p0["schedule"]["batch"]), display=False)
show(llm_fp[["setting", "tools", "subsets", "estimator", "distinct calls", "eval calls", "seconds", "test score"]].rename(columns={"seconds": "wall seconds (new cells)"}), 1)
"""),
    ("code", """
fig, axes = plt.subplots(1, 2, figsize=(12, 3.8), sharey=True)
for ax, n in zip(axes, (8, big)):
    d = llm_fp[llm_fp.tools == n]
    sns.scatterplot(data=d, x="distinct calls", y="test score", hue="estimator", palette=palette, s=55, ax=ax, legend=(n == big))
    front = pareto_front(d)
    ax.plot(front["distinct calls"], front["test score"], color="black", lw=1)
    ax.set(xscale="log", title=f"{s0}, N = {n}", xlabel="distinct reasoner calls (log scale)", ylabel="test score (points)")
if axes[1].get_legend():
    sns.move_legend(axes[1], "upper left", bbox_to_anchor=(1.02, 1), fontsize=7)
fig.tight_layout()
glue_figure("fig_llm_pareto", fig)
d20, d8 = llm_fp[llm_fp.tools == big].set_index("estimator"), llm_fp[llm_fp.tools == 8].set_index("estimator")
best = d20["test score"].idxmax()
glue("llm_best", best, display=False)
glue("llm_best_score", float(d20.loc[best, "test score"]), display=False)
glue("llm_best_calls", int(d20.loc[best, "distinct calls"]), display=False)
glue("llm_grpo_score", float(d20.loc["GRPO", "test score"]), display=False)
glue("llm_fgpo8_score", float(d8.loc[REF, "test score"]), display=False)
glue("llm_fgpo8_calls", int(d8.loc[REF, "distinct calls"]), display=False)
cells = pd.read_parquet(f"{llm_runs_dir}/{s0}/cells.parquet")  # every cell the runs touched, once
extra = [bool(set(label.split("+")) - set(p0["tables"]["8"]["library"])) for label in cells.subset]
glue("llm_cells_big", len(cells), display=False)
glue("llm_cells_live", int(sum(extra)), display=False)
glue("llm_table_big", int(llm_fp[llm_fp.tools == big].subsets.iloc[0] * p0["questions"]), display=False)
dd = llm_curves[(llm_curves.tools == big) & llm_curves["dead groups"].notna()]
glue("llm_dead_grpo", float(100 * dd[dd.estimator == "GRPO"]["dead groups"].mean()), display=False)
"""),
    ("md", """
```{glue:figure} fig_llm_pareto
:name: fig-llm-pareto

The LLM setting: final test score against distinct reasoner calls at 8 tools (from the committed table) and at the
large library (every cell on demand); black: the Pareto front.
```

On {glue:text}`llm_setting` ({glue:text}`llm_questions` questions, {glue:text}`llm_updates` updates of
{glue:text}`llm_batch` questions), with {glue:text}`llm_tools` tools the best sampled estimator is
**{glue:text}`llm_best`**, at {glue:text}`llm_best_score:.1f` points for {glue:text}`llm_best_calls` distinct calls;
GRPO reaches {glue:text}`llm_grpo_score:.1f`, and its groups are dead {glue:text}`llm_dead_grpo:.1f`% of the time.
Full FGPO on the 8-tool table scores {glue:text}`llm_fgpo8_score:.1f` for {glue:text}`llm_fgpo8_calls` calls. All
the large-library runs together touched {glue:text}`llm_cells_big` distinct cells ({glue:text}`llm_cells_live` of
them hold an extra tool and were made live; the rest came from the 8-tool table), against {glue:text}`llm_table_big`
cells in the full table they did without.
"""),
]


#: (name, cells, hide code) of every notebook; tests/test_notebooks_book.py checks the committed files against these
NOTEBOOKS = (("worked_example", WORKED_EXAMPLE, False), ("environment", ENVIRONMENT, True), ("setting", SETTING, True), ("results", RESULTS, True), ("protocol", PROTOCOL, True), ("scaling", SCALING, True))


def main():
    (ROOT / "notebooks").mkdir(exist_ok=True)
    for name, cells, hide in NOTEBOOKS:
        out = ROOT / "notebooks" / f"{name}.ipynb"
        nbf.write(notebook(cells, hide_code=hide, name=name), out)
        print(f"wrote {out}")


if __name__ == "__main__":
    main()
