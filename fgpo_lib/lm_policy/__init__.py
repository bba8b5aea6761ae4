"""The paper's own policy: a causal language model with a LoRA adapter that picks a tool subset for a question.

What a run is made of, bottom up:

* :mod:`.prompt`: the one prompt every arm uses (the tools as anonymous slots), the candidate answers
  ``<answer>i,j</answer>`` of a library, and the one parser of a generated answer.
* :mod:`.data`: what every arm reads from a reward table: the fixed split, the prompts, the candidates' tokens,
  GRPO's reward values, and the score of a choice (with its routing measures).
* :mod:`.model`: the backbone (a registry GGUF or a local Hugging Face folder) on a device, and its LoRA adapter.
* :mod:`.candidate_scores`: the log-probability of every candidate after the prompt, the prompt computed once (the
  paper's Eq. 4), and the losses on those scores.
* :mod:`.evaluate`: a policy's choices under candidate scoring and free generation, and the measures of ``q``.
* :mod:`.dev`: the dev points (score, routing, ``q``, dead-group measures) and the best checkpoint; the test evaluation.
* :mod:`.resume`: a killed run's partial state, and its resume.
* :mod:`.warmup`: the answer-format warm start every arm begins from, and the folder where runs share it.
* the arms, one file each: :mod:`.fgpo_arm` (the exact expected reward, or TPO's exact target, and the loop every
  candidate-scoring arm shares), :mod:`.sampled_arm` (FGPO's arm with GRPO's sampled estimator of the reward term),
  :mod:`.grpo_arm` (TRL's ``GRPOTrainer`` and its table reward) and :mod:`.sft_arm` (TRL's ``SFTTrainer``);
  :mod:`.trl_dev` ties TRL's trainers to the dev selection.
* :mod:`.arms`: the arm registry (:data:`~.arms.LM_ARMS`), one light row per arm: its module, label, cost rate,
  seeds, warm start and run settings.
* :mod:`.runner`: one run end to end and its record, and a record's test choices re-scored on another table (the
  transfer design).
* :mod:`.selector`: a trained adapter as a :class:`~fgpo_lib.selector.Selector`.

A library, below the chapters: it imports nothing of :mod:`fgpo_lib.study`. Its command lines are
:mod:`fgpo_lib.commands.lm_policy`; the chapter's run registry, report and routing are ``fgpo_lib/study/lm_*.py``.

Array convention: ``scores: (n_candidates,)`` in the canonical subset order of the library's
:class:`~fgpo_lib.subsets.SubsetSpace`; ``q = softmax(scores)``.
"""
