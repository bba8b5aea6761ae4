import numpy as np
import pytest

from fgpo_lib import RewardTable, SubsetSpace


@pytest.fixture
def three_tool_table() -> RewardTable:
    """A hand-built 3-tool table: 4 questions x 8 subsets (empty set included)."""
    space = SubsetSpace(3, tool_names=("gene_search", "snp_lookup", "blast"))
    rewards = np.array(
        [
            [0, 1, 0, 0, 1, 1, 0, 0.5],
            [0, 0, 1, 0, 1, 0, 1, 1],
            [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5],  # constant: unlearnable
            [0, 0, 0, 1, 0, 1, 1, 1],
        ],
        dtype=np.float32,
    )
    return RewardTable(rewards, ["q0", "q1", "q2", "q3"], space, tasks=["a", "a", "b", "b"], split=["train", "train", "train", "test"])
