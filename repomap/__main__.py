"""`python -m repomap`: the same as the `repomap` console script (fast search-text included)."""

import sys

from .fastcli import main

sys.exit(main())
