"""The credentials of private feeds (docs/private-feeds.md): a site's ``credentials: NAME`` -> a
:class:`configtypes.Credential`, from the environment variable ``SYNDICATOR_CREDENTIALS_<NAME>`` or
else the secrets file the planet's ``secrets:`` setting names, never from sites.yaml itself.

Each holds one mapping of one of four shapes (YAML; JSON is YAML too)::

    {bearer: TOKEN}                          # Authorization: Bearer TOKEN (RFC 6750 section 2.1)
    {basic: {user: U, password: P}}          # HTTP basic authentication (RFC 7617)
    {header: {name: X-Api-Key, value: V}}    # a request header of its own
    {query: {name: token, value: V}}         # a query parameter, added to each request's URL

A message about a credential names the site, the name and where it was looked for, never a value.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from syndicator.config.fields import FieldError, check_duplicates, plain
from syndicator.config.yamlfile import parse_yaml, read_yaml
from syndicator.configtypes import Config
from syndicator.credential import CREDENTIAL_KINDS, Credential
from syndicator.errors import ConfigError

__all__ = ["ENVIRONMENT_PREFIX", "Secrets", "environment_name", "secrets_warnings"]

#: The environment variable of the credential ``team`` is ``SYNDICATOR_CREDENTIALS_TEAM``.
ENVIRONMENT_PREFIX = "SYNDICATOR_CREDENTIALS_"
#: A credential's name: a letter or digit, then letters, digits, ``_`` and ``-`` (at most 64).
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
#: A header name is an RFC 9110 token (section 5.6.2).
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
#: Headers syndicator sets itself (and those HTTP frames): a credential cannot replace them.
_OWN_HEADERS = frozenset(
    {"user-agent", "accept", "accept-encoding", "if-none-match", "if-modified-since", "host", "content-length"}
)
_SHAPES = (
    "{bearer: TOKEN}, {basic: {user: U, password: P}}, {header: {name: N, value: V}} or {query: {name: N, value: V}}"
)


def environment_name(name: str) -> str:
    """The environment variable of the credential ``name``: upper case, ``-`` as ``_`` (str -> str)."""
    return ENVIRONMENT_PREFIX + name.upper().replace("-", "_")


class Secrets:
    """Where the credentials of one sites.yaml are looked up: ``environ`` first, then the secrets file.

    Args:
        path: the secrets file (``secrets:``, resolved against the folder of sites.yaml), or None.
        environ: the environment (``os.environ``).
        line: the line of ``secrets:`` in sites.yaml, for messages.
    Raises:
        FieldError: the secrets file cannot be read, is not YAML, or is not a mapping of names.
    """

    def __init__(self, path: Path | None, environ: Mapping[str, str], line: int = 0) -> None:
        self.path, self._environ = path, environ
        self._file: Mapping[str, Any] = {}
        if path is not None:
            try:
                data = read_yaml(path)
            except ConfigError as error:  # it names the file and the line, never a value
                raise FieldError(line, "secrets", str(error)) from None
            if data is not None and not (isinstance(data, dict) and all(isinstance(k, str) for k in data)):
                raise FieldError(line, "secrets", f"{path}: must be a mapping of credential names")
            _refuse_twice(data, str(path), line, "secrets")  # a renewed token added below the old one is never used
            self._file = plain(data or {})

    def find(self, name: Any, where: str, line: int) -> Credential:
        """The credential ``name`` for the site at ``where`` (``sites[3]``, on ``line`` of sites.yaml).

        Raises:
            FieldError: the name is not a name, is in neither place (naming both), or what it holds
                is not one of the four shapes (naming where it was found, never the value).
        """
        field = f"{where}.credentials"
        if not isinstance(name, str) or not _NAME.fullmatch(name.strip()):
            raise FieldError(line, field, "must be a name (letters, digits, _ and -) of a credential")
        name = name.strip()
        variable = environment_name(name)
        if variable in self._environ:
            try:
                value = parse_yaml(self._environ[variable], f"${variable}")
            except ConfigError:
                raise FieldError(line, field, f"${variable} is not YAML or JSON; it must be {_SHAPES}") from None
            _refuse_twice(value, f"${variable}", line, field)
            return _credential(name, value, f"${variable}", line, field)
        if name in self._file:
            return _credential(name, self._file[name], f"{self.path} ({name})", line, field)
        looked = f"${variable}" + (f" nor in {self.path}" if self.path is not None else " (no secrets file is set)")
        raise FieldError(line, field, f"the credential {name!r} is neither in {looked}")


def _refuse_twice(data: Any, origin: str, line: int, field: str) -> None:
    """Refuse a name or key written twice anywhere in ``data`` (the secrets file or a variable, read from
    ``origin``): YAML would keep one of the two silently. The message names the key, never a value.

    Raises:
        FieldError: on ``field`` (``secrets``, or a site's ``credentials``) at ``line`` of sites.yaml.
    """
    try:
        check_duplicates(data, "")
    except FieldError as error:
        raise FieldError(line, field, f"{origin}:{error.line}: {error.field} {error.problem}") from None


def _credential(name: str, value: Any, origin: str, line: int, field: str) -> Credential:
    """The Credential that ``value`` (read from ``origin``) describes.

    Raises:
        FieldError: ``value`` is not one of the four shapes; the message names ``origin``, not the value.
    """
    if not isinstance(value, dict) or len(value) != 1 or next(iter(value)) not in CREDENTIAL_KINDS:
        raise FieldError(line, field, f"{origin} must be one of {_SHAPES}")
    kind, body = next(iter(value.items()))
    if kind == "bearer":
        return Credential(name, kind, "", _text(body, origin, "bearer", line, field))
    parts = ("user", "password") if kind == "basic" else ("name", "value")
    if not isinstance(body, dict) or set(body) != set(parts):
        raise FieldError(line, field, f"{origin}: {kind} must be a mapping of {parts[0]} and {parts[1]}")
    key, secret = (_text(body[part], origin, f"{kind}.{part}", line, field) for part in parts)
    if kind == "basic" and ":" in key:
        raise FieldError(line, field, f"{origin}: basic.user must not hold ':' (RFC 7617 section 2)")
    if kind == "header" and (not _TOKEN.fullmatch(key) or key.lower() in _OWN_HEADERS):
        problem = "must be a header name (RFC 9110 token) that syndicator does not set itself"
        raise FieldError(line, field, f"{origin}: header.name {problem}")
    return Credential(name, kind, key, secret)


def _text(value: Any, origin: str, part: str, line: int, field: str) -> str:
    """A credential's part: text (a number is its text) without line breaks or control characters."""
    text = str(value) if isinstance(value, str | int) and not isinstance(value, bool) else ""
    if not text or any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        raise FieldError(line, field, f"{origin}: {part} must be non-empty text on one line")
    return text


def secrets_warnings(config: Config) -> list[str]:
    """One warning line when the secrets file of ``config`` (or of one of its planets) can be read by
    other users than its owner, as ssh warns of a private key: ``chmod 600`` it (list of str)."""
    lines = []
    for path in dict.fromkeys(p.secrets for p in config.all_planets() if p.secrets is not None):
        try:
            mode = os.stat(path).st_mode
        except OSError:
            continue
        if mode & (stat.S_IRWXG | stat.S_IRWXO):
            lines.append(
                f"{path}: the secrets file can be read by other users (mode {stat.S_IMODE(mode):03o}): chmod 600 {path}"
            )
    return lines
