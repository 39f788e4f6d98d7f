"""``python -m modtok ...`` is the ``modtok`` command (so ``torchrun -m modtok lm-train ...`` works)."""

import sys

from modtok.ui.cli import main

if __name__ == "__main__":
    sys.exit(main())
