"""The command line's subcommands, one module each (``add_arguments(parser)`` and ``run(args) -> exit status``).

:data:`fgpo_lib.cli.COMMANDS` is the table that maps each subcommand to its module; a module is imported only when
its subcommand runs, so ``fgpo --help`` imports none of them. The subcommands that belong to a package of their own
live there (``precompute`` in :mod:`fgpo_lib.precompute.command`, ``lm-train`` and ``lm-eval`` in
:mod:`fgpo_lib.lm_policy.commands`, ``scaling``, ``ondemand``, ``pipeline`` and ``study`` in their modules).

* :mod:`.train_flags`: the training flags every training command shares (one per field of ``TrainConfig`` and of
  each method's settings, grouped by method) and the config they build;
* :mod:`.train`, :mod:`.compare`, :mod:`.frontier`, :mod:`.select`: train, compare, the cost-accuracy frontier, and
  tools picked for new questions by a saved selector;
* :mod:`.example_table`, :mod:`.table_info`, :mod:`.verify_table`, :mod:`.cross_build`, :mod:`.plan`: tables;
* :mod:`.score`, :mod:`.questions`, :mod:`.coverage`: the built-in benchmarks.
"""
