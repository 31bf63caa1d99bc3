"""Every berth command and every flag says what it is for (`berth CMD --help`)."""

from __future__ import annotations

import argparse

from berth.cli import build_parser


def test_every_command_and_flag_has_help() -> None:
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    described = {c.dest for c in commands._choices_actions if c.help}
    missing = [name for name in commands.choices if name not in described]
    for name, sub in commands.choices.items():
        missing += [f"{name} {a.option_strings[0] if a.option_strings else a.dest}" for a in sub._actions if not a.help]
    assert not missing, missing
