"""`python -m repomap`: the same as the `repomap` console script (search-text's fast path)."""

import sys

from repomap.cli.fastpath import main

sys.exit(main())
