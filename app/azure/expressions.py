"""Evaluate the few ARM template expressions names are made of; maps no fields."""

from __future__ import annotations

import re
from typing import Any


def is_expression(value: Any) -> bool:
    """An ARM expression (`[...]`) left as it was: one that could not be evaluated."""
    return isinstance(value, str) and value.startswith("[") and value.endswith("]")


class _Unsupported(Exception):
    """An ARM expression this module does not evaluate."""


class Expressions:
    """The little of ARM's template language that names and ids are made of."""

    _TOKEN = re.compile(r"\s*(?:('(?:[^']|'')*')|(-?\d+)|([A-Za-z_][\w.]*)|(.))")

    def __init__(self, template: dict[str, Any]) -> None:
        self.parameters = template.get("parameters") or {}
        self.variables = template.get("variables") or {}
        self.depth = 0

    def resolve(self, value: Any) -> Any:
        """`value` with every expression it can evaluate replaced by its result."""
        if isinstance(value, dict):
            return {k: self.resolve(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        if isinstance(value, str) and value.startswith("[["):
            return value[1:]  # an escaped literal bracket
        if isinstance(value, str) and value.startswith("[") and value.endswith("]"):
            try:
                return self.evaluate(value[1:-1])
            except (_Unsupported, IndexError, KeyError, TypeError, RecursionError):
                return value
        return value

    def evaluate(self, text: str) -> Any:
        tokens = [m.groups() for m in self._TOKEN.finditer(text) if m.group().strip()]
        value, rest = self._value(tokens)
        if rest:
            raise _Unsupported(text)
        return value

    def _value(self, tokens: list[Any]) -> tuple[Any, list[Any]]:
        string, number, name, _ = tokens[0]
        if string is not None:
            return string[1:-1].replace("''", "'"), tokens[1:]
        if number is not None:
            return int(number), tokens[1:]
        if name is None or tokens[1][3] != "(":
            raise _Unsupported(name)
        args: list[Any] = []
        rest = tokens[2:]
        while rest[0][3] != ")":
            arg, rest = self._value(rest)
            args.append(arg)
            if rest[0][3] == ",":
                rest = rest[1:]
        return self._call(name.lower(), args), rest[1:]

    def _call(self, function: str, args: list[Any]) -> Any:
        if function == "parameters":
            spec = self.parameters[args[0]]
            if "defaultValue" not in spec:
                raise _Unsupported(args[0])
            return self._nested(spec["defaultValue"])
        if function == "variables":
            return self._nested(self.variables[args[0]])
        if function == "concat":
            return "".join(str(a) for a in args)
        if function == "tolower":
            return str(args[0]).lower()
        if function == "resourceid":  # type, then names: the last is the resource
            return "/".join(str(a) for a in args)
        raise _Unsupported(function)

    def _nested(self, value: Any) -> Any:
        self.depth += 1
        try:
            if self.depth > 20:
                raise _Unsupported("too deep")
            return self.resolve(value)
        finally:
            self.depth -= 1
