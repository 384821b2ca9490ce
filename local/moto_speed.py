"""moto's per-request DynamoDB bookkeeping done once instead of per request: the same answers, less CPU.

Profiled over the routes and fault tests (~14,000 DynamoDB calls into moto 5.2.5), five pieces of work
moto repeats on every request depend on nothing that changes between requests:

- **The handler's action names.** `BaseResponse.call_action` lists every function of the handler class
  (`inspect.getmembers`, ~0.35 ms) to see whether the action is one of them. Classes do not change
  once imported: `_action_names` keeps each class's list.
- **The scalar value of an attribute.** `DynamoType.cast_value` (every comparison, sort and condition)
  asks six `is_*` questions before returning a string as it is. `_cast_value` answers the scalar types
  first, in one dictionary look-up, and leaves sets, lists, maps and NULL to moto's own property.
- **Each update expression's syntax tree.** `UpdateExpressionParser.make` tokenizes and parses the
  expression text on each UpdateItem and twice per transaction Update (validation, then the write).
  The tree depends on the text alone, and moto never changes it: every use deep-copies it first
  (`Validator.__init__`) or only reads it (`find_clauses`). `_parsed_once` keeps the trees of the last
  512 texts; a test checks that the kept tree still equals a fresh parse after every kind of use.
- **The node types a validator looks for.** `DepthFirstTraverser.traverse_node_recursively` rebuilds
  the processor's map and its tuple of node types at *every* node of the tree, ten processors per
  update. `_traverse` builds them once per traversal and walks the tree in the same order, calling the
  same `pre_processing_of_child` and `process`.
- **Each condition's operator tree.** A transaction's Put or Update condition is parsed three times with
  the same text, names and values (moto's validation, our transaction's check, the write itself:
  local/moto_transactions.py). The tree depends on those three alone and evaluating it changes
  nothing, so `_conditions_parsed_once` keeps the last 512, keyed by text, names and values (each
  parsed from a private copy of the names and values, so no caller's dict is held), and hands each
  parser the attribute names and values moto's parse would have noted on it.

Installed by local/embedded_aws.py's `install()` (under its lock, before moto serves a request).
tests/local_stack/test_moto_speed.py compares each piece with moto's own.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

__all__ = ["install", "UNPATCHED"]

PARSED_TREES_KEPT = 512
# moto's own functions, once installed (for the tests that compare answers).
UNPATCHED: dict[str, Callable[..., Any]] = {}
_SCALAR_TYPES = {"S": False, "B": False, "BOOL": False, "N": True}  # type -> is a number


def install() -> None:
    """Patch moto once (the caller holds embedded_aws's lock and installs once per process)."""
    from moto.core import responses
    from moto.dynamodb.models.dynamo_type import DynamoType
    from moto.dynamodb.parsing.ast_nodes import DepthFirstTraverser
    from moto.dynamodb.parsing.expressions import UpdateExpressionParser

    UNPATCHED["method_names_from_class"] = responses.method_names_from_class
    responses.method_names_from_class = _action_names(responses.method_names_from_class)

    UNPATCHED["cast_value"] = DynamoType.cast_value.fget
    DynamoType.cast_value = property(_cast_value(DynamoType.cast_value.fget))

    UNPATCHED["make"] = UpdateExpressionParser.make.__func__
    UpdateExpressionParser.make = classmethod(_parsed_once(UpdateExpressionParser.make.__func__))

    UNPATCHED["traverse"] = DepthFirstTraverser.traverse
    DepthFirstTraverser.traverse = _traverse

    from moto.dynamodb.comparisons import ConditionExpressionParser

    UNPATCHED["parse"] = ConditionExpressionParser.parse
    ConditionExpressionParser.parse = _conditions_parsed_once(
        ConditionExpressionParser, ConditionExpressionParser.parse
    )


def _action_names(method_names: Callable[[object], list[str]]) -> Callable[[object], list[str]]:
    """moto's `method_names_from_class`, remembered per class (a class's functions are fixed once it exists)."""
    remembered = functools.cache(lambda clazz: tuple(method_names(clazz)))
    return lambda clazz: list(remembered(clazz))


def _cast_value(moto_cast_value: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """DynamoType.cast_value with the scalar types answered first: a number as a Decimal, S, B and BOOL as
    they are (moto's property returns the same); sets, lists, maps and NULL go to moto's own."""
    from decimal import Decimal

    def cast_value(self: Any) -> Any:
        is_number = _SCALAR_TYPES.get(self.type)
        if is_number is None:
            return moto_cast_value(self)
        return Decimal(self.value) if is_number else self.value

    return cast_value


def _parsed_once(make: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]:
    """UpdateExpressionParser.make, remembered per (parser class, expression text); a text moto refuses
    raises as before and is not remembered."""
    parsed = functools.lru_cache(maxsize=PARSED_TREES_KEPT)(make)

    def make_once(cls: Any, expression: str) -> Any:
        return parsed(cls, expression)

    make_once.cache_info = parsed.cache_info  # type: ignore[attr-defined]
    make_once.cache_clear = parsed.cache_clear  # type: ignore[attr-defined]
    return make_once


def _traverse(self: Any, node: Any) -> Any:
    """DepthFirstTraverser.traverse: moto's depth-first walk (children first, then the node itself), with the
    processor's node types asked once per walk rather than at every node."""
    from moto.dynamodb.parsing.ast_nodes import Node

    wanted = self.nodes_to_be_processed()

    def walk(current: Any, child_id: int = -1) -> Any:
        if isinstance(current, Node):
            parent = current.parent
            if current.children is not None:
                for index, child in enumerate(current.children):
                    self.pre_processing_of_child(current, index)
                    walk(child, index)
            if isinstance(current, wanted):
                current = self.process(current)
                current.parent = parent
                if parent:
                    parent.children[child_id] = current
        return current

    return walk(node)


def _frozen(value: Any) -> Any:
    """A request's names or values as a hashable key that tells every JSON type apart (True from 1, a list from a map)."""
    if isinstance(value, dict):
        return ("map", tuple(sorted((str(key), _frozen(item)) for key, item in value.items())))
    if isinstance(value, list | tuple):
        return ("list", tuple(_frozen(item) for item in value))
    if value is None or isinstance(value, str | bytes | bool | int | float):
        return (type(value).__name__, value)
    raise TypeError(f"not a request value: {type(value).__name__}")


def _thawed(key: Any) -> Any:
    kind, value = key
    if kind == "map":
        return {name: _thawed(item) for name, item in value}
    if kind == "list":
        return [_thawed(item) for item in value]
    return value


def _conditions_parsed_once(parser_class: Any, parse: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """ConditionExpressionParser.parse, remembered per (text, names, values); a condition moto refuses raises as
    before and is not remembered. Each parser still gets the names and values the parse found on it."""

    @functools.lru_cache(maxsize=PARSED_TREES_KEPT)
    def parsed(expression: str, names: Any, values: Any) -> tuple[Any, tuple[str, ...], tuple[str, ...]]:
        private = parser_class(expression, _thawed(names), _thawed(values))
        tree = parse(private)
        return tree, tuple(private.expr_attr_names_found), tuple(private.expr_attr_values_found)

    def parse_once(self: Any) -> Any:
        if not self.condition_expression:
            return parse(self)
        try:
            key = (
                self.condition_expression,
                _frozen(self.expression_attribute_names),
                _frozen(self.expression_attribute_values),
            )
        except TypeError:
            return parse(self)
        tree, names_found, values_found = parsed(*key)
        self.expr_attr_names_found.extend(names_found)
        self.expr_attr_values_found.extend(values_found)
        return tree

    parse_once.cache_info = parsed.cache_info  # type: ignore[attr-defined]
    return parse_once
