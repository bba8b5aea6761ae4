"""The study: every (benchmark, reasoner) setting run through papermill, the summary notebooks, then the book.

* :mod:`~fgpo_lib.study.runner`: settings (derived from the benchmark and reasoner registries), tables, the run;
* :mod:`~fgpo_lib.study.earlier_results`: one setting's saved runs and the cross-setting tables;
* :mod:`~fgpo_lib.study.book`: notebook execution and the ``jupyter-book`` build;
* the chapters' back ends: :mod:`~fgpo_lib.study.protocol` and its results (the paper's protocol),
  :mod:`~fgpo_lib.study.paper_analyses`, and the language-model chapter's :mod:`~fgpo_lib.study.lm_runs` (its run
  registry), :mod:`~fgpo_lib.study.lm_report`, :mod:`~fgpo_lib.study.lm_routing` and
  :mod:`~fgpo_lib.study.lm_decomposition`.
"""

from .runner import SETTINGS, run_study, setting_name, table_for

__all__ = ["SETTINGS", "run_study", "setting_name", "table_for"]
