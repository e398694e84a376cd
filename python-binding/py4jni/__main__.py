"""The command line: ``python -m py4jni run ...`` runs a program written for py4j on
py4jni (py4jni/_switch.py is the switch, py4jni/_run.py the subcommand)."""
from __future__ import annotations

import sys

USAGE = """\
usage: python -m py4jni run [--inproc|--socket] [--classpath CP] [--entry-point CLASS]
                            script.py [args...]

Runs a program written for py4j on py4jni: its py4j imports resolve to py4jni, and the
gateway it makes embeds the JVM in this process (--socket: talks to a py4j GatewayServer,
as py4j does). `python -m py4jni run --help` describes each option."""


def main(argv: list[str]) -> int:
    """Dispatches the subcommand (only ``run`` exists); -h/--help prints the usage."""
    if argv and argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    if not argv or argv[0] != "run":
        print(USAGE, file=sys.stderr)
        return 2
    from ._run import run  # deferred: the usage text needs none of it
    return run(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
