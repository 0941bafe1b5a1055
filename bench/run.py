"""Script entry of the benchmark: ``python bench/run.py [--messages N] ...`` runs :func:`bot.jobs.bench.main`
(the same as ``python -m bot bench``). The benchmark itself lives in the package, so the package never imports
``bench/``."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from bot.jobs.bench import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
