"""Scoring for GeneTuring, GeneHop, GeneSeq and GeneRegion, with an answer extractor for free-text reasoner answers.

Two rule sets, by name (:data:`RULES`):

* ``"official"``: GeneGPT's own ``evaluate.py``, reimplemented exactly (:func:`official_score`), for the tasks it
  evaluates (every GeneTuring task and GeneHop's "Disease gene location"). The answer is the text after removing
  ``"Answer: "``; the comparison is **case-sensitive string equality**; "Gene disease association" and "Disease gene
  location" score the share of gold items that are members of the answer split on ``", "``; locations take the
  last word and prefix ``chr``; "Yes"/"No" become TRUE/NA; Latin species names become GeneTuring's words; an
  alignment scores 1 for the exact string, 0.5 for the same text before the first ``:``. It is meant for answers in
  GeneGPT's own format; a free-text sentence mostly scores 0.
* ``"lenient"`` (the default, and what the reward tables use): our extractor (:func:`extract_answer`) turns free text
  into the task's answer form first, then compares after normalisation (case-insensitive, surrounding punctuation
  and spaces removed), with recall over gold genes and loci, and the same alignment rule.

For tasks GeneGPT does not evaluate, both rule sets use ours.

Our own decisions where GeneGPT gives no rule: "SNP gene function" (free text) scores the token F1 between the
prediction and the gold description; GeneSeq scores exact match of the extracted answer, except GC content, which
accepts an absolute error of at most 0.05 percentage points (the gold is rounded to one decimal). GeneRegion is
multiple choice and scores 1 for the gold letter, 0 otherwise, after :func:`extract_choice`.

:func:`extract_answer` turns free text into the answer form of the task first: ``"The official gene symbol of LMP10
is PSMB10."`` -> ``PSMB10``, ``"Answer: Homo sapiens"`` -> ``human``.
"""

from __future__ import annotations

import re
from collections import Counter

from .generegion import FAMILIES, LETTERS, OPTIONS
from .tools import ENZYMES

ANSWER_TYPE = {
    "Gene alias": "symbol",
    "Gene name conversion": "symbol",
    "Gene SNP association": "symbol",
    "Gene location": "chromosome",
    "SNP location": "chromosome",
    "Protein-coding genes": "yesno",
    "Multi-species DNA aligment": "species",
    "Human genome DNA aligment": "alignment",
    "Gene disease association": "gene_list",
    "Disease gene location": "locus_list",
    "SNP gene function": "text",
    "GC content": "number",
    "Sequence length": "integer",
    "Longest ORF": "integer",
    "Translation": "protein",
    "Reverse complement": "dna",
    "Restriction sites": "enzymes",
}

ANSWER_TYPE.update({f.task: "choice" for f in FAMILIES})


def extract_choice(text: str) -> str:
    """The option letter of a multiple-choice answer (GeneRegion's :data:`~fgpo_lib.genomics.generegion.OPTIONS`),
    from the answer part (after the last ``Answer:``, its first non-empty line):

    1. if it contains the text of exactly one option (case-insensitive), that option's letter ("A splice donor"
       is (B): a leading "A" may be an article);
    2. else a letter A-E standing alone at its start, optionally after "option" and in brackets: ``B``, ``(B)``,
       ``B)``, ``B.``, ``Option B: ...``;
    3. else ``''`` (no answer, or two option texts): scored 0.
    """
    part = _answer_part(text)
    low = part.lower()
    named = [letter for letter, option in zip(LETTERS, OPTIONS) if option in low]
    if len(named) == 1:
        return named[0]
    m = re.match(r"\s*(?:option\s*)?[\(\[]?([A-E])(?:[\)\]\.:,]|\s|$)", part, re.I)
    return m.group(1).upper() if m else ""


#: GeneTuring's species words and the names a reasoner or BLAST hit may use for them.
SPECIES = {
    "human": ("homo sapiens", "human"),
    "mouse": ("mus musculus", "mouse"),
    "rat": ("rattus norvegicus", "rat"),
    "zebrafish": ("danio rerio", "zebrafish"),
    "yeast": ("saccharomyces cerevisiae", "yeast"),
    "worm": ("caenorhabditis elegans", "c. elegans", "worm", "nematode"),
    "chicken": ("gallus gallus", "chicken"),
}
_SYMBOL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9\-\.@/]*$")
_CHROM = re.compile(r"\bchr(?:omosome)?\s*([0-9]{1,2}|X|Y|MT|M)\b", re.I)
_LOCUS = re.compile(r"\b(?:[1-9]|1[0-9]|2[0-2]|X|Y)[pq]\d+(?:\.\d+)?(?:-[pq]?\d+(?:\.\d+)?)?\b")
_ALIGN = re.compile(r"\bchr(?:omosome)?\s*([0-9]{1,2}|X|Y)\s*[:,]?\s*(\d[\d,]*)\s*(?:-|to|\.\.)\s*(\d[\d,]*)", re.I)


def normalize(text: str) -> str:
    return re.sub(r"\s+", " ", str(text)).strip().strip(".,;:!?\"'`()[]").strip().lower()


def _answer_part(text: str) -> str:
    """The part of a free-text answer that holds the answer: after the last 'Answer:', first non-empty line."""
    text = str(text or "")
    parts = re.split(r"\banswer\s*[:：]", text, flags=re.I)
    text = parts[-1]
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return ""


def _symbol(text: str) -> str:
    words = text.strip().rstrip(".").split()
    if len(words) == 1:
        return words[0].strip(".,;:()\"'")
    m = re.search(r"\b(?:is|are|symbol:)\s+([A-Za-z0-9][A-Za-z0-9\-\.@/]*[A-Za-z0-9])\W*$", text)
    if m:  # "... is PSMB10." / "symbol: PSMB10"
        return m.group(1)
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9\-\.@/]*[A-Za-z0-9]) is the (?:official )?(?:gene )?symbol\b", text)
    if m:  # "PSMB10 is the official symbol of LMP10."
        return m.group(1)
    cands = [w.strip(".,;:()\"'") for w in words]
    cands = [w for w in cands if _SYMBOL.match(w) and any(c.isupper() or c.isdigit() for c in w)]
    return cands[-1] if cands else text.strip()


def extract_answer(text: str, task: str) -> str:
    """The answer in the task's form (see the module doc); '' when nothing of that form is found."""
    kind = ANSWER_TYPE.get(task, "text")
    if kind == "choice":
        return extract_choice(text)
    part = _answer_part(text)
    if kind == "symbol":
        return _symbol(part)
    if kind == "chromosome":
        m = _CHROM.search(part) or _CHROM.search(str(text))
        if m:
            return f"chr{m.group(1).upper()}"
        m = re.fullmatch(r"\s*([0-9]{1,2}|X|Y)\s*\.?\s*", part)
        return f"chr{m.group(1).upper()}" if m else ""
    if kind == "yesno":
        m = re.search(r"\b(yes|true|no|not|false|na|n/a)\b", part, re.I)
        if m:
            return "TRUE" if m.group(1).lower() in ("yes", "true") else "NA"
        if re.search(r"pseudogene|non[- ]?(?:protein[- ])?coding|ncrna", part, re.I):
            return "NA"  # "X is a pseudogene" / "a non-coding RNA"
        return "TRUE" if re.search(r"\bis an? protein[- ]coding\b", part, re.I) else ""
    if kind == "species":
        low = part.lower()
        hits = [(low.find(name), word) for word, names in SPECIES.items() for name in names if re.search(rf"\b{re.escape(name)}\b", low)]
        return min(hits)[1] if hits else ""
    if kind == "alignment":
        m = _ALIGN.search(part) or _ALIGN.search(str(text))
        if m:
            return f"chr{m.group(1).upper()}:{m.group(2).replace(',', '')}-{m.group(3).replace(',', '')}"
        m = _CHROM.search(part)
        return f"chr{m.group(1).upper()}" if m else ""
    if kind == "gene_list":
        return ", ".join(dict.fromkeys(w for w in re.split(r"[,;\s]+|\band\b", part) if w and _SYMBOL.match(w.strip(".")) and any(c.isupper() or c.isdigit() for c in w)))
    if kind == "locus_list":
        return ", ".join(dict.fromkeys(_LOCUS.findall(part) or _LOCUS.findall(str(text))))
    if kind in ("number", "integer"):
        m = re.search(r"-?\d+(?:\.\d+)?", part)
        return m.group(0) if m else ""
    if kind in ("protein", "dna"):
        alphabet = "ACGT" if kind == "dna" else "ACDEFGHIKLMNPQRSTVWY*"
        runs = re.findall(rf"[{alphabet}]+", part)
        return max(runs, key=len) if runs else ""
    if kind == "enzymes":
        if re.search(r"\b(none|no enzyme|no cuts?)\b", part, re.I):
            return "none"
        return ", ".join(e for e in ENZYMES if re.search(rf"\b{e}\b", part, re.I))
    return part


def _token_f1(pred: str, gold: str) -> float:
    p, g = re.findall(r"\w+", pred.lower()), re.findall(r"\w+", gold.lower())
    common = sum((Counter(p) & Counter(g)).values())
    if not p or not g or not common:
        return 0.0
    precision, recall = common / len(p), common / len(g)
    return 2 * precision * recall / (precision + recall)


def _recall(pred_items: list[str], gold_items: list[str]) -> float:
    pred = {normalize(x) for x in pred_items}
    gold = [normalize(x) for x in gold_items]
    return sum(g in pred for g in gold) / len(gold) if gold else 0.0


def _items(gold) -> list[str]:
    if isinstance(gold, (list, tuple)):
        return [str(g) for g in gold]
    return [x.strip() for x in str(gold).split(",") if x.strip()]


#: the rule sets :func:`score` takes
RULES = ("lenient", "official")
#: the tasks GeneGPT's evaluate.py scores; :func:`official_score` covers exactly these
OFFICIAL_TASKS = frozenset(
    {
        "Gene alias", "Gene name conversion", "Gene SNP association", "Gene location", "SNP location", "Protein-coding genes",
        "Multi-species DNA aligment", "Human genome DNA aligment", "Gene disease association", "Disease gene location",
    }
)
_LATIN = {names[0].capitalize(): word for word, names in SPECIES.items()}  # "Homo sapiens" -> "human"


def _official_answer(prediction: str, task: str):
    """GeneGPT's answer parsing: a string, or a list for the two list tasks."""
    text = str(prediction or "").strip()
    if task in ("SNP location", "Gene location"):
        last = text.split()[-1] if text.split() else ""
        return last if "chr" in last else "chr" + last
    text = text.replace("Answer: ", "")
    if task in ("Gene disease association", "Disease gene location"):
        return text.split(", ")
    if task == "Protein-coding genes":
        return {"Yes": "TRUE", "No": "NA"}.get(text, text)
    if task == "Multi-species DNA aligment":
        return _LATIN.get(text, text)
    return text


def official_score(task: str, prediction: str, gold) -> float:
    """GeneGPT's ``evaluate.py`` rule for ``task`` (module doc): case-sensitive, no answer extraction."""
    if task not in OFFICIAL_TASKS:
        raise ValueError(f"GeneGPT has no official rule for task {task!r}")
    pred = _official_answer(prediction, task)
    if task in ("Gene disease association", "Disease gene location"):
        items = _items(gold)
        return sum(item in pred for item in items) / len(items) if items else 0.0
    if task == "Human genome DNA aligment":
        if pred == str(gold):
            return 1.0
        return 0.5 if pred.split(":")[0] == str(gold).split(":")[0] else 0.0
    return float(pred == str(gold))


def score(task: str, prediction: str, gold, rules: str = "lenient") -> float:
    """Score of one free-text ``prediction`` against ``gold`` under ``task``'s rule, in [0, 1].

    ``rules``: ``"lenient"`` (our extractor) or ``"official"`` (GeneGPT's evaluate.py where it has a rule).
    """
    if rules not in RULES:
        raise ValueError(f"unknown rules {rules!r}; use one of {', '.join(RULES)}")
    if rules == "official" and task in OFFICIAL_TASKS:
        return official_score(task, prediction, gold)
    kind = ANSWER_TYPE.get(task, "text")
    ans = extract_answer(prediction, task)
    if kind == "text":
        return _token_f1(_answer_part(prediction), str(gold))
    if kind in ("gene_list", "locus_list"):
        return _recall(_items(ans), _items(gold))
    if kind == "alignment":
        if normalize(ans) == normalize(gold):
            return 1.0
        return 0.5 if ans and ans.split(":")[0].lower() == str(gold).split(":")[0].lower() else 0.0
    if kind == "number":
        try:
            return float(abs(float(ans) - float(gold)) <= 0.05 + 1e-9)
        except ValueError:
            return 0.0
    if kind == "enzymes":
        return float({normalize(x) for x in _items(ans)} == {normalize(x) for x in _items(gold)})
    return float(normalize(ans) == normalize(str(gold)))


def score_predictions(questions, predictions: dict[str, str], rules: str = "lenient") -> "pd.DataFrame":
    """Per-task and overall mean scores under ``rules``. ``predictions``: question text (or qid) -> prediction.

    Questions without a prediction score 0 and are counted in ``missing``. Returns columns task, questions, missing,
    score (mean over the task's questions); the last row, ``all``, is the mean over every question.
    """
    import pandas as pd

    rows = []
    for q in questions:
        pred = predictions.get(q.qid, predictions.get(q.text))
        rows.append({"task": q.task, "missing": pred is None, "score": 0.0 if pred is None else score(q.task, pred, q.answer, rules)})
    df = pd.DataFrame(rows)
    out = df.groupby("task", sort=False).agg(questions=("score", "size"), missing=("missing", "sum"), score=("score", "mean")).reset_index()
    total = pd.DataFrame([{"task": "all", "questions": len(df), "missing": int(df["missing"].sum()), "score": df["score"].mean()}])
    return pd.concat([out, total], ignore_index=True)
