"""The commands page of the docs, made from the click commands: :func:`commands_reference`, for each
command its synopsis, its help and a table of its options, as ``syndicator COMMAND --help`` says them.

The docs' MkDocs hook (docs/hooks/generate.py) puts it in docs/reference/commands.md at build time, so the
page says what the code does and cannot go stale.
"""

from __future__ import annotations

import html
import inspect
import re
from collections.abc import Mapping

import click

from syndicator.cli import main

#: The widest line of a synopsis, in characters: what the docs' pages show without scrolling.
SYNOPSIS_WIDTH = 76


def _text(text: str) -> str:
    """Help text as Markdown that shows it as written: HTML and Markdown's own characters escaped."""
    return re.sub(r"([\\`*_\[\]])", r"\\\1", html.escape(text, quote=False))


def _cell(text: str) -> str:
    """Help text fit for a Markdown table cell (one line, ``|`` escaped)."""
    return _text(" ".join(text.split())).replace("|", "\\|")


def _option_usage(param: click.Parameter) -> str:
    """How the synopsis shows one parameter: ``URL``, ``[--config PATH]``, ``[--force]``, ``[-v]``."""
    if isinstance(param, click.Argument):
        return param.human_readable_name
    name = min(param.opts, key=len) if getattr(param, "count", False) else max(param.opts, key=len)
    if isinstance(param, click.Option) and (param.is_flag or param.count):
        return f"[{name}]"
    metavar = param.make_metavar(click.Context(main)) if hasattr(param, "make_metavar") else ""
    return f"[{name} {metavar}]"


def synopsis(name: str, command: click.Command) -> str:
    """The synopsis of ``syndicator NAME``: its arguments, then every option, in lines of at most
    :data:`SYNOPSIS_WIDTH` characters, the later ones indented under the first option (str)."""
    head = f"syndicator {name}"
    lines = [head]
    for usage in (_option_usage(param) for param in command.params):
        if len(lines[-1]) + 1 + len(usage) > SYNOPSIS_WIDTH:
            lines.append(" " * len(head))
        lines[-1] += " " + usage
    return "\n".join(lines)


def _options_table(command: click.Command, ctx: click.Context) -> list[str]:
    """The rows of a command's option table: each option as ``--help`` names it, and its help."""
    rows = ["| option | what it does |", "|---|---|"]
    for param in command.get_params(ctx):
        record = None if isinstance(param, click.Argument) else param.get_help_record(ctx)
        if record is not None:
            rows.append(f"| `{record[0]}` | {_cell(record[1])} |")
    return rows


def commands_reference() -> str:
    """Every command of ``syndicator``, in the order ``main`` lists them, as Markdown (str): a ``##``
    section per command with its synopsis, its whole help and its options."""
    parent = click.Context(main, info_name="syndicator", **main.context_settings)
    parts = []
    for name, command in leaf_commands(main.commands):
        ctx = click.Context(command, info_name=name, parent=parent)
        helps = inspect.cleandoc(command.help or "").replace("\b\n", "").split("\n\n")
        parts += [f"## `syndicator {name}`", "", "```", synopsis(name, command), "```", ""]
        parts += [*(_text(" ".join(paragraph.split())) + "\n" for paragraph in helps)]
        parts += [*_options_table(command, ctx), ""]
    return "\n".join(parts)


def leaf_commands(commands: Mapping[str, click.Command], prefix: str = "") -> list[tuple[str, click.Command]]:
    """(name, command) of every command of ``commands`` (``main.commands``), in order, a group's commands
    in its place, named with it: ``filter test``."""
    found = []
    for name, command in commands.items():
        if isinstance(command, click.Group):
            found += leaf_commands(command.commands, f"{prefix}{name} ")
        else:
            found.append((prefix + name, command))
    return found
