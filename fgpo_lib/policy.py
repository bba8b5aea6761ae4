"""`SubsetPolicy`: question features to a softmax distribution over the subsets of a :class:`SubsetSpace`.

Shapes: ``features: (n_questions, d) float32`` -> ``logits: (n_questions, n_subsets)``, columns in the space's
canonical order; ``pi(S|q) = softmax(logits[q])[S]``.

Two parameterizations:

* ``flat``: one logit per subset, ``logits = W x + b`` with ``W: (n_subsets, d)``. Any distribution over subsets
  is reachable; it knows nothing about which subsets share tools.
* ``factorized``: per-tool scores plus a size term, ``logit(S|q) = sum_{t in S} u_t(q) + v_{|S|}(q)``, with
  ``u = U x`` (one score per tool) and ``v = V x`` (one score per size). ``n_tools + n_sizes`` outputs instead of
  ``n_subsets``, so it scales to larger tool sets and shares evidence across subsets that contain the same tool.

Both map features linearly, or through one tanh hidden layer if ``hidden > 0``. Output weights start at zero, so
every policy starts at its prior: uniform over subsets unless ``prior`` is given. A prior (for example an LLM's
zero-shot tool preferences) is a fixed ``(n_subsets,)`` log-probability offset added to every question's logits.
"""

from __future__ import annotations

import torch
from torch import nn

from .subsets import SubsetSpace

PARAMETERIZATIONS = ("flat", "factorized")


class SubsetPolicy(nn.Module):
    """Softmax policy over tool subsets.

    Args:
        n_features: ``d``, the feature dimension.
        space: the subset space; fixes ``n_subsets`` and the canonical column order.
        parameterization: ``'flat'`` or ``'factorized'`` (module doc).
        hidden: width of one tanh hidden layer; 0 for a linear map.
        prior: ``(n_subsets,)`` initial probabilities (positive, summing to 1), or ``None`` for uniform.
    """

    def __init__(self, n_features: int, space: SubsetSpace, parameterization: str = "flat", hidden: int = 0, prior=None) -> None:
        super().__init__()
        if parameterization not in PARAMETERIZATIONS:
            raise ValueError(f"unknown parameterization {parameterization!r}; use one of {PARAMETERIZATIONS}")
        self.space = space
        self.parameterization = parameterization
        self.body = nn.Sequential(nn.Linear(n_features, hidden), nn.Tanh()) if hidden > 0 else nn.Identity()
        width = hidden if hidden > 0 else n_features
        if parameterization == "flat":
            n_out = space.n_subsets
        else:
            sizes = torch.tensor(space.sizes)
            n_sizes = int(space.max_size - space.min_size + 1)
            # (n_subsets, n_tools + n_sizes): which tool scores and which size score each subset sums
            design = torch.cat([torch.tensor(space.masks, dtype=torch.float32), nn.functional.one_hot(sizes - space.min_size, n_sizes).float()], dim=1)
            self.register_buffer("design", design)
            n_out = design.shape[1]
        if prior is None:
            prior_logits = torch.zeros(space.n_subsets)
        else:
            prior = torch.as_tensor(prior, dtype=torch.float64)
            if prior.shape != (space.n_subsets,) or not bool((prior > 0).all()) or abs(float(prior.sum()) - 1) > 1e-6:
                raise ValueError(f"prior must be {space.n_subsets} positive probabilities summing to 1")
            prior_logits = prior.log().float()
        self.register_buffer("prior_logits", prior_logits)
        self.head = nn.Linear(width, n_out)
        nn.init.zeros_(self.head.weight)
        nn.init.zeros_(self.head.bias)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        """``(n, d) -> (n, n_subsets)`` logits."""
        out = self.head(self.body(features))
        if self.parameterization == "factorized":
            out = out @ self.design.T
        return out + self.prior_logits

    def log_probs(self, features: torch.Tensor) -> torch.Tensor:
        """``(n, n_subsets)`` log pi(S|q)."""
        return torch.log_softmax(self(features), dim=-1)
