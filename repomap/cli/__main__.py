"""`python -m repomap.cli`: click's parser for every command, search-text included (what the
fast path of the `repomap` script is checked against)."""

import sys

from repomap.cli.main import main

sys.exit(main())
