"""`python -m repomap.cli`: the same as the `repomap` console script."""

import sys

from repomap.cli.main import main

sys.exit(main())
