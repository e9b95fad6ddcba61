"""Entry point of the standalone (PyInstaller) kubectl-dra: the same as the console script.

Krew runs it through a symlink named ``kubectl-dra`` (``kubectl-<name>`` with dashes turned
into underscores), so the CLI derives its usage name from ``sys.argv[0]``; the bootloader
resolves the symlink through /proc/self/exe to find the bundled ``_internal`` directory.
"""

import sys

from kubectl_dra.cli import main

if __name__ == "__main__":
    sys.exit(main())
