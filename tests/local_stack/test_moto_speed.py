"""local/moto_speed.py: moto's per-request bookkeeping done once gives exactly the answers moto's own gives."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from botocore.exceptions import ClientError
from hypothesis import given, settings
from hypothesis import strategies as st

from local import moto_speed

TABLE = "speed"
# Update expressions of every kind moto parses (SET with functions and arithmetic, nested paths, REMOVE, ADD,
# DELETE, several clauses) and ones it refuses (syntax, a missing operand, a key attribute, overlapping paths,
# a type mismatch, an unused value): each is applied in turn to one item whose state carries over.
UPDATES: list[tuple[str, dict[str, str], dict[str, Any]]] = [
    (
        "SET #c = if_not_exists(#c, :zero) + :one, #t = :t",
        {"#c": "count", "#t": "text"},
        {":zero": {"N": "0"}, ":one": {"N": "1"}, ":t": {"S": "first"}},
    ),
    ("SET #c = #c + :one", {"#c": "count"}, {":one": {"N": "2.5"}}),
    (
        "SET #l = list_append(if_not_exists(#l, :empty), :more)",
        {"#l": "list"},
        {":empty": {"L": []}, ":more": {"L": [{"S": "a"}, {"N": "1"}]}},
    ),
    ("SET #m = :m", {"#m": "map"}, {":m": {"M": {"inner": {"S": "x"}, "deep": {"M": {"n": {"N": "-3"}}}}}}),
    ("SET #m.#n = :v REMOVE #t", {"#m": "map", "#n": "inner", "#t": "text"}, {":v": {"BOOL": True}}),
    ("ADD #s :set, #c :one", {"#s": "tags", "#c": "count"}, {":set": {"SS": ["b", "a"]}, ":one": {"N": "1"}}),
    ("DELETE #s :gone", {"#s": "tags"}, {":gone": {"SS": ["a"]}}),
    ("SET #b = :b, #z = :null", {"#b": "blob", "#z": "nothing"}, {":b": {"B": b"\x00\xff"}, ":null": {"NULL": True}}),
    ("REMOVE #l[0], #m.#d", {"#l": "list", "#m": "map", "#d": "deep"}, {}),
    ("SET #x = #missing + :one", {"#x": "x", "#missing": "missing"}, {":one": {"N": "1"}}),
    ("SET #k = :v", {"#k": "sk"}, {":v": {"S": "moved"}}),
    ("SET #a = :v, #a = :w", {"#a": "same"}, {":v": {"S": "1"}, ":w": {"S": "2"}}),
    ("SET #t = :s + :one", {"#t": "text"}, {":s": {"S": "text"}, ":one": {"N": "1"}}),
    ("SET #t = :v", {"#t": "text"}, {":v": {"S": "kept"}, ":unused": {"S": "never"}}),
    ("SET = :v", {}, {":v": {"S": "x"}}),
    ("SET #c = #c - :one", {"#c": "count"}, {":one": {"N": "0.5"}}),
]


def _create(dynamodb: Any) -> None:
    dynamodb.create_table(
        TableName=TABLE,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        AttributeDefinitions=[
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
        ],
        BillingMode="PAY_PER_REQUEST",
    )


def _outcomes(dynamodb: Any, pk: str) -> list[Any]:
    """Every update of UPDATES in turn on one item, plain and inside a transaction, then a Query of the item."""
    key = {"pk": {"S": pk}, "sk": {"S": "item"}}
    seen: list[Any] = []
    for expression, names, values in UPDATES:
        asked: dict[str, Any] = {"UpdateExpression": expression}
        if names:
            asked["ExpressionAttributeNames"] = names
        if values:
            asked["ExpressionAttributeValues"] = values
        try:
            seen.append(
                ("ok", dynamodb.update_item(TableName=TABLE, Key=key, ReturnValues="ALL_NEW", **asked)["Attributes"])
            )
        except ClientError as refused:
            seen.append(("refused", refused.response["Error"]["Code"], refused.response["Error"]["Message"]))
        try:
            dynamodb.transact_write_items(TransactItems=[{"Update": {"TableName": TABLE, "Key": key, **asked}}])
            seen.append(("ok", dynamodb.get_item(TableName=TABLE, Key=key, ConsistentRead=True).get("Item")))
        except ClientError as refused:
            seen.append(("refused", refused.response["Error"]["Code"], refused.response["Error"]["Message"]))
    ordered = dynamodb.query(
        TableName=TABLE,
        KeyConditionExpression="pk = :p AND sk > :s",
        ExpressionAttributeValues={":p": {"S": pk}, ":s": {"S": "a"}},
    )
    seen.append(("query", ordered["Items"]))
    return seen


def _motos_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """Put back moto's own four functions for the rest of the test."""
    from moto.core import responses
    from moto.dynamodb.models.dynamo_type import DynamoType
    from moto.dynamodb.parsing.ast_nodes import DepthFirstTraverser
    from moto.dynamodb.parsing.expressions import UpdateExpressionParser

    monkeypatch.setattr(responses, "method_names_from_class", moto_speed.UNPATCHED["method_names_from_class"])
    monkeypatch.setattr(DynamoType, "cast_value", property(moto_speed.UNPATCHED["cast_value"]))
    monkeypatch.setattr(UpdateExpressionParser, "make", classmethod(moto_speed.UNPATCHED["make"]))
    monkeypatch.setattr(DepthFirstTraverser, "traverse", moto_speed.UNPATCHED["traverse"])


def test_every_kind_of_update_answers_and_stores_as_with_motos_own_functions(
    dynamodb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.dynamodb.parsing.expressions import UpdateExpressionParser

    _create(dynamodb)
    ours = _outcomes(dynamodb, "p")
    assert UpdateExpressionParser.make.cache_info().hits > 0  # the remembered trees were used
    dynamodb.delete_item(TableName=TABLE, Key={"pk": {"S": "p"}, "sk": {"S": "item"}})
    _motos_own(monkeypatch)
    assert _outcomes(dynamodb, "p") == ours
    assert {outcome[0] for outcome in ours} == {"ok", "refused", "query"}  # both kinds of answer were compared


def _tree(node: Any) -> Any:
    """A syntax tree as plain values (moto's nodes have no equality of their own)."""
    from moto.dynamodb.parsing.ast_nodes import Node

    if isinstance(node, Node):
        return (type(node).__name__, None if node.children is None else [_tree(child) for child in node.children])
    return repr(node)


def test_a_remembered_tree_is_never_changed_by_motos_use_of_it(dynamodb: Any) -> None:
    """Every use of the trees (validation, execution, transactions, refusals) leaves each as a fresh parse makes it."""
    from moto.dynamodb.parsing.expressions import UpdateExpressionParser

    _create(dynamodb)
    _outcomes(dynamodb, "first")
    _outcomes(dynamodb, "second")
    own = moto_speed.UNPATCHED["make"]
    for expression, _, _ in UPDATES:
        try:
            fresh = own(UpdateExpressionParser, expression)
        except Exception as refused:  # noqa: BLE001 - a text moto refuses must be refused the same way
            with pytest.raises(type(refused)):
                UpdateExpressionParser.make(expression)
            continue
        remembered = UpdateExpressionParser.make(expression)
        assert remembered is UpdateExpressionParser.make(expression)
        assert _tree(remembered) == _tree(fresh)


def test_a_traversal_asks_for_its_node_types_once(dynamodb: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from moto.dynamodb.parsing.ast_nodes import DepthFirstTraverser

    asked: list[int] = []
    own = DepthFirstTraverser.nodes_to_be_processed
    monkeypatch.setattr(DepthFirstTraverser, "nodes_to_be_processed", lambda self: asked.append(1) or own(self))
    _create(dynamodb)
    dynamodb.update_item(
        TableName=TABLE,
        Key={"pk": {"S": "p"}, "sk": {"S": "s"}},
        UpdateExpression="SET #a = :a, #b = :b",
        ExpressionAttributeNames={"#a": "a", "#b": "b"},
        ExpressionAttributeValues={":a": {"S": "1"}, ":b": {"N": "2"}},
    )
    assert (
        0 < len(asked) <= 20
    )  # ten processors walk the tree (twice: a new item is validated first); not once per node


def test_the_handlers_action_names_are_motos_and_a_caller_cannot_change_them() -> None:
    from moto.core import responses
    from moto.dynamodb.responses import DynamoHandler
    from moto.dynamodbstreams.responses import DynamoDBStreamsHandler
    from moto.kms.responses import KmsResponse

    from local import embedded_aws

    embedded_aws.install()  # this test has no moto fixture: alone on a worker, nothing had installed the patches
    own = moto_speed.UNPATCHED["method_names_from_class"]
    for handler in (DynamoHandler, DynamoDBStreamsHandler, KmsResponse):
        names = responses.method_names_from_class(handler)
        assert names == own(handler) and "call_action" in names
        names.clear()
        assert responses.method_names_from_class(handler) == own(handler)


_NUMBERS = st.decimals(allow_nan=False, allow_infinity=False, places=3).map(
    lambda d: str(d.normalize() if d else Decimal(0))
)
_SCALARS = st.one_of(
    st.text().map(lambda s: {"S": s}),
    _NUMBERS.map(lambda n: {"N": n}),
    st.binary().map(lambda b: {"B": b}),
    st.booleans().map(lambda b: {"BOOL": b}),
    st.just({"NULL": True}),
    st.lists(st.text(), min_size=1, unique=True).map(lambda s: {"SS": s}),
    st.lists(_NUMBERS, min_size=1, unique=True).map(lambda s: {"NS": s}),
    st.lists(st.binary(), min_size=1, unique=True).map(lambda s: {"BS": s}),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4).map(lambda v: {"L": v}),
        st.dictionaries(st.text(max_size=5), inner, max_size=4).map(lambda v: {"M": v}),
    ),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(value=_VALUES)
def test_any_attribute_value_casts_as_motos_own_property_casts_it(value: dict[str, Any]) -> None:
    from moto.dynamodb.models.dynamo_type import DynamoType

    from local import embedded_aws

    embedded_aws.install()
    typed = DynamoType(value)
    ours = typed.cast_value
    own = moto_speed.UNPATCHED["cast_value"](typed)
    assert ours == own and type(ours) is type(own)


# Conditions of every kind moto parses, each true or false against the item as it stands, on Put, Update,
# Delete and in transactions (with a ConditionCheck), and ones moto refuses (a missing name, an unused value).
CONDITIONS: list[tuple[str, dict[str, str], dict[str, Any]]] = [
    ("attribute_not_exists(#k)", {"#k": "sk"}, {}),
    ("attribute_exists(#k) AND #n < :ten", {"#k": "sk", "#n": "n"}, {":ten": {"N": "10"}}),
    (
        "#n BETWEEN :lo AND :hi OR begins_with(#t, :pre)",
        {"#n": "n", "#t": "t"},
        {":lo": {"N": "1"}, ":hi": {"N": "3"}, ":pre": {"S": "ab"}},
    ),
    (
        "NOT (#t IN (:a, :b)) AND size(#t) > :two",
        {"#t": "t"},
        {":a": {"S": "x"}, ":b": {"S": "abc"}, ":two": {"N": "2"}},
    ),
    (
        "#m.#i = :v OR attribute_type(#n, :type)",
        {"#m": "m", "#i": "i", "#n": "n"},
        {":v": {"BOOL": True}, ":type": {"S": "N"}},
    ),
    ("contains(#l, :e) AND #n <> :n", {"#l": "l", "#n": "n"}, {":e": {"S": "e"}, ":n": {"N": "2"}}),
    ("#n = :n", {"#n": "n"}, {":n": {"N": "2"}, ":extra": {"S": "unused"}}),
    ("#missing = :n", {}, {":n": {"N": "2"}}),
    ("#n = :absent", {"#n": "n"}, {":n": {"N": "2"}}),
    ("#n = :n AND", {"#n": "n"}, {":n": {"N": "2"}}),
]


def _conditional_outcomes(dynamodb: Any, pk: str) -> list[Any]:
    key = {"pk": {"S": pk}, "sk": {"S": "item"}}
    item = {**key, "n": {"N": "2"}, "t": {"S": "abc"}, "m": {"M": {"i": {"BOOL": True}}}, "l": {"L": [{"S": "e"}]}}
    seen: list[Any] = []

    def attempt(call: Any, **asked: Any) -> None:
        try:
            call(**asked)
            seen.append(("ok", dynamodb.get_item(TableName=TABLE, Key=key, ConsistentRead=True).get("Item")))
        except ClientError as refused:
            seen.append(
                (
                    "refused",
                    refused.response["Error"]["Code"],
                    refused.response["Error"]["Message"],
                    [reason.get("Code") for reason in refused.response.get("CancellationReasons", [])],
                )
            )
        except (KeyError, ValueError) as unknown:  # moto raises on these rather than answering 400 as DynamoDB does
            seen.append(("raised", repr(unknown)))

    for round_ in range(2):
        for expression, names, values in CONDITIONS:
            given = {
                "ConditionExpression": expression,
                **({"ExpressionAttributeNames": names} if names else {}),
                **({"ExpressionAttributeValues": values} if values else {}),
            }
            attempt(dynamodb.put_item, TableName=TABLE, Item=item, **given)
            update = {
                "UpdateExpression": "SET #r = :r",
                "ExpressionAttributeNames": {**names, "#r": "round"},
                "ExpressionAttributeValues": {**values, ":r": {"N": str(round_)}},
            }
            attempt(dynamodb.update_item, TableName=TABLE, Key=key, **update, ConditionExpression=expression)
            attempt(
                dynamodb.transact_write_items,
                TransactItems=[
                    {"ConditionCheck": {"TableName": TABLE, "Key": key, **given}},
                    {"Put": {"TableName": TABLE, "Item": {**key, "sk": {"S": "other"}}}},
                ],
            )
            attempt(
                dynamodb.transact_write_items,
                TransactItems=[
                    {"Update": {"TableName": TABLE, "Key": key, **update, "ConditionExpression": expression}}
                ],
            )
            attempt(dynamodb.delete_item, TableName=TABLE, Key=key, **given)
            attempt(dynamodb.put_item, TableName=TABLE, Item=item)
    return seen


def test_every_kind_of_condition_answers_and_stores_as_with_motos_own_parse(
    dynamodb: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from moto.dynamodb.comparisons import ConditionExpressionParser

    _create(dynamodb)
    ours = _conditional_outcomes(dynamodb, "p")
    assert ConditionExpressionParser.parse.cache_info().hits > 0  # the remembered trees were used
    for sort_key in ("item", "other"):
        dynamodb.delete_item(TableName=TABLE, Key={"pk": {"S": "p"}, "sk": {"S": sort_key}})
    _motos_own(monkeypatch)
    monkeypatch.setattr(ConditionExpressionParser, "parse", moto_speed.UNPATCHED["parse"])
    assert _conditional_outcomes(dynamodb, "p") == ours
    assert {outcome[0] for outcome in ours} == {"ok", "refused", "raised"}
    assert any(outcome[0] == "refused" and outcome[1] == "ValidationException" for outcome in ours)
    assert any(outcome[0] == "refused" and "ConditionalCheckFailed" in str(outcome) for outcome in ours)


def test_a_remembered_condition_holds_no_callers_values_and_notes_what_each_parse_found() -> None:
    from moto.dynamodb.comparisons import ConditionExpressionParser
    from moto.dynamodb.models import Item
    from moto.dynamodb.models.dynamo_type import DynamoType

    from local import embedded_aws

    embedded_aws.install()
    item = Item(
        DynamoType({"S": "p"}),
        DynamoType({"S": "s"}),
        {"pk": {"S": "p"}, "sk": {"S": "s"}, "n": {"N": "2"}, "m": {"M": {"i": {"BOOL": True}}}},
    )
    values = {":n": {"N": "2"}, ":m": {"M": {"i": {"BOOL": True}}}}
    first = ConditionExpressionParser("#n = :n AND #m = :m", {"#n": "n", "#m": "m"}, values)
    tree = first.parse()
    assert (
        tree.expr(item) and first.expr_attr_names_found == ["#n", "#m"] and first.expr_attr_values_found == [":n", ":m"]
    )
    values[":m"]["M"]["i"]["BOOL"] = (
        False  # the caller changes its own dict afterwards: the remembered tree must not follow
    )
    again = ConditionExpressionParser(
        "#n = :n AND #m = :m", {"#n": "n", "#m": "m"}, {":n": {"N": "2"}, ":m": {"M": {"i": {"BOOL": True}}}}
    )
    assert again.parse() is tree and tree.expr(item)
    assert again.expr_attr_names_found == ["#n", "#m"] and again.expr_attr_values_found == [":n", ":m"]
    other = ConditionExpressionParser("#n = :n", {"#n": "n"}, {":n": {"N": "3"}}).parse()
    assert ConditionExpressionParser("#n = :n", {"#n": "n"}, {":n": {"N": "2"}}).parse().expr(item)
    assert other is not tree and not other.expr(item)
    assert ConditionExpressionParser("#n = :n", {"#n": "n"}, {":n": {"S": "2"}}).parse() is not tree  # types tell apart
    assert moto_speed._frozen({"a": True}) != moto_speed._frozen({"a": 1}) and moto_speed._frozen(
        []
    ) != moto_speed._frozen({})
