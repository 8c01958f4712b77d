"""`python -m repomap`: the same as the `repomap` console script (fast search-text included)."""

import sys

from repomap.cli.fast import main

sys.exit(main())
