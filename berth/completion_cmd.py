"""`berth completion bash|zsh`: a shell completion script for berth, written from its own argument
parser (commands, flags, the choices of each), as `kubectl completion` writes one.

    source <(berth completion bash)                     # bash; put it in ~/.bashrc to keep it
    autoload -U bashcompinit && bashcompinit && source <(berth completion zsh)    # zsh
"""

from __future__ import annotations

import argparse
import shlex
import sys
from typing import Any


def register(sub: Any, *, whole: argparse.ArgumentParser) -> None:
    """The `completion` command, writing the script for `whole` (berth's own parser)."""
    p: argparse.ArgumentParser = sub.add_parser("completion", help="print a shell completion script (bash or zsh)",
                                                description=__doc__.splitlines()[0] if __doc__ else None,
                                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                                epilog="\n".join(__doc__.splitlines()[3:5]) if __doc__ else None)
    p.add_argument("shell", choices=("bash", "zsh"), help="the shell to complete in (zsh through bashcompinit)")
    p.set_defaults(run=run, whole_parser=whole)


def run(args: argparse.Namespace) -> int:
    sys.stdout.write(script(args.whole_parser))
    return 0


def _words(items: Any) -> str:
    return shlex.quote(" ".join(str(i) for i in items))


def script(parser: argparse.ArgumentParser) -> str:
    """The bash function: the command at position 1, then its flags, its positionals' choices, and
    each flag's choices after it; anything else falls back to file names."""
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    flag_cases, word_cases = [], []
    for name, sub in sorted(commands.choices.items()):
        flags = [o for a in sub._actions for o in a.option_strings]
        positional = [c for a in sub._actions if not a.option_strings and a.choices for c in a.choices]
        word_cases.append(f"    {name}) words={_words(flags + positional)} ;;")
        for action in sub._actions:
            if action.option_strings and action.choices:
                pattern = "|".join(f"{name}:{o}" for o in action.option_strings)
                flag_cases.append(f"    {pattern}) COMPREPLY=($(compgen -W {_words(action.choices)} -- \"$cur\")); "
                                  "return ;;")
    top = _words(sorted(commands.choices) + ["--help", "--version"])
    return "\n".join([
        "# berth shell completion (berth completion bash); generated from berth's own arguments",
        "_berth() {",
        '  local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" cmd="${COMP_WORDS[1]}" words',
        "  if [[ $COMP_CWORD -eq 1 ]]; then",
        f'    COMPREPLY=($(compgen -W {top} -- "$cur")); return',
        "  fi",
        '  case "$cmd:$prev" in',
        *flag_cases,
        "  esac",
        '  case "$cmd" in',
        *word_cases,
        "    *) words= ;;",
        "  esac",
        '  COMPREPLY=($(compgen -W "$words" -- "$cur"))',
        "}",
        "complete -o default -F _berth berth",
        "",
    ])
