"""``python -m py4jni run [--inproc|--socket] [--classpath CP] [--entry-point CLASS]
script.py args...``: runs a program written for py4j on py4jni (see py4jni._switch and py4jni._run)."""
from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    """Dispatches the subcommand (only ``run`` exists)."""
    if not argv or argv[0] != "run":
        print(__doc__.strip(), file=sys.stderr)
        return 2
    from ._run import run
    return run(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
