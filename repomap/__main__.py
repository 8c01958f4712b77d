"""`python -m repomap`: the same as the `repomap` console script and `python -m repomap.cli`."""

import sys

from repomap.cli.main import main

sys.exit(main())
