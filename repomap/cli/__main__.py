"""`python -m repomap.cli`: the click commands."""

import sys

from repomap.cli.main import main

sys.exit(main())
