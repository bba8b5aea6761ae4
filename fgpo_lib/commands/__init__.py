"""The command line's subcommands, one module each (``add_arguments(parser)`` and ``run(args) -> exit status``),
named as the library module it runs; each imports that module only when it runs, so every ``--help`` is quick.

:data:`fgpo_lib.cli.COMMANDS` is the table that maps each subcommand to its module and declares its output files;
``precompute`` lives with its engine (:mod:`fgpo_lib.precompute.command`) and ``pipeline`` in :mod:`fgpo_lib.pipeline`.

* :mod:`.train_flags`: the training flags every training command shares (one per field of ``TrainConfig`` and of
  each method's settings, grouped by method; ``--help`` the common ones, ``--help-all`` every one) and the config;
* :mod:`.train`, :mod:`.compare`, :mod:`.frontier`: train, compare, the cost-accuracy frontier;
* :mod:`.select`, :mod:`.calibrate`: tools picked for new questions by a saved selector, and its fallback threshold;
* :mod:`.examples`, :mod:`.table_info`, :mod:`.verify`, :mod:`.crossbuild`, :mod:`.plan`: tables;
* :mod:`.score`, :mod:`.questions`, :mod:`.coverage`: the built-in benchmarks;
* :mod:`.scaling`, :mod:`.ondemand`, :mod:`.lm_policy`, :mod:`.study`: the chapters' runs and the book.
"""
