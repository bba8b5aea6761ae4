"""Worked examples of fgpo on agents of your own (not genomics): each a package whose module defines an
:class:`fgpo_lib.agent.AgentBenchmark` (``--benchmark examples.<name>.agent:BENCHMARK``)."""
