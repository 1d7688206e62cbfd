"""The offline checker as one file to hand over: `build_checker(path)` writes
`sabot-check.pyz`, a zipapp (the standard library's `zipapp`) holding the `offline_check`
package's modules under `offline_check/` and a `__main__.py` that runs its command line.

    python3 sabot-check.pyz DOSSIER.json | EXPORT_DIR [--public-key HEX]

It needs Python and `cryptography` only, and runs isolated too (`python3 -I`: a zipapp's own
path is its first import path). `sabot audit checker --out FILE` writes it.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import zipapp
from pathlib import Path

from infra.audit import offline_check

NAME = "sabot-check.pyz"
PACKAGE = Path(offline_check.__file__).parent
MAIN = '''"""Sabot's offline checker of coup dossiers and regulator exports (see offline_check)."""

import sys

from offline_check.cli import main

sys.exit(main())
'''


def build_checker(path: Path) -> Path:
    """Write the checker zipapp to `path` (a folder: `sabot-check.pyz` in it), whole or not at
    all; the file written."""
    target = path / NAME if path.is_dir() else path
    target.parent.mkdir(parents=True, exist_ok=True)
    draft = target.with_name(f".{target.name}.{os.getpid()}.draft")
    with tempfile.TemporaryDirectory() as staging:
        source = Path(staging)
        (source / PACKAGE.name).mkdir()
        for module in PACKAGE.glob("*.py"):
            shutil.copyfile(module, source / PACKAGE.name / module.name)
        (source / "__main__.py").write_text(MAIN)
        try:
            zipapp.create_archive(source, draft, interpreter="/usr/bin/env python3",
                                  compressed=True)
            draft.replace(target)
        finally:
            draft.unlink(missing_ok=True)
    return target
