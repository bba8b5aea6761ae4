"""The language-model policy's core on a tiny, randomly initialised transformers model built here (no weights):
shared-prompt candidate scoring equals the naive computation, q sums to 1, the FGPO loss's gradient matches a hand
computation, and the prompt's candidates and parser agree with the subset space."""

import math

import pytest
import torch

from fgpo_lib.lm_policy.prompt import build_prompt, candidate, candidates, parse_answer
from fgpo_lib.lm_policy.candidate_scores import candidate_scores, expected_reward_loss, format_anchor, naive_candidate_scores
from fgpo_lib.subsets import SubsetSpace


@pytest.fixture(scope="module")
def tiny_model():
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=256)
    return LlamaForCausalLM(cfg).float().eval()


CANDS = [[5], [7, 8], [9, 10, 11, 12], [13, 3], [21, 22, 23, 24, 25, 26]]


@pytest.mark.parametrize("length_norm", [True, False])
def test_shared_prompt_scoring_equals_the_naive_computation(tiny_model, length_norm):
    prompt = torch.arange(1, 30) % 60 + 2
    fast = candidate_scores(tiny_model, prompt, CANDS, length_norm)
    slow = naive_candidate_scores(tiny_model, prompt, CANDS, length_norm)
    assert fast.shape == (len(CANDS),)
    assert torch.allclose(fast, slow, atol=1e-5), (fast, slow)
    q = torch.softmax(fast, -1)
    assert abs(float(q.sum().detach()) - 1) < 1e-6


def test_the_gradient_through_the_shared_prompt_is_the_naive_gradient(tiny_model):
    prompt = torch.arange(3, 20)
    rewards = torch.tensor([1.0, 0.0, 0.5, 0.0, 1.0])
    grads = []
    for fn in (candidate_scores, naive_candidate_scores):
        tiny_model.zero_grad()
        expected_reward_loss(fn(tiny_model, prompt, CANDS), rewards, entropy_coef=0.03).backward()
        grads.append(torch.cat([p.grad.reshape(-1) for p in tiny_model.parameters() if p.grad is not None]))
    assert torch.allclose(grads[0], grads[1], atol=1e-5)


def test_fgpo_loss_gradient_on_two_candidates_by_hand():
    # z = (0, log 3): q = (1/4, 3/4); r = (1, 0); J = 1/4; H = -(1/4 log 1/4 + 3/4 log 3/4).
    # dJ/dz_a = q_a (r_a - J): (3/16, -3/16). dH/dz_a = -q_a (log q_a + H).
    z = torch.tensor([0.0, math.log(3.0)], requires_grad=True)
    beta = 0.1
    expected_reward_loss(z, torch.tensor([1.0, 0.0]), beta).backward()
    q = [0.25, 0.75]
    h = -sum(p * math.log(p) for p in q)
    dj = [q[0] * (1 - 0.25), q[1] * (0 - 0.25)]
    dh = [-p * (math.log(p) + h) for p in q]
    expected = torch.tensor([-(dj[i] + beta * dh[i]) for i in range(2)])
    assert torch.allclose(z.grad, expected, atol=1e-7)


@pytest.mark.parametrize("length_norm", [True, False])
def test_under_the_mean_the_shared_tag_gets_a_gradient_by_hand(length_norm):
    """Why FGPO with Eq. 4 can unlearn the answer tag. Two candidates share an opening tag of log-probability T and
    have bodies b = (0, -1) of lengths L = (2, 4) tokens in all. Under the per-token mean, s_a = (T + b_a) / L_a and
    dJ/dT = sum_a r_a q_a (1/L_a - sum_b q_b / L_b) = Cov_q(r, 1/L): with r = (0, 1) (the longer candidate is the
    better), it is negative, so gradient ascent on J lowers T. Under the sum, s_a = T + b_a and T cancels in q."""
    t = torch.tensor(-1.0, requires_grad=True)
    body, length, r = torch.tensor([0.0, -1.0]), torch.tensor([2.0, 4.0]), torch.tensor([0.0, 1.0])
    scores = (t + body) / length if length_norm else t + body
    (-expected_reward_loss(scores, r, entropy_coef=0.0)).backward()  # J = -loss when entropy_coef = 0
    if length_norm:
        s = [(-1 + 0) / 2, (-1 - 1) / 4]  # (-0.5, -0.5): q = (1/2, 1/2)
        q = [math.exp(x) / sum(math.exp(y) for y in s) for x in s]
        mean_inv = q[0] / 2 + q[1] / 4
        expected = 0 * q[0] * (1 / 2 - mean_inv) + 1 * q[1] * (1 / 4 - mean_inv)  # = 0.5 * (0.25 - 0.375) = -1/16
        assert expected == pytest.approx(-1 / 16)
    else:
        expected = 0.0
    assert float(t.grad) == pytest.approx(expected, abs=1e-7)


def test_the_format_anchor_is_q_weighted_log_probability_by_hand():
    """Two candidates with scores (0, log 3), so q = (0.25, 0.75), and sequence probabilities 0.2 and 0.3: the anchor
    is 0.25 log 0.2 + 0.75 log 0.3; its gradient on the sequence log-probabilities is q, and none reaches the scores
    (q is held fixed)."""
    z = torch.tensor([math.log(0.2), math.log(0.3)], requires_grad=True)
    scores = torch.tensor([0.0, math.log(3.0)], requires_grad=True)
    a = format_anchor(z, scores)
    a.backward()
    assert float(a) == pytest.approx(0.25 * math.log(0.2) + 0.75 * math.log(0.3))
    assert torch.allclose(z.grad, torch.tensor([0.25, 0.75]), atol=1e-6)
    assert scores.grad is None or float(scores.grad.abs().sum()) == 0.0


def test_candidates_and_parser_cover_the_space():
    space = SubsetSpace(4, tool_names=("composition", "motif_scan", "splice_scan", "knn"))
    texts = candidates(space)
    assert len(texts) == 16 and texts[0] == "<answer></answer>" and texts[-1] == "<answer>0,1,2,3</answer>"
    assert [parse_answer(t, space) for t in texts] == list(range(16))
    assert parse_answer("I think <answer> 2, 0 </answer> works", space) == space.index_of([0, 2])
    for bad in ("tools 0 and 2", "<answer>0,0</answer>", "<answer>4</answer>", "<answer>a</answer>", ""):
        assert parse_answer(bad, space) is None
    assert candidate([3, 1]) == "<answer>1,3</answer>"
    prompt = build_prompt("Which kind of region is this sequence? ACGT", 4)
    assert "3: tool type 4 (D)" in prompt and "knn" not in prompt


def test_trl_zero_std_check_finds_the_dead_groups_trl_counts_live():
    """Six equal rewards of 0.525 (0.95 x 0.5 + 0.05): float32 rounds their mean, so TRL's std is a few 1e-8, above
    ``torch.isclose``'s 1e-8, and ``frac_reward_zero_std`` calls the dead group live; 0 and 1 are exact in float32."""
    from fgpo_lib.study.lm_report import trl_zero_std_check

    f = trl_zero_std_check([1.0, 0.525, 0.0, 0.525]).set_index("reward")
    assert list(f.index) == [0.0, 0.525, 1.0]
    assert f.loc[0.0, "counted dead by TRL"] and f.loc[1.0, "counted dead by TRL"]
    assert f.loc[0.0, "TRL's std of equal rewards"] == 0.0
    assert not f.loc[0.525, "counted dead by TRL"] and 1e-8 < f.loc[0.525, "TRL's std of equal rewards"] < 1e-6


def test_cpu_hours_weigh_each_run_by_its_threads_by_hand():
    """A one-thread run of 1,800 + 5,400 s and a two-thread run of 900 + 2,700 s: 2 + 2 x 1 = 4 CPU-hours; a record
    without ``torch_threads`` (made before it was recorded) counts one thread."""
    from fgpo_lib.study.lm_report import cost_frame, cpu_hours
    from fgpo_lib.study.lm_runs import LMRun

    def record(warm: float, train: float, backbone: dict) -> dict:
        return {"format_warmup": {"seconds": warm, "config": {"epochs": 1.0}}, "config": {"lr": 3e-4}, "reasoner_calls": 0,
                "train_seconds": train, "selected_step": 0, "splits": {"train": []}, "backbone": backbone}

    runs = {"old": (LMRun("geneseq", "fgpo"), record(1800.0, 5400.0, {})),
            "new": (LMRun("geneseq", "sft"), record(900.0, 2700.0, {"torch_threads": 2}))}
    cost = cost_frame(runs)
    assert list(cost["threads"]) == [1, 2]
    assert list(cost["CPU-hours"]) == pytest.approx([2.0, 2.0])
    assert cpu_hours(cost) == pytest.approx(4.0)


def test_main_records_keep_grpo_at_the_rate_its_seed_0_chose_on_dev_by_hand():
    """GRPO on one benchmark at two rates, two seeds each: seed 0's best dev scores (after step 0) are 0.4 at 3e-4 and
    0.35 at 1e-4, so 3e-4 is kept, though the means over seeds (0.3 against 0.4) would pick 1e-4; with FGPO's and
    SFT's main runs, no run of another role, and a benchmark with one rate keeping it. Without a seed-0 GRPO run, a
    benchmark keeps no GRPO run."""
    from fgpo_lib.study.lm_runs import LMRun
    from fgpo_lib.study.lm_report import main_records

    def rec(lr, *dev):
        return {"config": {"lr": lr}, "curve": [{"step": 0, "dev_score": 0.9}, *({"step": i + 1, "dev_score": d} for i, d in enumerate(dev))]}

    records = {
        "g0": (LMRun("geneseq", "grpo", seed=0), rec(3e-4, 0.1, 0.4)), "g1": (LMRun("geneseq", "grpo", seed=1), rec(3e-4, 0.2)),
        "h0": (LMRun("geneseq", "grpo", {"lr": 1e-4}, seed=0), rec(1e-4, 0.35)), "h1": (LMRun("geneseq", "grpo", {"lr": 1e-4}, seed=1), rec(1e-4, 0.45, 0.1)),
        "f": (LMRun("geneseq", "fgpo"), rec(3e-4, 0.1)), "s": (LMRun("geneseq", "sft"), rec(3e-4, 0.1)),
        "old": (LMRun("geneseq", "fgpo", role="first-design"), rec(3e-4, 0.9)), "t": (LMRun("geneturing", "grpo"), rec(3e-4, 0.1)),
        "u1": (LMRun("generegion", "grpo", seed=1), rec(3e-4, 0.5)),
    }
    assert sorted(main_records(records)) == ["f", "g0", "g1", "s", "t"]


def test_every_committed_record_re_derives_from_its_table():
    """Each record in ``records/lm_policy/`` names the committed table it trained on by content hash, its splits are
    the fixed split that :func:`lm_splits` draws from that table today, and its test choices, re-scored on the table
    (``fgpo lm-eval``'s path), give the scores it recorded under both decodings."""
    import numpy as np

    from fgpo_lib.lm_policy.data import lm_splits
    from fgpo_lib.study.lm_report import load_records
    from fgpo_lib.lm_policy.runner import DECODINGS, rescore
    from fgpo_lib.study.lm_runs import MAX_TRAIN, ROOT
    from fgpo_lib.table import RewardTable

    records = load_records()
    assert records, "no committed language-model record"
    for name, (run, rec) in records.items():
        assert rec["table"]["path"] == run.table, name
        table = RewardTable.load(ROOT / run.table)
        assert rec["table"]["content_hash"] == table.content_hash(), name
        splits = lm_splits(table, max_train=MAX_TRAIN, seed=0)
        assert {k: [table.question_ids[r] for r in v] for k, v in splits.items()} == rec["splits"], name
        again = rescore(rec, table)
        for decoding in DECODINGS:
            assert again[decoding]["question_ids"] == rec["test"]["question_ids"], name
            np.testing.assert_allclose(again[decoding]["scores"], rec["test"][decoding]["scores"], err_msg=name)


def _two_arms(fgpo_runs, sft_runs):
    from fgpo_lib.study.lm_runs import LMRun

    def rec(scores):
        return {"test": {"question_ids": ["a", "b"], "scoring": {"scores": scores}}}

    return {f"{arm}{s}": (LMRun("geneseq", arm, seed=s), rec(sc)) for arm, runs in (("fgpo", fgpo_runs), ("sft", sft_runs)) for s, sc in enumerate(runs)}


def test_seed_aggregates_by_hand():
    """rliable's IQM and probability of improvement on two tiny arms: FGPO's runs [[1, 0], [1, 1]] and SFT's
    [[0, 0], [1, 0]] on two questions, each its own task. P(FGPO > SFT): task 1 compares {1, 1} with {0, 1}, 3 of 4
    pairs (a tie counts a half); task 2 compares {0, 1} with {0, 0}, 3 of 4; mean 0.75. IQM (25% cut from each end of
    the four scores): FGPO's middle two of 0, 1, 1, 1 are 1 and 1, SFT's of 0, 0, 0, 1 are 0 and 0.

    With both questions one task, a run's score is its mean on them: FGPO's seeds 0.5 and 1.0, SFT's 0.0 and 0.5.
    IQM of two values (no whole value is 25% of two): their mean, 75 and 25. P(FGPO > SFT): 0.5 > 0, 0.5 = 0.5 (a
    half), 1 > 0, 1 > 0.5: 3.5 of 4."""
    from fgpo_lib.study.lm_report import seed_aggregates

    records = _two_arms([[1, 0], [1, 1]], [[0, 0], [1, 0]])
    agg = seed_aggregates(records, reps=200, tasks={"a": "t1", "b": "t2"}).set_index("arm")
    assert agg.loc["FGPO", "IQM"] == pytest.approx(100.0) and agg.loc["SFT (TRL)", "IQM"] == pytest.approx(0.0)
    assert agg.loc["SFT (TRL)", "P(FGPO > arm)"] == pytest.approx(0.75)
    assert agg.loc["FGPO", "seeds"] == 2 and agg.loc["FGPO", "questions"] == 2 and agg.loc["FGPO", "tasks"] == 2
    one = seed_aggregates(records, reps=200, tasks={"a": "t", "b": "t"}).set_index("arm")
    assert one.loc["FGPO", "IQM"] == pytest.approx(75.0) and one.loc["SFT (TRL)", "IQM"] == pytest.approx(25.0)
    assert one.loc["SFT (TRL)", "P(FGPO > arm)"] == pytest.approx(0.875) and one.loc["FGPO", "tasks"] == 1
    # one seed per arm: nothing to aggregate over seeds, and nothing is computed
    assert seed_aggregates(_two_arms([[1, 0]], [[0, 0]]), reps=200, tasks={"a": "t", "b": "t"}).empty


def test_seed_aggregates_are_seeded_and_the_remembered_statistic_is_rliables():
    """Two calls give the same intervals whatever numpy's global state (rliable 1.2 draws its resamples from it
    whatever ``random_state`` it is given), and the probability of improvement computed per task column and
    remembered gives rliable's own statistic's interval to the last digit on the same draws."""
    import numpy as np
    from rliable import library as rly
    from rliable import metrics

    from fgpo_lib.study.lm_report import _numpy_global_seed, _poi_by_task_column, seed_aggregates
    from fgpo_lib.study.lm_runs import LMRun

    rng = np.random.default_rng(3)
    qs = [f"q{i}" for i in range(12)]
    fgpo, sft = rng.integers(0, 2, (3, 12)).tolist(), rng.integers(0, 2, (3, 12)).tolist()
    records = {f"{arm}{s}": (LMRun("geneseq", arm, seed=s), {"test": {"question_ids": qs, "scoring": {"scores": sc}}})
               for arm, runs in (("fgpo", fgpo), ("sft", sft)) for s, sc in enumerate(runs)}
    tasks = {q: f"t{i % 4}" for i, q in enumerate(qs)}
    np.random.seed(1)
    first = seed_aggregates(records, reps=300, tasks=tasks)
    np.random.seed(2)
    assert first.equals(seed_aggregates(records, reps=300, tasks=tasks))
    x, y = (np.array([[np.mean([r[i] for i in range(12) if i % 4 == t]) for t in range(4)] for r in runs]) for runs in (fgpo, sft))
    with _numpy_global_seed(0):
        rliables = rly.get_interval_estimates({"p": (x, y)}, lambda a, b: np.array([metrics.probability_of_improvement(a, b)]), reps=300)
    with _numpy_global_seed(0):
        remembered = rly.get_interval_estimates({"p": (x, y)}, _poi_by_task_column(), reps=300)
    assert rliables[0]["p"][0] == remembered[0]["p"][0] and (rliables[1]["p"] == remembered[1]["p"]).all()
    assert rliables[1]["p"][0][0] < rliables[1]["p"][1][0]  # an interval, not a point: the comparison has content


def test_the_routing_rule_on_a_committed_table():
    """A record whose test choices are each question's best subset routes (several subsets, none on 90%, above the
    best fixed subset); one that picks that fixed subset everywhere does not. The summary counts the arm's main runs
    alone: of FGPO's two main seeds one routes (the first design's run is not counted)."""
    import numpy as np

    from fgpo_lib.lm_policy.data import lm_splits
    from fgpo_lib.study.lm_runs import MAX_TRAIN, ROOT, LMRun
    from fgpo_lib.study.lm_routing import best_fixed_score, routes, routes_by_benchmark, routes_summary
    from fgpo_lib.table import RewardTable

    run = LMRun("geneseq", "fgpo")
    table = RewardTable.load(ROOT / run.table)
    splits = {k: [table.question_ids[r] for r in v] for k, v in lm_splits(table, max_train=MAX_TRAIN).items()}
    te = np.array([table.question_ids.index(q) for q in splits["test"]])
    fit = np.array([table.question_ids.index(q) for q in splits["train"] + splits["dev"]])
    best = int(table.rewards[fit].mean(0).argmax())

    def record(choices):
        return {"splits": splits, "test": {"question_ids": splits["test"], "scoring": {"choices": [int(c) for c in choices],
                                                                                        "scores": table.rewards[te, choices].tolist()}}}
    oracle = table.rewards[te].argmax(1)
    assert best_fixed_score(run, record(oracle)) == pytest.approx(100 * table.rewards[te, best].mean())
    assert routes(run, record(oracle)) and not routes(run, record(np.full(len(te), best)))
    seeds = {"a": (LMRun("geneseq", "fgpo", seed=0), record(oracle)), "b": (LMRun("geneseq", "fgpo", seed=1), record(np.full(len(te), best))),
             "c": (LMRun("geneseq", "fgpo", role="first-design"), record(oracle)), "d": (LMRun("geneseq", "sft"), record(oracle))}
    assert routes_by_benchmark(seeds) == {"geneseq": [(0, True), (1, False)]}
    assert routes_summary(seeds) == "1 of 2 seeds on geneseq" and routes_summary(seeds, arm="sft") == "1 of 1 seeds on geneseq"
    assert routes_summary({}) == ""


def test_dev_ties_by_hand():
    """A curve whose best dev score (0.5) is reached at updates 20, 30 and 50 (and at the untrained step 0, which is
    no candidate): selected 20 with 2 dev subsets, 3 tied points, the last at 50 with 7. A search run, and a main run
    whose curve records no dev routing, give no row."""
    import numpy as np

    from fgpo_lib.lm_policy.data import lm_splits
    from fgpo_lib.study.lm_runs import MAX_TRAIN, ROOT, LMRun
    from fgpo_lib.study.lm_routing import dev_ties_frame
    from fgpo_lib.table import RewardTable

    run = LMRun("geneseq", "fgpo", seed=2)
    table = RewardTable.load(ROOT / run.table)
    splits = {k: [table.question_ids[r] for r in v] for k, v in lm_splits(table, max_train=MAX_TRAIN).items()}
    te = np.array([table.question_ids.index(q) for q in splits["test"]])
    oracle = table.rewards[te].argmax(1)
    points = [(0, 0.5, 1), (10, 0.4, 1), (20, 0.5, 2), (30, 0.5, 5), (40, 0.45, 6), (50, 0.5, 7)]
    rec = {"splits": splits, "selected_step": 20, "curve": [{"step": s, "dev_score": d, "dev_distinct_subsets": k} for s, d, k in points],
           "test": {"question_ids": splits["test"], "scoring": {"choices": oracle.tolist(), "scores": table.rewards[te, oracle].tolist()}}}
    bare = {**rec, "curve": [{"step": s, "dev_score": d} for s, d, _ in points]}
    records = {"main": (run, rec), "search": (LMRun("geneseq", "fgpo", role="search"), rec), "bare": (LMRun("geneseq", "fgpo", seed=1), bare)}
    frame = dev_ties_frame(records)
    assert len(frame) == 1
    row = frame.iloc[0]
    assert (row["selected update"], row["dev score"], row["dev subsets (selected)"]) == (20, 50.0, 2)
    assert (row["tied points"], row["last tied update"], row["dev subsets (last tied)"]) == (3, 50, 7)
    assert row["test subsets (selected)"] == len(set(oracle.tolist())) and bool(row["routes"])
    assert row["test score (selected)"] == pytest.approx(100 * table.rewards[te].max(1).mean())
    assert np.isnan(row["test subsets (last tied)"]) and np.isnan(row["test score (last tied)"]) and np.isnan(row["routes (last tied)"])  # not recorded
    best = int(table.rewards[te].mean(0).argmax())  # the last tied checkpoint picks one subset everywhere
    rec["test_last_tie"] = {"step": 50, "scoring": {"choices": [best] * len(te), "scores": table.rewards[te, best].tolist()}}
    row = dev_ties_frame(records).iloc[0]
    assert row["test subsets (last tied)"] == 1 and row["test score (last tied)"] == pytest.approx(100 * table.rewards[te, best].mean())
    assert not row["routes (last tied)"] and row["routes"]  # one subset does not route; the selected oracle choices do
    rec["test_last_tie"]["scoring"] = rec["test"]["scoring"]
    assert dev_ties_frame(records).iloc[0]["routes (last tied)"]


def test_the_tie_break_point_beside_its_main_run_by_hand():
    """A main FGPO run of the recipe (seed 1) selected at update 20, where it picks the best fixed subset on every test
    question (1 subset, does not route), and the tie-break point of the same seed, whose curve is the same and which
    selects update 50, where it picks the oracle's subsets (routes): one row, the same dev curve, each rule's update,
    subsets, score and verdict. A confirmation seed (no main run) takes the first rule's selection from its own
    record's ``test_first_rule``; a seed with neither gives no row; a curve that differs says so. The confirmation's
    verdict: pending with one seed, holds when seeds 3 to 5 route, fails when one picks a single subset."""
    import numpy as np

    from fgpo_lib.lm_policy.data import lm_splits
    from fgpo_lib.study.lm_runs import MAX_TRAIN, RECIPE, ROOT, TIE_BREAK_POINT, LMRun
    from fgpo_lib.study.lm_routing import confirmation_verdict, routes_summary, tie_break_frame
    from fgpo_lib.table import RewardTable

    main_run, tie_run = LMRun("geneseq", "fgpo", RECIPE, seed=1), LMRun("geneseq", "fgpo", TIE_BREAK_POINT, role="tie-break", seed=1)
    table = RewardTable.load(ROOT / main_run.table)
    splits = {k: [table.question_ids[r] for r in v] for k, v in lm_splits(table, max_train=MAX_TRAIN).items()}
    te = np.array([table.question_ids.index(q) for q in splits["test"]])
    oracle, best = table.rewards[te].argmax(1), int(table.rewards[te].mean(0).argmax())
    curve = [{"step": s, "dev_score": d} for s, d in [(0, 0.2), (20, 0.5), (50, 0.5)]]

    def record(step, choices):
        return {"splits": splits, "selected_step": step, "curve": curve,
                "test": {"question_ids": splits["test"], "scoring": {"choices": list(choices), "scores": table.rewards[te, choices].tolist()}}}

    records = {"main": (main_run, record(20, np.full(len(te), best))), "tie": (tie_run, record(50, oracle)),
               "orphan": (LMRun("geneseq", "fgpo", TIE_BREAK_POINT, role="tie-break", seed=2), record(50, oracle))}
    confirm = record(50, oracle) | {"test_first_rule": {"step": 20, "scoring": record(20, np.full(len(te), best))["test"]["scoring"]}}
    records["confirm"] = (LMRun("geneseq", "fgpo", TIE_BREAK_POINT, role="confirmation", seed=3), confirm)
    frame = tie_break_frame(records)
    assert list(zip(frame.role, frame.seed)) == [("tie-break", 1), ("confirmation", 3)]
    mine = frame.iloc[1]
    assert np.isnan(mine["same dev curve"]) and (mine["selected update (first)"], mine["test subsets (first)"], bool(mine["routes (first)"])) == (20, 1, False)
    assert bool(mine["routes (expected)"]) and mine["test score (first)"] == pytest.approx(frame.iloc[0]["test score (first)"])
    assert routes_summary(records, role="confirmation") == "1 of 1 seeds on geneseq"
    assert confirmation_verdict(records) == "pending: 1 of 3 seeds recorded, every one routes"
    for seed in (4, 5):
        records[f"confirm{seed}"] = (LMRun("geneseq", "fgpo", TIE_BREAK_POINT, role="confirmation", seed=seed), confirm)
    assert confirmation_verdict(records) == "holds: all 3 seeds route"
    records["confirm4"] = (records["confirm4"][0], record(50, np.full(len(te), best)))  # one subset everywhere
    assert confirmation_verdict(records) == "fails: seed 4 does not route (3 of 3 seeds recorded)"
    for key in ("confirm", "confirm4", "confirm5"):
        del records[key]
    assert confirmation_verdict(records) == "pending: 0 of 3 seeds recorded"
    row = frame.iloc[0]
    assert (row["seed"], bool(row["same dev curve"]), row["selected update (first)"], row["selected update (expected)"]) == (1, True, 20, 50)
    assert (row["test subsets (first)"], row["test subsets (expected)"]) == (1, len(set(oracle.tolist())))
    assert row["test score (first)"] == pytest.approx(100 * table.rewards[te, best].mean())
    assert row["test score (expected)"] == pytest.approx(100 * table.rewards[te].max(1).mean())
    assert (bool(row["routes (first)"]), bool(row["routes (expected)"])) == (False, True)
    assert routes_summary(records, role="tie-break") == "2 of 2 seeds on geneseq"
    assert routes_summary(records) == "0 of 1 seeds on geneseq"
    records["tie"][1]["curve"] = [*curve[:2], {"step": 50, "dev_score": 0.4}]
    assert not tie_break_frame(records).iloc[0]["same dev curve"]


def test_the_lm_fgpo_loss_is_the_linear_heads_on_the_same_q():
    """The language-model arm's loss and the linear head's (fgpo_lib.algos.fgpo.fgpo_loss) share the entropy weight's
    name and, on the same logits, value and gradient; checked by hand on q = (1/4, 1/4, 1/2), r = (1, 0, 0.5):
    J = 0.5, H = 1.5 ln 2, so the loss with entropy_coef c is -(0.5 + 1.5 c ln 2)."""
    import math

    from fgpo_lib.algos.fgpo import fgpo_loss
    from fgpo_lib.lm_policy.candidate_scores import expected_reward_loss

    z = torch.tensor([0.0, 0.0, math.log(2.0)], requires_grad=True)
    r = torch.tensor([1.0, 0.0, 0.5])
    lm = expected_reward_loss(z, r, entropy_coef=0.2)
    assert float(lm) == pytest.approx(-(0.5 + 0.2 * 1.5 * math.log(2.0)), abs=1e-6)
    (g_lm,) = torch.autograd.grad(lm, z)
    linear = fgpo_loss(z[None], r[None], entropy_coef=0.2)
    (g_linear,) = torch.autograd.grad(linear, z)
    assert float(linear) == pytest.approx(float(lm)) and torch.allclose(g_lm, g_linear)


def test_a_new_arm_is_one_module_and_one_registry_row_and_reaches_the_report(tmp_path, monkeypatch):
    """A toy arm in two files, its module (settings and trainer) and its row in the arm registry, is a choice of
    ``fgpo lm-train --arm``, gets its main-table runs in the run registry, and its record appears in the report's
    main table and cost table under its label, with no other file touched."""
    import json
    import shutil
    import sys

    from fgpo_lib import cli
    from fgpo_lib.lm_policy import arms
    from fgpo_lib.study import lm_report, lm_runs

    (tmp_path / "toy_arm.py").write_text(
        "from dataclasses import dataclass\nfrom fgpo_lib.lm_policy.fgpo_arm import LMFGPOConfig, train_fgpo\n\n"
        "@dataclass\nclass ToyConfig(LMFGPOConfig):\n    pass\n\n\ndef train_toy(*args, **kwargs):\n    return train_fgpo(*args, **kwargs)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(arms.LM_ARMS, "toy", arms.LMArm("toy_arm", "ToyConfig", "train_toy", "Toy", "a toy arm", cpu_hours=0.5, seeds=(0,)))
    monkeypatch.setitem(arms.ARM_LABELS, "toy", "Toy")
    code = cli.main(["lm-train", "--table", str(lm_runs.ROOT / "tables" / "geneseq__qwen2.5-coder-0.5b__4tools.npz"), "--arm", "toy", "--set", "bogus=1",
                     "--out", str(tmp_path / "r.json")])
    assert code == 2  # the arm is a choice; its settings class (loaded from its module) names the fields it has
    records = tmp_path / "records"
    shutil.copytree(lm_runs.LM_RECORDS, records, ignore=shutil.ignore_patterns("*.partial", "stopped"))
    toy = [r for r in lm_runs.lm_runs(records) if r.arm == "toy"]
    assert {(r.benchmark, r.seed, r.role) for r in toy} == {(b, 0, "main") for b in lm_runs.LM_BENCHMARKS}
    fgpo = next(r for r in lm_runs.lm_runs(records) if r.arm == "fgpo" and r.role == "main" and r.benchmark == "geneseq" and r.seed == 0)
    run = next(r for r in toy if r.benchmark == "geneseq")
    record = json.loads(fgpo.record.read_text()) | {"arm": "toy"}  # as the toy's trainer (FGPO's loop) would write it
    (records / f"{run.name}.json").write_text(json.dumps(record))
    loaded = lm_report.load_records(records)
    assert run.name in loaded
    tables, _ = lm_report.transfer_results(lm_report.main_records(loaded))
    assert all("Toy" in arms_of for arms_of in [v for k, v in tables.items() if "GeneSeq" in k])
    cost = lm_report.cost_frame(loaded)
    assert "Toy" in set(cost.arm)
    assert sys.modules["toy_arm"].ToyConfig is arms.LM_ARMS["toy"].settings
    assert lm_runs.cost_cpu_hours(toy) == 0.5 * len(toy)  # the row's cost rate

def test_each_arms_cost_rate_is_near_its_committed_runs():
    """The arm registry's ``cpu_hours`` is no hand-typed guess: within a factor of two of the median CPU-hours of the
    arm's committed runs (wall seconds x threads of warm start and training, on a shared machine)."""
    import numpy as np

    from fgpo_lib.lm_policy.arms import LM_ARMS
    from fgpo_lib.study.lm_report import cost_frame, load_records

    cost = cost_frame(load_records())
    for name, arm in LM_ARMS.items():
        runs = cost[cost.arm == arm.label]
        if len(runs):
            median = float(np.median(runs["CPU-hours"]))
            assert median / 2 <= arm.cpu_hours <= 2 * median, (name, arm.cpu_hours, median)
