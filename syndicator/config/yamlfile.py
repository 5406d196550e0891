"""sites.yaml as YAML: the one module that imports a YAML library.

Reading (:func:`read_yaml`) is PyYAML's safe loader (libyaml's, when PyYAML has it), with every
mapping a :class:`LineDict` that remembers its lines and the first key written twice, and aliases
and nesting bounded before any value is built. Editing (``syndicator import`` and ``add``) reads
the file round trip with ruamel.yaml (:func:`top_key`), to find where new text goes without
rewriting the rest, and renders new list entries with it (:func:`list_entry`); ruamel.yaml is
imported inside those functions only, so a build never loads it.

PyYAML reads sites.yaml on purpose, rather than ruamel.yaml's safe loader, which reads YAML 1.2: under it
existing files would change meaning (``yes``, ``no``, ``on`` and ``off`` are booleans to PyYAML, YAML 1.1,
and text to YAML 1.2; ``010`` is 8 or 10; ``1:20`` is 80 or text), a key written twice stops its loader
before we can name both lines, and it is about four times slower on a large file (10,000 sites). The
entries written for import and add are quoted as YAML 1.1 needs, so PyYAML reads them back as written.
"""

from __future__ import annotations

from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from typing import Any, Literal

import yaml

from syndicator.errors import ConfigError

#: Aliases (``*name``, YAML 1.2 section 3.2.2.2) repeat an anchored value (``&name``) without copying it in
#: the file; written out in full, they may add at most this many values (scalars, lists, mappings) to it. A
#: "billion laughs" file of 1 KB, nine aliases of nine aliases nine levels deep, would add 387 million.
ALIAS_VALUES_MAX = 100_000
#: Most levels of lists and mappings inside one another (aliases written out); more would exhaust the stack.
NESTING_MAX = 64


class LineDict(dict[str, Any]):
    """A mapping that remembers the line (1-based) of itself and each key.

    ``duplicate`` is the first key written twice, as (key, line, first line),
    or None; it is reported by whoever knows the mapping's path.
    """

    line = 0
    lines: dict[str, int]
    duplicate: tuple[str, int, int] | None = None


class _NodeError(Exception):
    """A document refused before its values are built: the line, the field shown, the problem."""

    def __init__(self, line: int, field: str, problem: str) -> None:
        super().__init__(problem)
        self.line, self.field, self.problem = line, field, problem


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    """A safe loader whose mappings record line numbers and duplicate keys (libyaml's, when PyYAML has it).

    The document's nodes are checked by :func:`_check_nodes` before any value is built from them, so
    aliases and nesting are bounded before they cost memory.
    """

    def get_single_data(self) -> Any:
        node = self.get_single_node()
        if node is None:
            return None
        _check_nodes(node)
        return self.construct_document(node)


def _children(node: yaml.Node) -> list[tuple[yaml.Node, int]]:
    """The nodes inside ``node``, each with the line (1-based) that names it: a key's own line for a mapping's
    keys and values, the list's first line for its items (an alias's node is its anchor's, elsewhere)."""
    if isinstance(node, yaml.MappingNode):
        return [(child, key.start_mark.line + 1) for key, value in node.value for child in (key, value)]
    if isinstance(node, yaml.SequenceNode):
        return [(child, node.start_mark.line + 1) for child in node.value]
    return []


def _check_nodes(root: yaml.Node) -> None:
    """Refuse a document whose aliases, written out, add more than :data:`ALIAS_VALUES_MAX` values, that nests
    deeper than :data:`NESTING_MAX`, or where an alias is inside the value it names.

    One walk in document order over the composed nodes (an alias is the very node it names): a node seen
    for the first time is walked; one seen before is an alias, and adds its size written out (counted
    when its walk ended). Linear in the file's size, whatever the aliases expand to.

    Raises:
        _NodeError: naming the line of the alias (the line of its key, or of its list).
    """
    size: dict[int, int] = {}  # id(node) -> values, aliases written out, of a node whose walk ended
    depth: dict[int, int] = {}  # id(node) -> levels inside it, likewise
    walking: set[int] = set()
    added = 0
    stack: list[tuple[yaml.Node, list[tuple[yaml.Node, int]]]] = [(root, _children(root)[::-1])]
    walking.add(id(root))
    while stack:
        node, todo = stack[-1]
        if not todo:
            stack.pop()
            walking.discard(id(node))
            inner = [(size[id(child)], depth[id(child)]) for child, _ in _children(node)]
            size[id(node)] = 1 + sum(s for s, _ in inner)
            depth[id(node)] = 1 + max((d for _, d in inner), default=0)
            continue
        child, line = todo.pop()
        if id(child) in walking:
            raise _NodeError(line, "alias", "an alias (*name) inside the value it names would never end")
        if id(child) in size:
            added += size[id(child)]
            if added > ALIAS_VALUES_MAX:
                raise _NodeError(
                    line,
                    "alias",
                    f"the aliases (*name) written out would add more than "
                    f"{ALIAS_VALUES_MAX:,} values; write the values out instead",
                )
            if len(stack) + depth[id(child)] > NESTING_MAX:
                raise _NodeError(line, "alias", f"lists and mappings nest more than {NESTING_MAX} levels deep")
            continue
        if len(stack) + 1 > NESTING_MAX:
            raise _NodeError(line, "(nesting)", f"lists and mappings nest more than {NESTING_MAX} levels deep")
        walking.add(id(child))
        stack.append((child, _children(child)[::-1]))


_MERGE_TAG = "tag:yaml.org,2002:merge"


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> LineDict:
    """A :class:`LineDict` of ``node``.

    Keys merged in with ``<<`` (YAML merge keys) give way to the mapping's own
    keys, and the first merged mapping wins over later ones; only a key
    written twice in the mapping itself is a duplicate.
    """
    own = sum(1 for key_node, _ in node.value if key_node.tag != _MERGE_TAG)
    loader.flatten_mapping(node)
    merged = len(node.value) - own
    result = LineDict()
    result.line = node.start_mark.line + 1
    result.lines = {}
    own_lines: dict[str, int] = {}
    for index, (key_node, value_node) in enumerate(node.value):
        key = loader.construct_object(key_node, deep=True)
        line = key_node.start_mark.line + 1
        if isinstance(key, dict | list):  # `{a: 1}: 2` is YAML, but no setting, site or name is a mapping
            raise _NodeError(line, "a key", "must be text, not a mapping or a list")
        if index < merged and key in result:
            continue
        if index >= merged and str(key) in own_lines:
            result.duplicate = result.duplicate or (str(key), line, own_lines[str(key)])
            continue
        if index >= merged:
            own_lines[str(key)] = line
        result[key] = loader.construct_object(value_node, deep=True)
        result.lines[str(key)] = line
    return result


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def read_text(path: Path) -> str:
    """A sites.yaml as text (str).

    Raises:
        ConfigError: it cannot be read, or is not UTF-8 (naming the line of the first bad byte).
    """
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise ConfigError(f"{path}: cannot read: {e.strerror or e}") from e
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        line = raw[: e.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: not UTF-8 text: {e.reason} at byte {e.start}; save the file as UTF-8") from e


def read_yaml(path: Path) -> Any:
    """The YAML document of the file ``path``, read by PyYAML's safe loader: every mapping a :class:`LineDict`
    (its lines, and its first key written twice), lists as lists, scalars as YAML 1.1 reads them; None
    for an empty file.

    Raises:
        ConfigError: the file cannot be read or is not UTF-8 (:func:`read_text`), is not YAML (naming the
            line when PyYAML knows it), or its aliases or nesting go past :data:`ALIAS_VALUES_MAX` or
            :data:`NESTING_MAX` (naming the line).
    """
    return parse_yaml(read_text(path), str(path))


def parse_yaml(text: str, name: str, lines: bool = True) -> Any:
    """The YAML document ``text`` as :func:`read_yaml` reads a file's, its errors naming ``name`` (the
    file, or the command-line option the text came from) and, with ``lines``, the line.

    Raises:
        ConfigError: the text is not YAML, or its aliases or nesting go past the bounds (naming the line).
    """
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - _Loader is a SafeLoader
    except _NodeError as e:
        raise ConfigError(f"{name}:{f'{e.line}:' * lines} {e.field}: {e.problem}") from None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark
        line = f"{mark.line + 1}:" if mark is not None and lines else ""
        raise ConfigError(f"{name}:{line} invalid YAML: {e.problem}") from None
    except yaml.YAMLError as e:
        raise ConfigError(f"{name}: invalid YAML: {e}") from None


# --- editing sites.yaml round trip (ruamel.yaml) -------------------------------------------------------


@dataclass(frozen=True)
class TopKey:
    """A key of a document's top-level mapping, as a round-trip read (ruamel.yaml) finds it written.

    Lines and columns are 0-based.

    Attributes:
        value: what the key holds: ``"block list"`` (a non-empty list written one ``-`` item a line),
            ``"empty"`` (null, or an empty list) or ``"other"``.
        last_item: for a block list, the (line, column) where its last item starts; else None.
        items: for a block list, the (line, column) where each item starts, in order; else ().
        next_key_line: for a block list, the line of the next top-level key, or None when none follows.
        where: for an empty value, the (line, column) of the key; else None.
    """

    value: Literal["block list", "empty", "other"]
    last_item: tuple[int, int] | None = None
    next_key_line: int | None = None
    where: tuple[int, int] | None = None
    items: tuple[tuple[int, int], ...] = ()


def top_key(text: str, path: Path, key: str) -> TopKey | None:
    """Where the top-level ``key`` of the YAML document ``text`` (the file ``path``) is, and what it holds,
    read round trip by ruamel.yaml; None when the document has no such key.

    Raises:
        ConfigError: ``text`` is not YAML to ruamel.yaml (``{path}: invalid YAML: ...``), or not a mapping.
    """
    from ruamel.yaml import YAML
    from ruamel.yaml.comments import CommentedMap, CommentedSeq
    from ruamel.yaml.error import YAMLError

    try:
        doc = YAML().load(text)
    except YAMLError as error:
        raise ConfigError(f"{path}: invalid YAML: {' '.join(str(error).split())}") from error
    if not isinstance(doc, CommentedMap):
        raise ConfigError(f"{path}: must be a mapping with title, link and sites")
    value = doc.get(key)
    if isinstance(value, CommentedSeq) and value and not value.fa.flow_style():
        keys = list(doc)
        later = keys[keys.index(key) + 1 :]
        next_key_line = doc.lc.key(later[0])[0] if later else None
        items = tuple(tuple(value.lc.item(index)) for index in range(len(value)))
        return TopKey("block list", last_item=items[-1], next_key_line=next_key_line, items=items)
    if value is not None and not (isinstance(value, list) and not value):
        return TopKey("other")
    if key not in doc:
        return None
    line, column = doc.lc.key(key)
    return TopKey("empty", where=(line, column))


def list_entry(values: dict[str, Any], dash: int, step: int, newline: str) -> str:
    """One block-list item of the mapping ``values`` rendered by ruamel.yaml, quoted as YAML 1.1 (PyYAML) needs
    (``'yes'``, ``'on'``, ``'1:20'``): ``-`` at column ``dash``, keys ``step`` columns further, every line
    ending with ``newline``, no value folded however long (str)."""
    from ruamel.yaml import YAML

    writer = YAML()
    writer.version = (1, 1)  # quote as PyYAML reads: 'yes', 'on', '1:20'
    writer.width = 1 << 30  # never fold a long value
    writer.indent(mapping=2, sequence=step, offset=0)
    out = StringIO()
    writer.dump([values], out)
    lines = out.getvalue().splitlines()
    return "".join(" " * dash + line + newline for line in lines[lines.index("---") + 1 :])


def mapping_text(values: dict[str, Any], newline: str = "\n") -> str:
    """Top-level keys of a document rendered by ruamel.yaml, in order, quoted as YAML 1.1 (PyYAML) needs
    and never folded, every line ending with ``newline``; non-ASCII text is written as it is (str)."""
    from ruamel.yaml import YAML

    writer = YAML()
    writer.version = (1, 1)  # quote as PyYAML reads: 'yes', 'on', '1:20'
    writer.width = 1 << 30  # never fold a long value
    out = StringIO()
    writer.dump(values, out)
    lines = out.getvalue().splitlines()
    return "".join(line + newline for line in lines[lines.index("---") + 1 :])
