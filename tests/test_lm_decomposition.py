"""The LM chapter's decomposition by hand: the differences of means, the best fixed subset, the seed-pair tests and
their Holm family, the exact seed-level permutation test and the run labels."""

import json

import numpy as np
import pytest

from fgpo_lib.study import lm_decomposition as dec
from fgpo_lib.study.lm_runs import LM_RECORDS, RECIPE, LMRun


def _main():
    """Hand-made main records on GeneSeq's committed split: FGPO right on every question of 2 seeds, the sampled arm
    right on all but the last 6 (3 seeds), TRL's GRPO right on none (2 seeds; it answers in free generation)."""
    base = json.loads((LM_RECORDS / f"{LMRun('geneseq', 'fgpo', RECIPE, seed=0).name}.json").read_text())
    qids = base["test"]["question_ids"]
    n = len(qids)
    half = np.r_[np.ones(n - 6), np.zeros(6)]

    def rec(scores, decoding="scoring"):
        block = {"scores": list(map(float, scores)), "choices": [int(i % 3) for i in range(n)]}
        return {"splits": base["splits"], "test": {"question_ids": qids, decoding: block}}

    main = {}
    for s in (0, 1):
        main[f"f{s}"] = (LMRun("geneseq", "fgpo", RECIPE, seed=s), rec(np.ones(n)))
        main[f"g{s}"] = (LMRun("geneseq", "grpo", {"lr": 1e-4}, format_warmup=3.0, seed=s), rec(np.zeros(n), "generation"))
    for s in (0, 1, 2):
        main[f"s{s}"] = (LMRun("geneseq", "sampled", {**RECIPE, "scale_rewards": "none"}, seed=s), rec(half))
    return main, n, half


def test_the_decomposition_is_the_difference_of_the_arms_means_by_hand():
    main, n, half = _main()
    frame = dec.decomposition_frame(main).set_index("comparison")
    assert frame.loc["FGPO - Sampled", "diff"] == pytest.approx(100 * (1 - half.mean()))
    assert frame.loc["Sampled - GRPO (TRL)", "diff"] == pytest.approx(100 * half.mean())
    assert frame.loc["FGPO - Sampled", "seeds"] == "2 vs 3"
    run, rec = main["f0"]
    best, fixed = dec.best_fixed(run, rec)
    assert frame.loc["GRPO (TRL) - best fixed", "diff"] == pytest.approx(-100 * fixed.mean())
    for _, row in frame.iterrows():
        assert row["lo"] <= row["diff"] + 1e-9 and row["diff"] <= row["hi"] + 1e-9


def test_seed_pair_tests_name_their_family_and_holm_adjusts_within_it():
    main, n, half = _main()
    tests = dec.seed_pair_tests(main)
    fs = tests[tests.comparison == "FGPO - Sampled"]
    assert len(fs) == 6 and set(fs["pairs in family"]) == {6}  # 2 x 3 seed pairs
    # every pair: FGPO right and the sampled arm wrong on the last 6 questions only: McNemar's exact p = 2 * 0.5^6
    assert fs["McNemar p"].to_numpy() == pytest.approx(np.full(6, 2 * 0.5**6))
    assert fs["Holm p (family: its seed pairs)"].to_numpy() == pytest.approx(np.full(6, 6 * 2 * 0.5**6))  # six equal p: each times 6
    assert fs["seed-level permutation p"].iloc[0] == pytest.approx(1 / 10)  # 2 of the C(5, 2) = 10 splits are as extreme


def test_the_exact_permutation_test_by_hand():
    assert dec.permutation_p(np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])) == pytest.approx(2 / 20)
    assert dec.permutation_p(np.array([1.0, 2.0]), np.array([1.0, 2.0])) == pytest.approx(1.0)


def test_a_run_is_named_by_what_differs():
    assert dec.run_label(LMRun("geneseq", "fgpo", RECIPE, seed=1)) == "β 0.3, lr 3e-4, seed 1"
    assert dec.run_label(LMRun("geneseq", "sampled", {**RECIPE, "group_size": 16}, seed=0)) == "β 0.3, G 16, lr 3e-4, seed 0"
    assert dec.run_label(LMRun("geneseq", "fgpo", RECIPE, format_warmup=3.0, seed=0)) == "β 0.3, lr 3e-4, 3-pass warm start, seed 0"
    assert dec.run_label(LMRun("geneseq", "grpo", {"budget": 1.0, "eval_every": 20, "epsilon_high": 0.28, "lr": 1e-4}, format_warmup=3.0)) == "clip-higher ε 0.28, lr 1e-4, seed 0"


def test_the_answer_sentence_reads_the_decomposition_or_says_what_is_pending():
    main, n, half = _main()
    sentence = dec.answer_sentence(dec.decomposition_frame(main))
    fs = 100 * (1 - half.mean())
    assert sentence.startswith(f"the exact estimator alone (FGPO minus the same policy trained with GRPO's sampled estimator) is worth {fs:+.1f} [")
    assert "points on GeneSeq" in sentence and "(pending" not in sentence
    only_fgpo = {k: v for k, v in main.items() if k.startswith("f")}
    assert dec.answer_sentence(dec.decomposition_frame(only_fgpo)).count("(pending") == 2
    assert dec.answer_sentence(dec.decomposition_frame({})) == "pending: no main run has a record yet"


def test_every_arms_tuning_is_read_from_its_records():
    """searches_frame on the committed records: each row's CPU-hours is its record's (warm start and training
    seconds x threads), and on the proxy FGPO's main point is the recipe, the search point with the best dev score."""
    from fgpo_lib.study.lm_report import cost_frame, load_records

    records = load_records()
    tuning = dec.searches_frame(records)
    fgpo = tuning[tuning.arm == "FGPO"]
    main = fgpo[fgpo["main point"]]
    assert list(main.run) == ["β 0.3, lr 3e-4, seed 0"]
    assert main["best dev"].iloc[0] == fgpo[fgpo.role != "first-design"]["best dev"].max()
    cost = cost_frame(records).set_index("run")["CPU-hours"]
    name = LMRun("geneseq", "fgpo", RECIPE, seed=0).name
    assert main["CPU-hours"].iloc[0] == pytest.approx(cost[name])


def test_the_estimator_at_one_point_pairs_each_sampled_run_with_its_fgpo_twin_by_hand():
    """same_point_frame on hand-made records: the recipe's sampled runs (group-normalised, and unscaled) pair with
    FGPO's recipe run of the same seed, a sampled seed without an FGPO twin and an FGPO run at another point pair with
    nothing; FGPO - Sampled and McNemar's p are the hand values, and the answer sentence says them while the main
    seeds are pending."""
    main, n, half = _main()
    base_split = main["f0"][1]["splits"]
    dev = lambda d: [{"step": 0, "dev_score": 0.9}, {"step": 10, "dev_score": d}]  # noqa: E731
    records = {"f0": (main["f0"][0], {**main["f0"][1], "curve": dev(0.5)}),
               "f-other": (LMRun("geneseq", "fgpo", {**RECIPE, "lr": 1e-4}, seed=0), {**main["f0"][1], "curve": dev(0.1)})}
    for name, settings, seed in (("s-group", RECIPE, 0), ("s-none", {**RECIPE, "scale_rewards": "none"}, 0), ("s-alone", RECIPE, 4)):
        rec = {**main["s0"][1], "splits": base_split, "curve": dev(0.25)}
        records[name] = (LMRun("geneseq", "sampled", settings, seed=seed), rec)
    frame = dec.same_point_frame(records)
    assert sorted(frame["sampled run"]) == ["β 0.3, lr 3e-4, advantage scaling none, seed 0", "β 0.3, lr 3e-4, seed 0"]
    row = frame.set_index("sampled run").loc["β 0.3, lr 3e-4, seed 0"]
    assert (row["FGPO"], row["Sampled"], row["FGPO dev"], row["Sampled dev"]) == pytest.approx((100.0, 100 * half.mean(), 50.0, 25.0))
    assert row["diff"] == pytest.approx(600 / n) and row["lo"] <= row["diff"] <= row["hi"]
    assert row["McNemar p"] == pytest.approx(2 * 0.5**6)  # FGPO right, the sampled arm wrong on 6 questions, no other discordant pair
    sentence = dec.answer_sentence(dec.decomposition_frame({"f0": main["f0"]}), frame)
    assert f"so far, one seed at 2 points on GeneSeq: {600 / n:+.1f} to {600 / n:+.1f} points, 2 of 2 intervals above 0)" in sentence
    assert f"one seed at one point on GeneSeq: {600 / n:+.1f} [" in dec.answer_sentence(dec.decomposition_frame({"f0": main["f0"]}), frame.iloc[:1])


def test_tables_name_a_run_by_what_differs_and_where_the_table_does_not_say_its_benchmark_and_arm():
    import pandas as pd

    run = LMRun("geneseq", "sampled", {**RECIPE, "group_size": 16}, seed=1)
    runs = {run.name: run}
    both = dec.label_runs(pd.DataFrame({"run": [run.name, "a note"], "benchmark": ["geneseq", ""], "arm": ["Sampled", ""]}), runs)
    assert list(both.run) == ["β 0.3, G 16, lr 3e-4, seed 1", "a note"]
    bare = dec.label_runs(pd.DataFrame({"point": [run.name], "score": [1.0]}), runs)
    assert list(bare.point) == ["GeneSeq, Sampled: β 0.3, G 16, lr 3e-4, seed 1"] and list(bare.score) == [1.0]


def test_the_tuning_table_says_whether_training_moved_a_run_above_its_warm_start_by_hand():
    """A GRPO point whose dev never beats its warm start's (0.45, then 0.45 and 0.40) is not above it; a sampled
    point that goes from 0.0 to 0.30 is; a tie with the warm start is not."""
    def rec(curve, decoding):
        return {"curve": [{"step": s, "dev_score": d} for s, d in curve], "format_warmup": {"seconds": 0.0}, "train_seconds": 3600.0,
                "backbone": {"torch_threads": 1}, "selected_step": curve[1][0], "test": {decoding: {"scores": [1.0, 0.0]}}}

    grpo = LMRun("geneseq", "grpo", {"budget": 1.0, "eval_every": 20, "epsilon_high": 0.28, "lr": 1e-4}, format_warmup=3.0, role="search")
    sampled = LMRun("geneseq", "sampled", RECIPE, role="search")
    records = {"g": (grpo, rec([(0, 0.45), (20, 0.45), (40, 0.40)], "generation")), "s": (sampled, rec([(0, 0.0), (10, 0.3)], "scoring"))}
    frame = dec.searches_frame(records, chosen=set()).set_index("arm")
    assert (frame.loc["GRPO (TRL)", "warm-start dev"], frame.loc["GRPO (TRL)", "best dev"], frame.loc["GRPO (TRL)", "above warm start"]) == (45.0, 45.0, False)
    assert (frame.loc["Sampled", "warm-start dev"], frame.loc["Sampled", "best dev"], frame.loc["Sampled", "above warm start"]) == (0.0, 30.0, True)
    assert frame.loc["Sampled", "CPU-hours"] == pytest.approx(1.0)


def test_the_inert_clip_higher_point_and_its_evidence_by_hand():
    """A clip-higher record (epsilon_high 0.28; TRL clipped at its third step only) beside the same seed's run at TRL's
    defaults, recorded before the field existed (its config lacks epsilon_high): 1 of 3 steps clipped, and the two
    logged the same loss and reward for 2 first steps. Runs at the defaults are not listed."""
    from fgpo_lib.study.lm_report import inert_frame

    base = {"lr": 1e-4, "budget": 1.0, "eval_every": 20, "seed": 0}
    log = lambda losses, clips: [{"step": i + 1, "loss": l, "reward": 0.5, "clip_ratio/region_mean": c} for i, (l, c) in enumerate(zip(losses, clips))]  # noqa: E731
    records = {"eh": (LMRun("geneseq", "grpo", {**base, "epsilon_high": 0.28}, role="search"), {"config": {**base, "epsilon_high": 0.28}, "log": log([0.1, 0.2, 0.3], [0, 0, 0.1])}),
               "d": (LMRun("geneseq", "grpo", base), {"config": base, "log": log([0.1, 0.2, 0.4], [0, 0, 0])})}
    frame = inert_frame(records)
    assert frame[["run", "steps", "steps clipped", "first steps as TRL's defaults"]].values.tolist() == [["eh", 3, 1, 2]]
    assert inert_frame({"d": records["d"]}).empty
    assert inert_frame({"eh": records["eh"]})["first steps as TRL's defaults"].isna().all()
