"""How every command speaks: an error as one line, ``syndicator: error: MESSAGE``, with its
exit code; click's usage errors in that same form; and each command's line in
``syndicator --help`` as its help's whole first sentence."""

from __future__ import annotations

import inspect
from typing import Any

import click

from syndicator.errors import SyndicatorError


class CommandError(click.ClickException):
    """A SyndicatorError shown as one line, with that error's exit code."""

    def __init__(self, error: SyndicatorError) -> None:
        super().__init__(str(error))
        self.exit_code = error.exit_code  # type: ignore[misc]  # click reads it per instance

    def show(self, file: Any = None) -> None:
        click.echo(f"syndicator: error: {self.format_message()}", err=True)


class UsageLine(click.ClickException):
    """A click usage error (unknown option, bad value, missing argument) in the style of every
    other error: ``syndicator: error: MESSAGE`` on one line, then the help to read; exit code 2."""

    exit_code = 2

    def __init__(self, error: click.UsageError, command_path: str) -> None:
        super().__init__(" ".join(error.format_message().splitlines()))
        self.command_path = command_path

    def show(self, file: Any = None) -> None:
        click.echo(f"syndicator: error: {self.format_message()}", err=True)
        click.echo(f"Try '{self.command_path} --help'.", err=True)


def _usage_line(
    error: click.UsageError, command: click.Command, info_name: str | None, parent: click.Context | None
) -> UsageLine:
    """``error`` as a :class:`UsageLine`, naming the command it is about (click's parser leaves
    ``error.ctx`` unset for some errors, such as an option missing its value)."""
    ctx = error.ctx or click.Context(command, info_name=info_name, parent=parent)
    return UsageLine(error, ctx.command_path)


class Command(click.Command):
    """A command whose line in ``syndicator --help`` is its help's first sentence, whole
    (click's default cuts it at about 45 characters with "..."), and whose usage errors
    are :class:`UsageLine`."""

    def get_short_help_str(self, limit: int = 45) -> str:
        return first_sentence(self.help or "")

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as error:
            raise _usage_line(error, self, info_name, parent) from error


def first_sentence(text: str) -> str:
    """The first sentence of a docstring's first paragraph, on one line."""
    words = " ".join(inspect.cleandoc(text).split("\n\n")[0].split())
    end = words.find(". ")
    return words if end < 0 else words[: end + 1]


class Group(click.Group):
    """The ``syndicator`` group: its commands are :class:`Command`, and a usage error of the
    group (an unknown option or command) is a :class:`UsageLine` too."""

    command_class = Command

    def get_short_help_str(self, limit: int = 45) -> str:
        return first_sentence(self.help or "")

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.exceptions.NoArgsIsHelpError:
            raise  # `syndicator` alone prints the help
        except click.UsageError as error:
            raise _usage_line(error, self, info_name, parent) from error

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as error:
            raise _usage_line(error, self, ctx.info_name, ctx.parent) from error
