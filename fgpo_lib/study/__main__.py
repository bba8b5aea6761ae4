"""``python -m fgpo_lib.study``: the same as ``fgpo study``."""

import sys

from ..cli import main

sys.exit(main(["study", *sys.argv[1:]]))
