"""The CLI reference as Markdown, generated from the click commands themselves: one section
per command (nested groups included) holding its `--help` text exactly as the terminal
prints it. `make docs` writes it to `docs/interfaces/cli.md`
(`python -m finkg.cli.reference docs/interfaces/cli.md`), where it reads on a code host as
well as on the built site, and a test fails when that file is not what the code generates.

>>> import click
>>> @click.group()
... def tool():
...     "A tool."
>>> @tool.command()
... @click.option("--n", default=1, help="How many.")
... def go(n):
...     "Go somewhere."
>>> text = markdown(tool, "tool")
>>> [p for p, _ in commands(tool, "tool")]
['tool go']
>>> "## `tool go`" in text and "--n INTEGER  How many." in text
True
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import click

WIDTH = 100  # the help text's width: wide enough that options stay on one line


def commands(group: click.Group, name: str) -> Iterator[tuple[str, click.Command]]:
    """Every leaf command under `group` as (full command path, command), sorted by path."""
    for sub_name in sorted(group.commands):
        sub = group.commands[sub_name]
        path = f"{name} {sub_name}"
        if isinstance(sub, click.Group):
            yield from commands(sub, path)
        else:
            yield path, sub


def _help(command: click.Command, path: str) -> str:
    """The command's `--help` text as printed (usage, description, options)."""
    parent = None
    for part in path.split()[:-1]:  # the usage line names the whole path
        parent = click.Context(click.Group(part), info_name=part, parent=parent)
    ctx = click.Context(
        command,
        info_name=path.split()[-1],
        parent=parent,
        terminal_width=WIDTH,
        max_content_width=WIDTH,
        help_option_names=["-h", "--help"],
    )
    return command.get_help(ctx)


def markdown(group: click.Group, name: str = "finkg") -> str:
    """The whole reference: an index table, then each command's help in a text block."""
    found = list(commands(group, name))
    lines = ["| command | what it does |", "|---|---|"]
    for path, command in found:
        anchor = path.replace(" ", "-")
        summary = command.get_short_help_str(limit=90).replace("|", "\\|")
        lines.append(f"| [`{path}`](#{anchor}) | {summary} |")
    for path, command in found:
        anchor = path.replace(" ", "-")
        lines += ["", f"## `{path}` {{#{anchor}}}", "", "```text", _help(command, path), "```"]
    return "\n".join(lines) + "\n"


INTRO = """\
<!-- Generated from the click commands by `make docs` (finkg/cli/reference.py): do not edit. -->
# CLI reference

Each section is the command's `--help`, exactly as `finkg COMMAND --help` prints it. Every
command takes `--store LOCATION` (a directory for the embedded Oxigraph store, or an
`http(s)://` SPARQL endpoint; default `$FINKG_STORE` or `~/.finkg/store`) and `-h`/`--help`.
Exit codes: 0 success, 1 checks failed, 2 usage or input error (nothing written), 3 store or
endpoint failure. Long work reports its progress on stderr: a bar on a terminal; in a log or a
pipe, a line once a stage has run 30 s, then at most one every 30 s and one at its end.

"""


def page() -> str:
    """The reference page `docs/interfaces/cli.md` holds."""
    from finkg.cli.main import cli

    return INTRO + markdown(cli)


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else None
    if target is None:
        sys.stdout.write(page())
    else:
        target.write_text(page())
