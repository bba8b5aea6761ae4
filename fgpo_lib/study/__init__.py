"""The study: every (benchmark, reasoner) setting run through papermill, the summary notebooks, then the book.

* :mod:`~fgpo_lib.study.runner`: settings (derived from the benchmark and reasoner registries), tables, the run;
* :mod:`~fgpo_lib.study.earlier_results`: one setting's saved runs and the cross-setting tables;
* :mod:`~fgpo_lib.study.book`: notebook execution and the ``jupyter-book`` build.
"""

from .runner import SETTINGS, run_study, setting_name, table_for

__all__ = ["SETTINGS", "run_study", "setting_name", "table_for"]
