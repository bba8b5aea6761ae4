"""The paper's own policy: a causal language model with a LoRA adapter that picks a tool subset for a question.

* :mod:`~fgpo_lib.lm_policy.prompt`: the one prompt every arm uses (the tools as anonymous slots), the candidate
  answers ``<answer>i,j</answer>`` of a library, and the one parser of a generated answer.
* :mod:`~fgpo_lib.lm_policy.scoring`: the log-probability of every candidate after the prompt, with the prompt
  computed once and the candidates scored from its cache inside the autograd graph (the paper's Eq. 4: the per-token
  mean, or the sum for the length-normalisation ablation).

Array convention: ``scores: (n_candidates,)`` in the canonical subset order of the library's
:class:`~fgpo_lib.subsets.SubsetSpace`; ``q = softmax(scores)``.
"""
