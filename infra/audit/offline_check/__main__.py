"""`python -m infra.audit.offline_check PATH [--public-key HEX]`: the checker's command line
run from the project (the zipapp has its own entry, `infra.audit.checker_app`)."""

from __future__ import annotations

import sys

from .cli import main

sys.exit(main())
