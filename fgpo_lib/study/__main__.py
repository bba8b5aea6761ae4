"""``python -m fgpo_lib.study``: the same as ``fgpo study`` (the study layer does not import the command line)."""

import argparse
import sys

from .runner import add_arguments, run

parser = argparse.ArgumentParser(prog="python -m fgpo_lib.study", allow_abbrev=False, description=__doc__.splitlines()[0])
add_arguments(parser)
sys.exit(run(parser.parse_args()))
