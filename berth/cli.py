"""The `berth` command line."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from berth import (
    apply_cmd,
    bench_cmd,
    chaos_cmd,
    completion_cmd,
    delete_cmd,
    demo_cmd,
    describe_cmd,
    events_cmd,
    explain_cmd,
    generate_cmd,
    get_cmd,
    migrate_cmd,
    replay_cmd,
    simulate_cmd,
    up_cmd,
)

EXIT_INVALID_INPUT = 2


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("berth")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "0+unknown"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="berth",
                                     description="An event-sourced pod scheduler with kube-scheduler's semantics.")
    parser.add_argument("--version", action="version", version=f"berth {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    simulate_cmd.register(sub)
    for command in (generate_cmd, bench_cmd, up_cmd, demo_cmd, apply_cmd, get_cmd, describe_cmd, delete_cmd,
                    events_cmd, explain_cmd, replay_cmd, migrate_cmd, chaos_cmd):
        command.register(sub)
    completion_cmd.register(sub, whole=parser)  # it completes every command above
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
