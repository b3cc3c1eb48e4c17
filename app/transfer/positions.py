"""Parse YAML or JSON, noting each value's line and column; checks no fields."""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from app.transfer.errors import TransferError

# libyaml's parser when PyYAML has it (about 10× faster on a 10,000-profile
# file); its nodes carry the same line and column marks.
SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

Loc = tuple[str | int, ...]


@dataclass(eq=False, slots=True)
class Node:
    """Where a value of the document is, and its children, for error positions."""

    line: int  # 1-based
    column: int  # 1-based
    keys: dict[str, tuple[Node, Node]] = field(default_factory=dict)  # key, value
    items: list[Node] = field(default_factory=list)
    tag: str = ""  # YAML scalars: what an unquoted value was read as


# A key given twice in one mapping: the mapping's dotted path, the key, where
# it first was and where it is again.
Duplicate = tuple[str, str, Node, Node]
Parsed = tuple[Any, Node, list[Duplicate]]


def locate(tree: Node, loc: Loc) -> Node:
    """The node of the deepest part of `loc` the document has: a mapping entry
    is pointed at by its key, a missing field by the mapping that lacks it."""
    node = where = tree
    for part in loc:
        if isinstance(part, int) and 0 <= part < len(node.items):
            node = where = node.items[part]
        elif str(part) in node.keys:
            where, node = node.keys[str(part)]
        else:
            break
    return where


def value_node(tree: Node, loc: Loc) -> Node | None:
    """The node of the value at `loc`, or None when the document lacks it."""
    node = tree
    for part in loc:
        if isinstance(part, int) and 0 <= part < len(node.items):
            node = node.items[part]
        elif str(part) in node.keys:
            node = node.keys[str(part)][1]
        else:
            return None
    return node


# YAML


def parse_yaml(text: str, source: str) -> Parsed:
    loader = SafeLoader(text)
    try:
        root = loader.get_single_node()
        data = loader.construct_document(root) if root is not None else None
    except yaml.MarkedYAMLError as exc:
        raise TransferError(_yaml_syntax(exc, source)) from None
    except yaml.YAMLError as exc:
        raise TransferError(f"{source}: {exc}") from None
    finally:
        loader.dispose()
    if root is None:
        raise TransferError(f"{source}:1:1: the document is empty")
    duplicates: list[Duplicate] = []
    return data, _yaml_tree(root, (), duplicates, {}), duplicates


def _yaml_syntax(exc: yaml.MarkedYAMLError, source: str) -> str:
    mark = exc.problem_mark or exc.context_mark
    where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
    message = exc.problem or exc.context or "not YAML"
    if exc.context and exc.problem:
        context_line = (
            f" at line {exc.context_mark.line + 1}" if exc.context_mark else ""
        )
        message = f"{exc.problem} ({exc.context}{context_line})"
    return f"{where}: YAML: {message}"


def _yaml_tree(
    node: yaml.Node, path: Loc, duplicates: list[Duplicate], seen: dict[int, Node]
) -> Node:
    if id(node) in seen:  # an alias: the anchored node again
        return seen[id(node)]
    mark = node.start_mark
    out = Node(mark.line + 1, mark.column + 1, tag=node.tag)
    seen[id(node)] = out
    if isinstance(node, yaml.MappingNode):
        for key_node, child in node.value:
            if not isinstance(key_node, yaml.ScalarNode) or key_node.value == "<<":
                continue
            key = str(key_node.value)
            k = Node(key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            v = _yaml_tree(child, (*path, key), duplicates, seen)
            if key in out.keys:
                duplicates.append((".".join(map(str, path)), key, out.keys[key][0], k))
            out.keys[key] = (k, v)
    elif isinstance(node, yaml.SequenceNode):
        out.items = [
            _yaml_tree(item, (*path, i), duplicates, seen)
            for i, item in enumerate(node.value)
        ]
    return out


# JSON

_WHITESPACE = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_NUMBER = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?")
_CONSTANTS = ("true", "false", "null", "NaN", "Infinity", "-Infinity")


def parse_json(text: str, source: str) -> Parsed:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TransferError(
            f"{source}:{exc.lineno}:{exc.colno}: JSON: {exc.msg}"
        ) from None
    except RecursionError:
        raise TransferError(f"{source}: JSON: nested too deeply") from None
    scanner = _JsonPositions(text)
    try:
        tree, _ = scanner.value(0, ())
    except RecursionError:
        raise TransferError(f"{source}: JSON: nested too deeply") from None
    if scanner.constants:
        raise TransferError(
            [
                f"{source}:{n.line}:{n.column}: JSON: {word} is not a JSON value"
                for word, n in scanner.constants
            ]
        )
    return data, tree, scanner.duplicates


class _JsonPositions:
    """Positions of the values of a text json.loads() accepted."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]
        self.duplicates: list[Duplicate] = []
        self.constants: list[tuple[str, Node]] = []

    def node(self, index: int) -> Node:
        line = bisect.bisect_right(self.starts, index)
        return Node(line, index - self.starts[line - 1] + 1)

    def skip(self, index: int) -> int:
        match = _WHITESPACE.match(self.text, index)
        return match.end() if match else index

    def string(self, index: int) -> tuple[str, int]:
        match = _STRING.match(self.text, index)
        assert match is not None, "json.loads accepted it"
        return str(json.loads(match.group())), match.end()

    def value(self, index: int, path: Loc) -> tuple[Node, int]:
        text, index = self.text, self.skip(index)
        node, char = self.node(index), text[index]
        if char == "{":
            index = self.skip(index + 1)
            while text[index] != "}":
                key_node = self.node(index)
                key, index = self.string(index)
                index = self.skip(index) + 1  # the colon
                child, index = self.value(index, (*path, key))
                if key in node.keys:
                    self.duplicates.append(
                        (".".join(map(str, path)), key, node.keys[key][0], key_node)
                    )
                node.keys[key] = (key_node, child)
                index = self.skip(index)
                index = self.skip(index + 1) if text[index] == "," else index
            return node, index + 1
        if char == "[":
            index = self.skip(index + 1)
            while text[index] != "]":
                child, index = self.value(index, (*path, len(node.items)))
                node.items.append(child)
                index = self.skip(index)
                index = self.skip(index + 1) if text[index] == "," else index
            return node, index + 1
        if char == '"':
            return node, self.string(index)[1]
        for word in _CONSTANTS:
            if text.startswith(word, index):
                if word not in ("true", "false", "null"):
                    self.constants.append((word, node))
                return node, index + len(word)
        match = _NUMBER.match(text, index)
        assert match is not None, "json.loads accepted it"
        return node, match.end()
