"""The language-model arms through their real code paths (fgpo's FGPO loop, TRL's GRPOTrainer and SFTTrainer) on a
tiny randomly initialised transformers model and a character tokenizer built here (no weights, no download), and
the GRPO reward function against the table."""

import string

import numpy as np
import pytest

from fgpo_lib import RewardTable, SubsetSpace
from fgpo_lib.lm_policy.data import LMPolicyError, lm_splits
from fgpo_lib.lm_policy.grpo_arm import TableReward
from fgpo_lib.lm_policy.prompt import candidate


def _tokenizer():
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    specials = ["<pad>", "<s>", "</s>", "<unk>"]
    vocab = {t: i for i, t in enumerate(specials + sorted(set(string.printable)))}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(r"[\s\S]"), behavior="isolated")
    tok.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", bos_token="<s>", eos_token="</s>", unk_token="<unk>")


def _model(tokenizer, lora: bool = True):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from fgpo_lib.lm_policy.model import with_lora

    torch.manual_seed(0)
    cfg = LlamaConfig(vocab_size=len(tokenizer), hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                      max_position_embeddings=1024, pad_token_id=tokenizer.pad_token_id, bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
    model = LlamaForCausalLM(cfg).float()
    model.requires_grad_(False)
    return with_lora(model).eval() if lora else model


def _table(n=24) -> RewardTable:
    space = SubsetSpace(2, tool_names=("composition", "knn"))  # 4 candidates: none, 0, 1, 0+1
    rng = np.random.default_rng(0)
    rewards = rng.integers(0, 2, (n, space.n_subsets)).astype(np.float32)
    tasks = ["a" if i % 2 else "b" for i in range(n)]
    split = np.array(["test" if i % 4 == 0 else "train" for i in range(n)])
    return RewardTable(rewards, [f"q{i}" for i in range(n)], space, questions=[f"Which region is ACGT{i}?" for i in range(n)], tasks=tasks, split=split)


def test_the_grpo_reward_is_the_tables_and_counts_its_calls():
    table = _table()
    fn = TableReward(table)
    r0, e = table.rewards[0], table.space.index_of([])
    both = table.space.index_of(["composition", "knn"])
    out = fn(prompts=["p"] * 3, completions=[candidate([0, 1]), candidate([]), "I would call the first tool"], question_id=["q0", "q0", "q0"])
    assert out[0] == pytest.approx(0.95 * (r0[both] - r0[e]) + 0.05) and out[1] == pytest.approx(0.05)
    assert out[2] == 0.0 and fn.format_failures == 1  # malformed: r_fmt = 0 and no tool changed the answer
    assert fn.calls == 2  # the no-tool cell once for q0, then one looked-up cell; a malformed completion calls nothing
    fn(prompts=["p"] * 2, completions=[candidate([1]), candidate([1])], question_id=["q1", "q1"])
    assert fn.calls == 2 + 1 + 2 and fn.dead_rates[-1] == 1.0  # q1's two equal completions: a dead group


def test_a_table_or_split_the_arms_cannot_use_is_a_named_error():
    t = _table()
    no_empty = RewardTable(t.rewards[:, 1:], t.question_ids, SubsetSpace(2, min_size=1, tool_names=t.tool_names), questions=t.questions, tasks=t.tasks, split=t.split)
    with pytest.raises(LMPolicyError, match="no empty subset"):
        TableReward(no_empty)
    all_test = RewardTable(t.rewards, t.question_ids, t.space, questions=t.questions, tasks=t.tasks, split=np.array(["test"] * t.n_questions))
    with pytest.raises(LMPolicyError, match="no train questions"):
        lm_splits(all_test)


@pytest.mark.parametrize("arm", ["fgpo", "grpo", "sft"])
def test_two_steps_of_each_arm_through_its_real_code_path(arm):
    from fgpo_lib.lm_policy.fgpo_arm import LMFGPOConfig, train_fgpo
    from fgpo_lib.lm_policy.grpo_arm import LMGRPOConfig, train_grpo
    from fgpo_lib.lm_policy.sft_arm import LMSFTConfig, train_sft

    table, tokenizer = _table(), _tokenizer()
    model = _model(tokenizer)
    splits = lm_splits(table, max_train=8)
    n_train = len(splits["train"])
    before = {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}
    if arm == "fgpo":
        rec = train_fgpo(model, tokenizer, table, splits, LMFGPOConfig(batch_questions=4, epochs=8 / n_train, eval_every=1, lr=1e-2))
    elif arm == "grpo":
        rec = train_grpo(model, tokenizer, table, splits, LMGRPOConfig(group_size=2, questions_per_step=1, budget=4 / (n_train * table.n_subsets), max_completion_length=8, eval_every=1, lr=1e-2))
        assert rec["trl"]["loss_type"] == "dapo" and rec["trl"]["max_steps"] == 2
        assert len(rec["dead_groups"]["live"]) == 2 and len(rec["dead_groups"]["trl_frac_reward_zero_std"]) == 2
        assert rec["dead_groups"]["live"] == pytest.approx(rec["dead_groups"]["trl_frac_reward_zero_std"])
        # an untrained tiny model writes no <answer> tags: every completion is a format failure with reward 0, every
        # group is dead, and GRPO learns nothing, exactly its failure; the live rate says so, and TRL's metric agrees
        assert rec["format_failures"] == rec["completions"] == 4 and rec["dead_groups"]["live"] == [1.0, 1.0]
        assert rec["reasoner_calls"] == 2  # the no-tool cell of each step's question, once each
    else:
        rec = train_sft(model, tokenizer, table, splits, LMSFTConfig(batch_questions=4, epochs=8 / n_train, eval_every=1, lr=1e-2))
    assert [p["step"] for p in rec["curve"]] == [0, 1, 2]
    for point in rec["curve"]:  # both decodings at every dev point, whatever the arm selects on
        assert point["dev_score"] == point["dev_score_generation" if arm == "grpo" else "dev_score_scoring"]
        assert 0 <= point["dev_format_failure_rate"] <= 1 and 0 <= point["closed_form_dead"] <= 1 and point["generated_entropy"] >= 0
        assert point["tag_logp"] < 0 and 0 <= point["closed_form_dead_generation"] <= 1
    if arm == "grpo":
        assert rec["group_entropy"] == [0.0, 0.0]  # every completion of a group failed the same way: one outcome
    after = {n: p.detach() for n, p in model.named_parameters() if p.requires_grad}
    moved = any(not np.allclose(before[n].numpy(), after[n].numpy()) for n in before)
    assert moved == (arm != "grpo"), "FGPO and SFT move the adapter in two steps; GRPO on dead groups cannot"
    test = rec["test"]
    assert len(test["scoring"]["scores"]) == len(splits["test"]) == len(test["generation"]["scores"])
    # the last trained point tying the best dev score, scored on test beside the selected one (a diagnostic)
    trained = [p for p in rec["curve"] if p["step"] > 0]
    later = [p["step"] for p in trained if p["dev_score"] == max(q["dev_score"] for q in trained) and p["step"] > rec["selected_step"]]
    tie = rec["test_last_tie"]
    assert (tie is None) == (not later)
    if arm == "grpo":  # dead groups leave the adapter where it was: both points tie, and the tied checkpoint is the selected one
        assert (rec["selected_step"], tie["step"]) == (1, 2) and tie["scoring"]["choices"] == test["scoring"]["choices"]
    if tie is not None:
        assert tie["step"] == later[-1] and len(tie["scoring"]["scores"]) == len(splits["test"])
    assert 0 <= test["q_top_mass"] <= 1
    from fgpo_lib.lm_policy.runner import rescore

    again = rescore({"test": test, "table": {"tools": list(table.tool_names)}}, table)  # the transfer design, here on the training table itself
    assert again["scoring"]["scores"] == test["scoring"]["scores"] and again["generation"]["scores"] == test["generation"]["scores"]


def test_dev_selection_breaks_ties_by_hand():
    """Dev points (step, dev score, expected dev reward) fed to the selection in order: (1, .5, .30), (2, .6, .40),
    (3, .6, .45), (4, .6, .42), (5, .5, .90). Under "first" the selected step is 2 (the first .6) and the last tie 4;
    under "expected" it is 3 (the .6 with the higher expected reward, .45) and the last unselected tie 4; step 5's
    expected reward .90 does not count against a lower score. Under either rule the first rule's checkpoint is step 2
    (kept as a diagnostic under "expected" alone). An unknown rule is a named error."""
    from fgpo_lib.lm_policy.dev import DevSelector, selection_key

    table, tokenizer = _table(), _tokenizer()
    model = _model(tokenizer)
    points = [(1, .5, .30), (2, .6, .40), (3, .6, .45), (4, .6, .42), (5, .5, .90)]
    chosen = {}
    for rule in ("first", "expected"):
        dev = DevSelector(model, tokenizer, table, [0, 1], "scoring", measures="scoring", tie_break=rule)
        for step, score, expected in points:
            dev._select({"step": step, "dev_score": score, "dev_expected_reward": expected})
        chosen[rule] = (dev.best_step, dev.last_tie_step, dev.best, dev.first_step, dev.first_state is not None)
    assert chosen == {"first": (2, 4, .6, 2, False), "expected": (3, 4, .6, 2, True)}
    assert selection_key({"dev_score": .6, "dev_expected_reward": .4}, "first") == (.6,)
    with pytest.raises(ValueError, match="tie break 'last'"):
        DevSelector(model, tokenizer, table, [0, 1], "scoring", tie_break="last")


def test_the_expected_dev_reward_is_q_times_the_table():
    """A dev point's ``dev_expected_reward`` is the mean over the dev questions of sum_S q(S|x) r(x,S), re-derived
    from the candidate distribution and the table's raw rewards."""
    from fgpo_lib.lm_policy.dev import DevSelector
    from fgpo_lib.lm_policy.evaluate import candidate_distribution

    table, tokenizer = _table(), _tokenizer()
    model = _model(tokenizer)
    rows = [0, 1, 2]
    dev = DevSelector(model, tokenizer, table, rows, "scoring", measures="scoring")
    dev(0)
    q = candidate_distribution(model, tokenizer, table, rows)
    want = np.mean([sum(q[i, s] * table.rewards[r, s] for s in range(table.n_subsets)) for i, r in enumerate(rows)])
    assert dev.curve[0]["dev_expected_reward"] == pytest.approx(want)


def test_the_tag_log_probability_is_the_prefix_scored_as_a_candidate():
    """``shared_prefix_logprob`` is the opening tag ``<answer>`` (the candidates' shared tokens) scored by the naive
    reference as a candidate of its own, summed: the same token positions, no off-by-one."""
    import torch

    from fgpo_lib.lm_policy.data import candidate_token_ids, prompt_text
    from fgpo_lib.lm_policy.evaluate import shared_prefix, shared_prefix_logprob
    from fgpo_lib.lm_policy.candidate_scores import naive_candidate_scores

    table, tokenizer = _table(), _tokenizer()
    model = _model(tokenizer)
    prefix = shared_prefix(candidate_token_ids(tokenizer, table))
    assert tokenizer.decode(prefix) == "<answer>"
    got = shared_prefix_logprob(model, tokenizer, table, [0, 1])
    for i, r in enumerate([0, 1]):
        ids = tokenizer(prompt_text(tokenizer, table.questions[r], 2), add_special_tokens=False, return_tensors="pt")["input_ids"][0]
        with torch.no_grad():
            want = float(naive_candidate_scores(model, ids, [prefix], length_norm=False)[0])
        assert got[i] == pytest.approx(want, abs=1e-5)


def test_the_closed_form_dead_rate_under_generation_by_hand():
    """Outcomes of mass (0.5, 0.3, 0.2) with GRPO rewards (0.05, 0.05, 0): two classes of mass 0.8 and 0.2, so a group
    of 2 is dead with chance 0.8^2 + 0.2^2 = 0.68, and a group of 3 with 0.512 + 0.008 = 0.52."""
    from fgpo_lib.lm_policy.evaluate import closed_form_dead_generation

    masses, values = np.array([[0.5, 0.3, 0.2]]), np.array([[0.05, 0.05, 0.0]])
    assert closed_form_dead_generation(masses, values, 2) == pytest.approx([0.68])
    assert closed_form_dead_generation(masses, values, 3) == pytest.approx([0.52])


def test_the_generation_masses_are_the_candidates_sequence_probabilities():
    """Each candidate's mass is exp of its summed log-probability (the naive reference), and with the rest they sum
    to 1; the last outcome's GRPO reward is a format failure's, 0."""
    import torch

    from fgpo_lib.lm_policy.data import candidate_token_ids, grpo_reward_values, prompt_text
    from fgpo_lib.lm_policy.evaluate import generation_masses
    from fgpo_lib.lm_policy.candidate_scores import naive_candidate_scores

    table, tokenizer = _table(), _tokenizer()
    model = _model(tokenizer)
    masses = generation_masses(model, tokenizer, table, [3])
    assert masses.shape == (1, table.n_subsets + 1) and masses.sum() == pytest.approx(1.0)
    ids = tokenizer(prompt_text(tokenizer, table.questions[3], 2), add_special_tokens=False, return_tensors="pt")["input_ids"][0]
    with torch.no_grad():
        want = naive_candidate_scores(model, ids, candidate_token_ids(tokenizer, table), length_norm=False).double().exp().numpy()
    assert masses[0, :-1] == pytest.approx(want, rel=1e-4)
    from fgpo_lib.lm_policy.evaluate import candidate_distribution, dev_measures

    q, _, _ = dev_measures(model, tokenizer, table, [3, 5])  # the dev evaluation's one pass: q as candidate scoring gives it
    assert np.allclose(q, candidate_distribution(model, tokenizer, table, [3, 5]), atol=1e-6)
    values = grpo_reward_values(table)
    assert values.shape == (table.n_questions, table.n_subsets + 1) and (values[:, -1] == 0).all()
    assert values[3, table.space.index_of([])] == pytest.approx(0.05)  # a well-formed no-tool answer: r_diff 0, r_fmt 1


def test_a_candidate_written_through_other_tokens_counts_in_its_mass():
    """With SmolLM2's own tokenizer, ``<answer></answer>`` is ``< answer ></ answer >`` but also ``< answer >
    </ answer >`` (the tags tokenized apart): both variants are kept, distinct, and decode to the same string."""
    from fgpo_lib.lm_policy.data import candidate_token_variants
    from fgpo_lib.lm_policy.model import load_tokenizer

    tokenizer = load_tokenizer("smollm2-135m")
    table = RewardTable(np.zeros((1, 16), np.float32), ["q0"], SubsetSpace(4), questions=["q"])
    variants = candidate_token_variants(tokenizer, table)
    empty = variants[table.space.index_of([])]
    assert len(empty) == 2 and empty[0] != empty[1]
    assert {tokenizer.decode(v) for v in empty} == {"<answer></answer>"}
    assert all(len({tokenizer.decode(v) for v in vs}) == 1 for vs in variants)


def test_lm_train_and_lm_eval_name_bad_input(tmp_path, capsys):
    from fgpo_lib.cli import main

    t = _table()
    no_empty = RewardTable(t.rewards[:, 1:], t.question_ids, SubsetSpace(2, min_size=1, tool_names=t.tool_names), questions=t.questions, tasks=t.tasks, split=t.split)
    no_empty.save(tmp_path / "t.npz")
    assert main(["lm-train", "--table", str(tmp_path / "t.npz"), "--arm", "fgpo", "--out", str(tmp_path / "r.json")]) == 2
    assert "no empty subset" in capsys.readouterr().err
    t.save(tmp_path / "ok.npz")
    assert main(["lm-train", "--table", str(tmp_path / "ok.npz"), "--arm", "grpo", "--set", "group_size=six", "--out", str(tmp_path / "r.json")]) == 2
    assert "--set group_size: 'six' is not a int" in capsys.readouterr().err
    assert main(["lm-train", "--table", str(tmp_path / "ok.npz"), "--arm", "fgpo", "--format-warmup", "-1", "--out", str(tmp_path / "r.json")]) == 2
    assert "--format-warmup must be >= 0" in capsys.readouterr().err
    (tmp_path / "bad.json").write_text("{}")
    assert main(["lm-eval", str(tmp_path / "bad.json"), "--table", str(tmp_path / "ok.npz")]) == 2
    assert "not a run record" in capsys.readouterr().err


def test_trls_trainers_accept_the_real_backbone_dequantized_from_its_gguf(tmp_path):
    """transformers marks a model read from a GGUF as GGUF-quantized, and its Trainer refuses to train such a model;
    load_backbone must hand TRL a model it accepts (the backbone itself, not the tiny test model)."""
    from datasets import Dataset
    from trl import GRPOTrainer

    from fgpo_lib.lm_policy.data import prompt_text
    from fgpo_lib.lm_policy.grpo_arm import LMGRPOConfig, grpo_args
    from fgpo_lib.lm_policy.model import load_backbone, with_lora

    model, tokenizer = load_backbone("smollm2-135m")
    assert not getattr(model, "is_quantized", False) and next(model.parameters()).dtype.is_floating_point
    model = with_lora(model)
    table = _table(4)
    data = Dataset.from_dict({"prompt": [prompt_text(tokenizer, q, 2) for q in table.questions], "question_id": table.question_ids})
    args = grpo_args(LMGRPOConfig(group_size=2, questions_per_step=1, max_completion_length=4), str(tmp_path), 1)
    GRPOTrainer(model=model, reward_funcs=[TableReward(table)], args=args, train_dataset=data, processing_class=tokenizer)


def test_the_format_warm_start_trains_the_adapter_and_ignores_the_reward():
    """The warm start's targets are random candidates: two tables that differ only in their rewards give the same
    adapter, and the adapter moved; it records the sampled-format chance and the tag's log-probability it reached."""
    import torch

    from fgpo_lib.lm_policy.evaluate import generation_masses, shared_prefix_logprob
    from fgpo_lib.lm_policy.warmup import WARMUP_PROBE_QUESTIONS, FormatWarmup, format_warmup

    tokenizer = _tokenizer()
    table = _table()
    flipped = RewardTable(1 - table.rewards, table.question_ids, table.space, questions=table.questions, tasks=table.tasks, split=table.split)
    rows = lm_splits(table)["train"]
    states = []
    for t in (table, flipped):
        model = _model(tokenizer)
        before = {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}
        out = format_warmup(model, tokenizer, t, rows, FormatWarmup(epochs=2, lr=1e-2, batch_questions=4))
        assert out["steps"] == -(-2 * len(rows) // 4)
        probe = rows[:WARMUP_PROBE_QUESTIONS]
        assert out["sampled_candidate_mass"] == pytest.approx(1 - generation_masses(model, tokenizer, t, probe)[:, -1].mean())
        assert out["tag_logp"] == pytest.approx(shared_prefix_logprob(model, tokenizer, t, probe).mean())
        after = {n: p.detach().clone() for n, p in model.named_parameters() if p.requires_grad}
        assert any(not torch.equal(before[n], after[n]) for n in before)
        states.append(after)
    assert all(torch.allclose(states[0][n], states[1][n]) for n in states[0])


def test_the_pipeline_trains_every_registered_run_without_a_record(tmp_path, monkeypatch, capsys):
    """``fgpo pipeline --stages lm_policy`` lists one lm-train command per run of LM_RUNS that has no record, on a
    committed table, and skips a run whose record exists."""
    from fgpo_lib.cli import main
    from fgpo_lib.study import lm_runs as runs

    monkeypatch.setattr(runs, "LM_RECORDS", tmp_path)
    assert len({r.name for r in runs.LM_RUNS}) == len(runs.LM_RUNS)
    assert all((runs.ROOT / r.table).exists() for r in runs.LM_RUNS)
    assert main(["pipeline", "--dry-run", "--stages", "lm_policy"]) == 0
    listed = [line.split()[3] for line in capsys.readouterr().out.splitlines() if line.strip().startswith("fgpo lm-train")]
    assert listed == [r.table for r in runs.LM_RUNS]
    runs.LM_RUNS[0].record.write_text("{}")
    assert [r.name for r in runs.pending_runs()] == [r.name for r in runs.LM_RUNS[1:]]


def _dev_record(folder, run, *dev: float) -> None:
    """A record of ``run`` in ``folder`` whose curve has dev scores 0.9 at step 0 (not counted: training had not
    begun) then ``dev``."""
    import json

    curve = [{"step": 0, "dev_score": 0.9}, *({"step": 20 * (i + 1), "dev_score": d} for i, d in enumerate(dev))]
    (folder / f"{run.name}.json").write_text(json.dumps({"config": {"lr": run.settings.get("lr")}, "curve": curve}))


def _grpo_seed0_record(folder, benchmark: str, lr: float, *dev: float) -> None:
    """A GRPO seed-0 record of ``benchmark`` at ``lr`` (:func:`_dev_record`)."""
    from fgpo_lib.study import lm_runs as design

    _dev_record(folder, design._grpo_run(benchmark, lr, 0), *dev)


def test_grpo_search_moves_its_main_point_only_where_a_point_beats_trls_defaults_on_dev(tmp_path):
    """GeneSeq's GRPO seed 0 with TRL's defaults at its chosen rate has best dev 0.5. While a search point has no
    record, or none beats 0.5 (a tie stays with the defaults), GRPO's main runs stay where they were; once
    clip-higher reaches 0.6 nothing moves (it is inert in this arm), and once the entropy bonus does, its main runs on
    GeneSeq and GeneTuring move there (GeneSeq's seed 0 is the search run itself), their runs before become first-design runs, and GeneRegion keeps TRL's defaults. awaiting_choice counts,
    before any choice, the sampled arm's 5 main seeds and 2 dose points and GRPO's 3 seeds at a new point (an upper
    bound), and, once both chose (GRPO its defaults), none."""
    from fgpo_lib.study import lm_runs as design

    def grpo(folder, role="main"):
        return {(r.benchmark, r.seed): r for r in design.lm_runs(folder) if r.arm == "grpo" and r.role == role}

    for benchmark in ("geneseq", "geneturing"):
        _grpo_seed0_record(tmp_path, benchmark, 3e-4, 0.1, 0.4)
        _grpo_seed0_record(tmp_path, benchmark, 1e-4, 0.5, 0.2)
    before = grpo(tmp_path)
    assert design.grpo_main_point(tmp_path) == {} and before[("geneseq", 1)].settings == {**design.ARM_SETTINGS["grpo"], "lr": 1e-4}
    awaiting = design.awaiting_choice(tmp_path)
    assert sorted((r.arm, r.benchmark, r.seed, r.role) for r in awaiting) == sorted(
        [*(("sampled", b, s, "main") for b in ("geneseq", "geneturing") for s in (0, 1, 2) if (b, s) != ("geneseq", 0)),
         ("sampled", "geneseq", 0, "group-size"), ("sampled", "geneseq", 0, "group-size"),
         ("grpo", "geneseq", 1, "main"), ("grpo", "geneturing", 0, "main"), ("grpo", "geneturing", 1, "main")])

    clip, drgrpo, g16, entropy = design.grpo_search()
    for run, best in ((clip, 0.5), (drgrpo, 0.45), (g16, 0.4), (entropy, 0.3)):
        _dev_record(tmp_path, run, 0.3, best)
    assert design.grpo_main_point(tmp_path) == {} and grpo(tmp_path) == before and not grpo(tmp_path, "first-design")
    _dev_record(tmp_path, clip, 0.6)  # clip-higher is inert in this arm (TRL's defaults again): never chosen
    assert design.grpo_main_point(tmp_path) == {} and grpo(tmp_path) == before
    _dev_record(tmp_path, entropy, 0.6)
    assert design.grpo_main_point(tmp_path) == {"use_adaptive_entropy": True}
    after = grpo(tmp_path)
    assert after[("geneseq", 0)].name == entropy.name and after[("geneseq", 0)].searched
    assert after[("geneturing", 1)].settings == {**design.ARM_SETTINGS["grpo"], "lr": 1e-4, "use_adaptive_entropy": True}
    assert after[("generegion", 1)] == before[("generegion", 1)]
    assert {r.name for r in grpo(tmp_path, "first-design").values()} == {r.name for k, r in before.items() if k[0] != "generegion"}
    assert {r.name for r in design.lm_runs(tmp_path)} >= {r.name for r in before.values()}  # every run before stays listed

    for run in design.sampled_search():
        _dev_record(tmp_path, run, 0.3)
    _dev_record(tmp_path, entropy, 0.5)
    assert design.awaiting_choice(tmp_path) == []


def test_grpo_seed_0_chooses_the_rate_its_later_seeds_run_at(tmp_path, monkeypatch, capsys):
    """GeneSeq's GRPO at 3e-4 (best dev 0.4 after step 0) and at 1e-4 (best 0.5): 1e-4 is chosen, GRPO's seed 1 on
    GeneSeq is registered at 1e-4 alone (at both rates while a seed-0 record is missing, and on the other benchmarks),
    the pipeline skips the seed-1 run at 3e-4 it had planned, and the undecided pair costs one run. A tie goes to
    the first design's rate."""
    from fgpo_lib.cli import main
    from fgpo_lib.lm_policy.arms import LM_ARMS
    from fgpo_lib.study import lm_runs as design
    from fgpo_lib.pipeline import still_registered

    assert design.better_grpo_rate({3e-4: 0.4, 1e-4: 0.5}) == 1e-4
    assert design.better_grpo_rate({1e-4: 0.5, 3e-4: 0.5}) == 3e-4

    def seed1(folder):
        return {r.settings.get("lr", design.LR) for r in design.lm_runs(folder) if (r.benchmark, r.arm, r.role, r.seed) == ("geneseq", "grpo", "main", 1)}

    _grpo_seed0_record(tmp_path, "geneseq", 3e-4, 0.1, 0.4)
    assert design.chosen_grpo_rate("geneseq", tmp_path) is None and seed1(tmp_path) == {3e-4, 1e-4}
    _grpo_seed0_record(tmp_path, "geneseq", 1e-4, 0.5, 0.2)
    assert design.chosen_grpo_rate("geneseq", tmp_path) == 1e-4 and design.chosen_grpo_rate("geneturing", tmp_path) is None
    assert seed1(tmp_path) == {1e-4}
    loser, winner = design._grpo_run("geneseq", 3e-4, 1), design._grpo_run("geneseq", 1e-4, 1)
    assert not still_registered(loser.command(), tmp_path) and still_registered(winner.command(), tmp_path)
    assert design.cost_cpu_hours([loser, winner]) == LM_ARMS["grpo"].cpu_hours
    assert design.cost_cpu_hours([design._grpo_run("geneseq", 3e-4, 0), design._grpo_run("geneseq", 1e-4, 0)]) == 2 * LM_ARMS["grpo"].cpu_hours

    monkeypatch.setattr(design, "LM_RECORDS", tmp_path)
    monkeypatch.setattr(design, "LM_RUNS", design.lm_runs(tmp_path / "none"))  # the plan made before seed 0 chose
    assert main(["pipeline", "--dry-run", "--stages", "lm_policy"]) == 0
    lines = capsys.readouterr().out.splitlines()
    skipped = [lines[i - 1] for i, line in enumerate(lines) if "skipped" in line]
    assert skipped == [f"    fgpo {' '.join(loser.command())}"]


def test_the_chapters_transfer_table_by_hand(tmp_path):
    """Two hand-made records (FGPO and GRPO) scored on two reasoners' tables, one holding only some of the test
    questions: every score, the untrained rows and the paired difference are what a hand computation gives."""
    import json

    from fgpo_lib.study.lm_report import load_records, transfer_results
    from fgpo_lib.study.protocol_results import paired_comparison

    space = SubsetSpace(2, tool_names=("composition", "knn"))  # subsets: 0 none, 1 {0}, 2 {1}, 3 {0,1}
    ids = ["q0", "q1", "q2", "q3"]
    train = RewardTable(np.array([[0, 1, 0, 1], [1, 1, 0, 0], [0, 0, 0, 1], [0, 1, 1, 1]], np.float32), ids, space)
    other = RewardTable(np.array([[1, 0, 0, 0], [0, 0, 1, 1]], np.float32), ["q2", "q0"], space)
    train.save(tmp_path / "geneturing__qwen2.5-coder-0.5b__4tools.npz")
    other.save(tmp_path / "geneturing__smollm2-135m__4tools.npz")
    from fgpo_lib.study.lm_runs import LM_RUNS

    names = {arm: next(r.name for r in LM_RUNS if (r.benchmark, r.arm, r.role) == ("geneturing", arm, "main")) for arm in ("fgpo", "grpo")}
    for arm, scoring, generation in (("fgpo", [1, 0, 3, 2], [1, 0, 3, 2]), ("grpo", [3, 3, 0, 0], [None, 3, None, 0])):
        rec = {"table": {"tools": ["composition", "knn"]}, "reasoner_calls": 64,
               "test": {"question_ids": ids, "scoring": {"choices": scoring}, "generation": {"choices": generation}}}
        (tmp_path / f"{names[arm]}.json").write_text(json.dumps(rec))
    records = load_records(tmp_path)
    assert sorted(records) == sorted(names.values())
    results, settings = transfer_results(records, "scoring", tmp_path)
    own, moved = results["GeneTuring × Qwen2.5-Coder-0.5B"], results["GeneTuring × SmolLM2-135M"]
    assert own["FGPO"].scores.tolist() == [[1, 1, 1, 1]] and own["GRPO (TRL)"].scores.tolist() == [[1, 0, 0, 0]]
    assert moved["FGPO"].scores.tolist() == [[0, 0]]  # q0 chose {0} (reward 0 there), q2 chose {0,1} (0)
    assert moved["GRPO (TRL)"].scores.tolist() == [[1, 1]]  # q0 chose {0,1} (1 there), q2 chose none (1)
    assert own["No-Tool"].scores.tolist() == [[0, 1, 0, 0]] and own["Oracle"].scores.tolist() == [[1, 1, 1, 1]]
    assert own["Random"].scores.tolist() == [[0.5, 0.5, 0.25, 0.75]] and own["All-Tools"].scores.tolist() == [[1, 0, 1, 1]]
    assert settings.set_index("reasoner").loc["smollm2-135m", "questions"] == 2
    assert settings.set_index("reasoner")["training table"].to_dict() == {"qwen2.5-coder-0.5b": True, "smollm2-135m": False}
    diff = paired_comparison({"own": own}, "FGPO", "GRPO (TRL)").iloc[0]
    assert diff["FGPO - GRPO (TRL)"] == pytest.approx(75.0) and (diff["a only"], diff["b only"]) == (3, 0)
    generated, _ = transfer_results(records, "generation", tmp_path)  # a format failure scores the no-tool cell
    assert generated["GeneTuring × Qwen2.5-Coder-0.5B"]["GRPO (TRL)"].scores.tolist() == [[0, 0, 0, 0]]
    # a second FGPO seed is a second row, in seed order, not a replacement: it picks no tool everywhere (q1 only scores)
    second = next(r.name for r in LM_RUNS if (r.benchmark, r.arm, r.role, r.seed) == ("geneturing", "fgpo", "main", 1))
    (tmp_path / f"{second}.json").write_text(json.dumps({"table": {"tools": ["composition", "knn"]}, "reasoner_calls": 64,
                                                          "test": {"question_ids": ids, "scoring": {"choices": [0, 0, 0, 0]}, "generation": {"choices": [0, 0, 0, 0]}}}))
    own = transfer_results(load_records(tmp_path), "scoring", tmp_path)[0]["GeneTuring × Qwen2.5-Coder-0.5B"]
    assert own["FGPO"].scores.tolist() == [[1, 1, 1, 1], [0, 1, 0, 0]] and own["FGPO"].calls.tolist() == [64, 64]
    diff = paired_comparison({"own": own}, "FGPO", "GRPO (TRL)").iloc[0]
    assert diff["FGPO - GRPO (TRL)"] == pytest.approx(100 * (5 / 8 - 1 / 4))  # over both seeds and the four questions


def test_the_chapters_decoding_pending_and_linear_head_tables_by_hand(tmp_path, monkeypatch):
    """decoding_frame, pending_frame and linear_head_frame on hand-made records and a hand-made protocol result:
    every number is what a hand computation gives."""
    import json

    from fgpo_lib.study import lm_runs as runs, lm_report as report
    from fgpo_lib.study.protocol import ArmResult
    from fgpo_lib.study.protocol_results import save_protocol

    ids = ["q0", "q1", "q2", "q3"]
    rec = {"table": {"reasoner": "qwen2.5-coder-0.5b"}, "reasoner_calls": 64,
           "test": {"question_ids": ids, "scoring": {"scores": [1, 0, 1, 1], "sizes": [1, 2, 1, 0], "format_failures": 0},
                    "generation": {"scores": [1, 0, 0, 0], "sizes": [1, 2, 0, 0], "format_failures": 2}}}
    name = next(r.name for r in runs.LM_RUNS if (r.benchmark, r.arm, r.role, r.seed) == ("geneturing", "fgpo", "main", 0))
    (tmp_path / f"{name}.json").write_text(json.dumps(rec))
    records = report.load_records(tmp_path)
    dec = report.decoding_frame(records).iloc[0]
    assert (dec["candidate scoring"], dec["free generation"], dec["generation - scoring"]) == (75.0, 25.0, -50.0)
    assert (dec["format failures (%)"], dec["tools/q scoring"], dec["tools/q generation"]) == (50.0, 1.0, 0.75)
    pending = report.pending_frame(tmp_path)
    assert len(pending) == len(runs.lm_runs(tmp_path)) - 1 and name not in set(pending.run)
    assert pending.command.iloc[0].startswith("fgpo lm-train --table ")
    # the linear head's FGPO on the same table: 2 seeds over 5 questions, of which the record tested 4
    space = SubsetSpace(2, tool_names=("composition", "knn"))
    table = RewardTable(np.zeros((5, 4), np.float32), ["q4", *ids], space)
    table.save(tmp_path / "t.npz")
    scores = np.array([[0, 1, 1, 0, 0], [0, 1, 0, 0, 1]], float)  # columns q4, q0..q3
    sizes = np.array([[2, 1, 1, 1, 1], [2, 1, 1, 1, 2]], float)
    arm = ArmResult("FGPO", scores, scores, sizes, np.zeros((2, 5), np.int64), np.zeros(2))
    study = tmp_path / "study"
    save_protocol({"4 tools": {"FGPO": arm}}, {"4 tools": tmp_path / "t.npz"}, study / "results" / "geneturing__qwen2.5-coder-0.5b" / "protocol.json",
                  "geneturing", "qwen2.5-coder-0.5b")
    row = report.linear_head_frame(records, study).iloc[0]
    assert row["questions"] == 4 and row["language model (LoRA)"] == 75.0
    assert row["linear head"] == pytest.approx(100 * (1 + 0.5 + 0 + 0.5) / 4)  # q0: 1, q1: 0.5, q2: 0, q3: 0.5
    assert row["tools/q, linear head"] == pytest.approx((2 + 2 + 2 + 3) / 8) and row["tools/q, language model"] == 1.0


@pytest.mark.parametrize("arm", ["fgpo", "grpo", "sft"])
def test_every_arm_trains_after_the_format_warm_start(arm):
    """The warm start is TRL's SFTTrainer with gradient checkpointing on (set explicitly, for memory); with it on, the
    model drops the prompt's KV cache in training mode, and FGPO's shared-prompt scoring failed on its first update
    after a 12-minute warm start. The FGPO arm turns it off on the model, so each arm runs after the warm start, as
    ``run_lm_arm`` chains them."""
    from fgpo_lib.lm_policy.fgpo_arm import LMFGPOConfig, train_fgpo
    from fgpo_lib.lm_policy.grpo_arm import LMGRPOConfig, train_grpo
    from fgpo_lib.lm_policy.sft_arm import LMSFTConfig, train_sft
    from fgpo_lib.lm_policy.warmup import FormatWarmup, format_warmup

    table, tokenizer = _table(), _tokenizer()
    model = _model(tokenizer)
    splits = lm_splits(table, max_train=8)
    n_train = len(splits["train"])
    format_warmup(model, tokenizer, table, splits["train"], FormatWarmup(epochs=1, lr=1e-2, batch_questions=4))
    assert model.is_gradient_checkpointing
    if arm == "fgpo":
        rec = train_fgpo(model, tokenizer, table, splits, LMFGPOConfig(batch_questions=4, epochs=4 / n_train, eval_every=1, lr=1e-2))
    elif arm == "grpo":
        rec = train_grpo(model, tokenizer, table, splits, LMGRPOConfig(group_size=2, questions_per_step=1, budget=2 / (n_train * table.n_subsets), max_completion_length=8, eval_every=1, lr=1e-2))
    else:
        rec = train_sft(model, tokenizer, table, splits, LMSFTConfig(batch_questions=4, epochs=4 / n_train, eval_every=1, lr=1e-2))
    assert [p["step"] for p in rec["curve"]] == [0, 1] and model.is_gradient_checkpointing == (arm != "fgpo")


class _Killed(Exception):
    """Stands for the process being killed in the middle of a step."""


def _kill_on_call(n: int, fn):
    """``fn`` that raises :class:`_Killed` on its ``n``-th call."""
    calls = {"n": 0}

    def wrapped(*a, **k):
        calls["n"] += 1
        if calls["n"] == n:
            raise _Killed
        return fn(*a, **k)

    return wrapped


def _without_seconds(curve):
    return [{k: v for k, v in p.items() if k != "seconds"} for p in curve]


@pytest.mark.parametrize("tie_break", ["first", "expected"])
def test_a_killed_fgpo_run_resumes_to_the_uninterrupted_result(tmp_path, monkeypatch, tie_break):
    """Killed in its third update (after the dev checkpoint of the second), FGPO's loop started again resumes from
    that checkpoint and ends with exactly the uninterrupted run's curve and test choices, under either tie break (the
    first rule's checkpoint, kept under "expected", carried over too); the record's seconds span both sessions."""
    from fgpo_lib.lm_policy import fgpo_arm
    from fgpo_lib.lm_policy.fgpo_arm import LMFGPOConfig, train_fgpo
    from fgpo_lib.lm_policy.resume import RunCheckpoint

    table, tokenizer = _table(), _tokenizer()
    splits = lm_splits(table, max_train=8)
    cfg = LMFGPOConfig(batch_questions=4, epochs=16 / len(splits["train"]), eval_every=2, lr=1e-2, tie_break=tie_break)
    whole = train_fgpo(_model(tokenizer), tokenizer, table, splits, cfg)
    assert [p["step"] for p in whole["curve"]] == [0, 2, 4]
    ident = {"run": "fgpo-test"}
    monkeypatch.setattr(fgpo_arm, "expected_reward_loss", _kill_on_call(2 * 4 + 1, fgpo_arm.expected_reward_loss))  # 4 questions an update
    with pytest.raises(_Killed):
        train_fgpo(_model(tokenizer), tokenizer, table, splits, cfg, checkpoint=RunCheckpoint(tmp_path / "p", ident))
    monkeypatch.undo()
    held = RunCheckpoint(tmp_path / "p", ident).load_arm()
    assert held["step"] == 2
    resumed = train_fgpo(_model(tokenizer), tokenizer, table, splits, cfg, checkpoint=RunCheckpoint(tmp_path / "p", ident))
    assert resumed["curve"][:2] == held["dev"]["curve"]  # carried over, seconds and all: resumed, not rerun
    assert _without_seconds(resumed["curve"]) == _without_seconds(whole["curve"])
    assert resumed["selected_step"] == whole["selected_step"]
    assert resumed["test"]["scoring"]["choices"] == whole["test"]["scoring"]["choices"]
    assert resumed["test_last_tie"] == whole["test_last_tie"]
    assert resumed["test_first_rule"] == whole["test_first_rule"]
    trained = [p for p in whole["curve"] if p["step"] > 0]
    first = next(p["step"] for p in trained if p["dev_score"] == max(q["dev_score"] for q in trained))
    assert (whole["test_first_rule"] or {}).get("step") == (first if tie_break == "expected" else None)
    assert resumed["test"]["generation"]["texts"] == whole["test"]["generation"]["texts"]


@pytest.mark.parametrize("arm", ["grpo", "sft"])
def test_a_killed_trl_run_resumes_from_its_last_checkpoint(tmp_path, monkeypatch, arm):
    """TRL's arms, killed in step 3 after their checkpoint of step 2, resume through the trainer's own checkpoint:
    the run ends at its last step with one dev point per step and, for GRPO, the reward function's counters carried
    over (a dead-group rate and a no-tool call for every step)."""
    from fgpo_lib.lm_policy.dev import DevSelector
    from fgpo_lib.lm_policy.grpo_arm import LMGRPOConfig, train_grpo
    from fgpo_lib.lm_policy.resume import RunCheckpoint
    from fgpo_lib.lm_policy.sft_arm import LMSFTConfig, train_sft

    table, tokenizer = _table(), _tokenizer()
    splits = lm_splits(table, max_train=8)
    n_train = len(splits["train"])
    if arm == "grpo":
        cfg = LMGRPOConfig(group_size=2, questions_per_step=1, budget=8 / (n_train * table.n_subsets), max_completion_length=8, eval_every=1, lr=1e-2)
        train = train_grpo
    else:
        cfg = LMSFTConfig(batch_questions=4, epochs=16 / n_train, eval_every=1, lr=1e-2)
        train = train_sft
    ident = {"run": arm}
    # the dev evaluation after step 3's update is the 4th (step 0 is the first): kill it there, before step 3's save
    monkeypatch.setattr(DevSelector, "__call__", _kill_on_call(4, DevSelector.__call__))
    with pytest.raises(_Killed):
        train(_model(tokenizer), tokenizer, table, splits, cfg, checkpoint=RunCheckpoint(tmp_path / "p", ident))
    monkeypatch.undo()
    folder, held = RunCheckpoint(tmp_path / "p", ident).load_trl_state()
    assert folder.endswith("checkpoint-2") and [p["step"] for p in held["dev"]["curve"]] == [0, 1, 2]
    rec = train(_model(tokenizer), tokenizer, table, splits, cfg, checkpoint=RunCheckpoint(tmp_path / "p", ident))
    assert [p["step"] for p in rec["curve"]] == [0, 1, 2, 3, 4]
    assert rec["curve"][:3] == held["dev"]["curve"]  # carried over, seconds and all: resumed, not rerun
    if arm == "grpo":
        assert len(rec["dead_groups"]["live"]) == 4 and rec["completions"] == 8 and rec["reasoner_calls"] == 4


def test_a_partial_run_of_other_settings_or_a_broken_checkpoint_is_a_named_error(tmp_path):
    from fgpo_lib.lm_policy.resume import RunCheckpoint

    RunCheckpoint(tmp_path / "p", {"arm": "fgpo", "config": {"lr": 0.001}})
    with pytest.raises(LMPolicyError, match=r"other settings \(config\)"):
        RunCheckpoint(tmp_path / "p", {"arm": "fgpo", "config": {"lr": 0.0003}})
    (tmp_path / "p" / "arm.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(LMPolicyError, match="arm.pt cannot be read"):
        RunCheckpoint(tmp_path / "p", {"arm": "fgpo", "config": {"lr": 0.001}}).load_arm()


def test_a_setting_added_after_a_partial_run_began_resumes_at_its_default_only(tmp_path):
    """A run began before its arm had ``entropy_coef`` (its identity lacks the key): the same run with the new field
    at its default resumes; with the field set, it is another run, a named error."""
    from fgpo_lib.lm_policy.resume import RunCheckpoint

    RunCheckpoint(tmp_path / "p", {"arm": "grpo", "config": {"lr": 0.001}})
    defaults = {"lr": 3e-4, "entropy_coef": 0.0}
    RunCheckpoint(tmp_path / "p", {"arm": "grpo", "config": {"lr": 0.001, "entropy_coef": 0.0}}, config_defaults=defaults)
    with pytest.raises(LMPolicyError, match=r"other settings \(config\)"):
        RunCheckpoint(tmp_path / "p", {"arm": "grpo", "config": {"lr": 0.001, "entropy_coef": 0.01}}, config_defaults=defaults)
    RunCheckpoint(tmp_path / "q", {"arm": "grpo", "config": {"lr": 0.001, "entropy_coef": 0.01}})
    with pytest.raises(LMPolicyError, match=r"other settings \(config\)"):  # a default never hides a setting the run had
        RunCheckpoint(tmp_path / "q", {"arm": "grpo", "config": {"lr": 0.001, "entropy_coef": 0.0}}, config_defaults=defaults)


def test_clip_higher_is_named_inert_and_trls_entropy_bonus_reaches_its_trainer(tmp_path):
    """This arm takes one optimizer step per generated batch, so epsilon_high changes no update and lm-train says so
    (the committed clip-higher record shows it: TRL's high clip ratio is 0 at every step); the entropy settings reach
    TRL's GRPOConfig as set."""
    from fgpo_lib.lm_policy.grpo_arm import LMGRPOConfig, grpo_args, inert_settings

    assert LMGRPOConfig().inert() == [] and LMGRPOConfig(entropy_coef=0.01).inert() == []
    assert ["epsilon_high 0.28 changes no update" in m for m in LMGRPOConfig(epsilon_high=0.28).inert()] == [True]
    assert inert_settings({"epsilon_high": 0.28}) == LMGRPOConfig(epsilon_high=0.28).inert()
    args = grpo_args(LMGRPOConfig(entropy_coef=0.01, use_adaptive_entropy=True, epsilon_high=0.28), str(tmp_path), 3)
    assert (args.entropy_coef, args.use_adaptive_entropy, args.epsilon_high, args.num_iterations, args.steps_per_generation) == (0.01, True, 0.28, 1, 1)
    with pytest.raises(ValueError, match="entropy_coef"):
        LMGRPOConfig(entropy_coef=-0.1)


def test_lm_train_keeps_a_partial_run_and_resumes_it_after_the_warm_start(tmp_path, monkeypatch, capsys):
    """``run_lm_arm`` with ``out`` (what ``fgpo lm-train --out`` calls), on the tiny model: a run killed in FGPO's
    first update leaves ``OUT.partial/`` with the warm-started adapter; started again, it skips the warm start, says
    it resumes, writes the same record as an uninterrupted run, and removes the partial folder."""
    import json

    from fgpo_lib.lm_policy import fgpo_arm, model as model_mod
    from fgpo_lib.lm_policy.runner import run_lm_arm
    from fgpo_lib.lm_policy.warmup import FormatWarmup

    tokenizer = _tokenizer()
    monkeypatch.setattr(model_mod, "load_backbone", lambda backbone, dtype, device="cpu": (_model(tokenizer, lora=False), tokenizer))
    table = _table()
    table.save(tmp_path / "t.npz")
    args = (str(tmp_path / "t.npz"), "fgpo", {"batch_questions": 4, "epochs": 1.0, "eval_every": 1, "lr": 1e-2})
    kw = {"max_train": 8, "warmup": FormatWarmup(epochs=0.5, batch_questions=4)}
    whole = run_lm_arm(*args, out=tmp_path / "whole.json", **kw)
    assert json.loads((tmp_path / "whole.json").read_text())["test"] == json.loads(json.dumps(whole["test"]))
    assert not (tmp_path / "whole.json.partial").exists()
    with monkeypatch.context() as m:
        m.setattr(fgpo_arm, "expected_reward_loss", _kill_on_call(1, fgpo_arm.expected_reward_loss))
        with pytest.raises(_Killed):
            run_lm_arm(*args, out=tmp_path / "r.json", **kw)
    assert (tmp_path / "r.json.partial" / "warm.pt").exists() and not (tmp_path / "r.json").exists()
    capsys.readouterr()
    again = run_lm_arm(*args, out=tmp_path / "r.json", **kw)
    assert "resuming the partial run" in capsys.readouterr().err
    assert again["format_warmup"]["steps"] == whole["format_warmup"]["steps"]
    assert again["test"]["scoring"]["choices"] == whole["test"]["scoring"]["choices"] and not (tmp_path / "r.json.partial").exists()


def test_the_chapters_calls_curve_by_hand(tmp_path):
    """calls_curve_frame on two hand-made records: FGPO (6 training questions, batches of 4, 4 subsets: 24 cells)
    has paid 0, 16 and 24 calls at steps 0, 1 and 2; GRPO's calls are the counts its dev points carry."""
    import json

    from fgpo_lib.study import lm_report as report
    from fgpo_lib.study.lm_runs import LM_RUNS

    fgpo = {"splits": {"train": list("abcdef")}, "reasoner_calls": 24, "config": {"batch_questions": 4},
            "curve": [{"step": s, "dev_score": d} for s, d in ((0, 0.1), (1, 0.2), (2, 0.25))]}
    grpo = {"splits": {"train": list("abcdef")}, "reasoner_calls": 9, "config": {},
            "curve": [{"step": 0, "dev_score": 0.1}, {"step": 20, "dev_score": 0.3, "reasoner_calls": 9}]}
    main = {(r.benchmark, r.arm): r.record.name for r in LM_RUNS if r.role == "main"}
    (tmp_path / main["geneturing", "fgpo"]).write_text(json.dumps(fgpo))
    (tmp_path / main["geneturing", "grpo"]).write_text(json.dumps(grpo))
    df = report.calls_curve_frame(report.load_records(tmp_path)).set_index(["arm", "step"])
    assert [df.loc[("FGPO", s), "calls"] for s in (0, 1, 2)] == [0, 16, 24]
    assert df.loc[("FGPO", 2), "dev score"] == 25.0
    assert [df.loc[(report.ARM_LABELS["grpo"], s), "calls"] for s in (0, 20)] == [0, 9]


def test_the_format_anchor_keeps_more_mass_on_the_candidates():
    """Two FGPO updates at a high rate on the tiny model, with and without the format anchor: with it, the training
    questions' chance of writing some candidate ends higher (the anchor's whole purpose)."""
    import torch

    from fgpo_lib.lm_policy.data import candidate_token_ids, prompt_text
    from fgpo_lib.lm_policy.fgpo_arm import LMFGPOConfig, train_fgpo
    from fgpo_lib.lm_policy.candidate_scores import candidate_scores

    table, tokenizer = _table(), _tokenizer()
    splits = lm_splits(table, max_train=8)
    cands = candidate_token_ids(tokenizer, table)
    log_mass = {}  # mean over the training questions of log sum_S p(y_S | x); the masses themselves underflow here
    for weight in (0.0, 1.0):
        model = _model(tokenizer)
        train_fgpo(model, tokenizer, table, splits, LMFGPOConfig(batch_questions=4, epochs=8 / len(splits["train"]), eval_every=2, lr=3e-2, format_weight=weight))
        with torch.no_grad():
            log_mass[weight] = np.mean([float(torch.logsumexp(candidate_scores(model, tokenizer(prompt_text(tokenizer, table.questions[r], 2), add_special_tokens=False,
                                                                                                      return_tensors="pt")["input_ids"][0], cands, False), 0))
                                        for r in splits["train"]])
    assert log_mass[1.0] > log_mass[0.0] + 1, log_mass
