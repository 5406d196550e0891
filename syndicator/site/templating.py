"""The template engine: jinja2's environment, its filters, and a template's errors as one line.

Templates come from ``--templates DIR`` first, then the bundled
``templates/`` folder (:func:`sitekey.template_folders`), so a user may
override any one of them; no template is read through a symlink out of
those folders. Templates autoescape (``.html`` and ``.xml`` and the rest
alike), an undefined name is an error, and a page is produced piece by
piece (:func:`rendered`). The filters: ``xmltext`` (control characters
XML forbids removed), ``local`` (a time in the planet's zone and date
format), ``absolute`` (a URL made absolute against the planet's link), ``relative`` (a path in the site
as a page ``root`` away reaches it) and
``rfc822_date`` (an RFC 3339 time as RSS 2.0 dates are written).

An error of a template (its syntax, a missing template, ``{{ 1 // 0 }}``)
is a RenderError naming its file and line; an error of our own code called
by a template (a filter) is a bug and propagates as it is.
"""

from __future__ import annotations

import os
import sysconfig
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from email.utils import format_datetime
from pathlib import Path
from typing import Any

import jinja2
import markupsafe

from syndicator.errors import RenderError
from syndicator.urls import scheme
from syndicator.values import strip_control


def environment(
    folders: Sequence[Path], local: Callable[..., str], base: str, translations: Any = None
) -> jinja2.Environment:
    """The environment reading templates from ``folders`` (in lookup order), with its filters:
    ``local`` writes a time as the pages show it (str), ``base`` is the planet's link ending in "/";
    ``translations`` (gettext's, :func:`locales.translations`) give the page text, None: as written."""
    env = jinja2.Environment(
        loader=_FolderLoader([str(folder) for folder in folders]),
        autoescape=jinja2.select_autoescape(enabled_extensions=("html", "xml"), default=True),
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
        extensions=["jinja2.ext.i18n"],
    )
    if translations is None:
        env.install_null_translations(newstyle=True)  # type: ignore[attr-defined]  # page text: _("...")
    else:
        env.install_gettext_translations(translations, newstyle=True)  # type: ignore[attr-defined]
    env.filters["xmltext"] = strip_control
    env.filters["local"] = local
    env.filters["absolute"] = lambda url: url if scheme(url) else base + url
    env.filters["relative"] = lambda url, root: url if scheme(url) else root + url  # from a page in a folder
    env.filters["rfc822_date"] = rfc822_date
    return env


def rfc822_date(moment: str) -> str:
    """An RFC 3339 time (``2026-11-30T12:00:00Z``) as RSS 2.0 writes dates: RFC 822 with a four-digit
    year, in GMT (``Mon, 30 Nov 2026 12:00:00 GMT``; RSS 2.0 specification, "Elements of <item>")."""
    return format_datetime(datetime.fromisoformat(moment).astimezone(UTC), usegmt=True)


def rendered(env: jinja2.Environment, name: str, context: dict[str, Any], folders: Sequence[Path]) -> Iterator[str]:
    """Template ``name`` read now and rendered with ``context`` in pieces as they are read (a page is
    never whole in memory); ``folders`` are the environment's, for the errors.

    Raises:
        RenderError: the template is missing or not valid (now), or fails (as the pieces are read).
    """
    with _template_errors(name, folders):
        template = env.get_template(name)
    return _generated(template, context, name, folders)


def template_text(env: jinja2.Environment, name: str, folders: Sequence[Path]) -> str:
    """The text of template ``name`` as it is, not rendered (a style sheet).

    Raises:
        RenderError: it is missing or cannot be read.
    """
    with _template_errors(name, folders):
        return env.loader.get_source(env, name)[0]  # type: ignore[union-attr]


def _generated(template: jinja2.Template, context: dict[str, Any], name: str, folders: Sequence[Path]) -> Iterator[str]:
    """The template's output in pieces, as publish writes them: a page is never whole in memory."""
    with _template_errors(name, folders):
        yield from template.generate(context)


@contextmanager
def _template_errors(name: str, folders: Sequence[Path]) -> Iterator[None]:
    """Turn an error of template ``name`` into a RenderError (:func:`_template_error`); a bug of ours propagates."""
    try:
        yield
    except Exception as e:
        error = _template_error(e, name, folders)
        if error is None:
            raise  # raised outside template code: a bug
        raise error from e


def _template_error(error: Exception, name: str, folders: Sequence[Path]) -> RenderError | None:
    """A one-line RenderError naming the template file and line, or None for a bug.

    A syntax error carries its file and line; for an error while rendering,
    the innermost traceback frame in a template file gives them (jinja2
    rewrites template frames to the template's file and line). Any error
    is the template's (``{{ 1 // 0 }}``, a jinja2 filter given the wrong
    value, a macro recursing without end, a template file that is not
    UTF-8) when only jinja2, markupsafe and the standard library ran below
    the template code; when other code did (one of our filters, a property
    of a page entry), it is a bug.
    """
    where: str | None = None
    if isinstance(error, jinja2.TemplateSyntaxError):
        where = f"{error.filename or error.name or name}:{error.lineno}"
        message = error.message or str(error)
    else:
        frames = traceback.extract_tb(error.__traceback__)
        in_template = [any(Path(f.filename).is_relative_to(d) for d in folders) for f in frames]
        here = [Path(f.filename) == _THIS_FILE for f in frames]
        last = max((i for i, flag in enumerate(in_template) if flag), default=None)
        if last is None:  # not raised from template code: below the last frame of this module
            last = max((i for i, flag in enumerate(here) if flag), default=-1)
        if not all(
            in_template[i] or _is_library(f.filename) or _is_loader(f) for i, f in enumerate(frames) if i > last
        ):
            return None
        templates = [f for f, flag in zip(frames, in_template, strict=True) if flag]
        if templates:
            where = f"{templates[-1].filename}:{templates[-1].lineno}"
        message = str(error) or type(error).__name__
    if isinstance(error, jinja2.TemplateNotFound):
        message = f"{error.name} not found in {', '.join(map(str, folders))}"
    message = " ".join(message.split())
    return RenderError(f"template {where or name}: {message}")


_THIS_FILE = Path(__file__)
#: Code a template calls that is not ours: jinja2 (its filters, its runtime), markupsafe and the
#: standard library. An error raised in them below template code is the template's.
_LIBRARIES = (Path(jinja2.__file__).parent, Path(markupsafe.__file__).parent, Path(sysconfig.get_paths()["stdlib"]))


def _is_loader(frame: traceback.FrameSummary) -> bool:
    """True for a frame of :class:`_FolderLoader`: jinja2's loader, which a missing template raises through."""
    return Path(frame.filename) == _THIS_FILE and frame.name == "get_source"


def _is_library(filename: str) -> bool:
    """True for a traceback frame's file in :data:`_LIBRARIES` (or frozen: ``<frozen codecs>``)."""
    return filename.startswith("<") or any(Path(filename).is_relative_to(folder) for folder in _LIBRARIES)


class _FolderLoader(jinja2.FileSystemLoader):
    """jinja2's FileSystemLoader, reading no template through a symlink out of its folders (a theme's
    ``index.html`` linked to ``/proc/self/environ`` would publish the build's environment)."""

    def get_source(self, environment: jinja2.Environment, template: str) -> tuple[str, str, Callable[[], bool]]:
        source, filename, uptodate = super().get_source(environment, template)
        real = Path(os.path.realpath(filename))
        if not any(real.is_relative_to(os.path.realpath(folder)) for folder in self.searchpath):
            raise RenderError(f"template {filename}: a symlink out of the templates folders (to {real}); not read")
        return source, filename, uptodate
