"""fgpo: exact tool-subset policy optimization (FGPO) against sampled GRPO, over precomputed reward tables."""

from ._version import __version__
from .subsets import SubsetSpace, SubsetSpaceError  # noqa: E402
from .table import RewardTable, RewardTableError  # noqa: E402
from .policy import SubsetPolicy  # noqa: E402
from .train import TrainConfig, train  # noqa: E402

__all__ = ["RewardTable", "RewardTableError", "SubsetPolicy", "SubsetSpace", "SubsetSpaceError", "TrainConfig", "train", "__version__"]
