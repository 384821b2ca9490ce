"""Makes the tests' in-process moto keep the promises of the AWS services it stands in for (NOTES.md lists where it does not).

- **Serializable.** DynamoDB runs each request, a TransactWriteItems included, as one isolated
  step. moto 5.2.5 does not: `transact_write_items` deep-copies the tables it touches and puts the
  copies back when an action fails, so a concurrent request's writes can be undone or brought back.
  `install()` puts one lock around every request moto handles (server mode and `mock_aws()` alike:
  both go through `BaseResponse._dispatch`), so requests into the embedded backends run one at a
  time, as DynamoDB's own serialization makes them look. Under that lock a transaction no longer
  needs moto's whole-table copies: local/moto_transactions.py checks every condition first and
  then writes, keeping only the touched items to undo. The cost is measured in `make bench`.
- **No record of every item ever made.** moto's `BaseModel.__new__` appends every instance of every
  model to its class's `instances_tracked` (for the moto server's dashboard and S3's clean-up) and
  drops them only at a reset; for DynamoDB that is every item ever written and every copy each Query
  and transaction makes of its items, kept for ever. That was the local stack's RSS growth (NOTES.md:
  ~100 MB per 1,000 requests of `make bench`'s workload, ~8,000 dead items per 600 requests): DynamoDB
  and DynamoDB Streams models are no longer tracked (`_untracked`).

- **A Query reads one partition.** moto 5.2.5's `Table.query` on a table's own key walks and sorts
  *every* item of the table (`all_items()`) to keep those of one partition key, so each Query cost
  grew with everyone else's data: on a stack holding 1,600 entries of other users a refused POST
  (its recount is a Query) took ~140 ms instead of ~17 and GET /v1/memory ~90 ms instead of ~15.
  DynamoDB reads only the partition; `_partition_query` hands moto's query only the asked
  partition's items (an index Query, which we never make, still walks them all).

- **An expression is lexed once.** moto lexes every condition and filter expression (key conditions
  have a parser of their own) from scratch each time it parses one, six regular expressions tried per token, and it parses each
  transaction action's condition twice (validation, then the write): ~6 % of the local stack's time in
  a transaction-heavy run. The expressions are the app's few constants with new values each time, and
  the tokens depend on the text alone, so `_lexed_once` keeps the tokens of the last 512 texts and
  hands each parse fresh nodes of them (the same nodes moto's lexer makes, a test compares them).

- **Bookkeeping done once.** moto repeats per request work that depends on nothing a request
  changes: the handler class's action names, each update expression's syntax tree, a validator's node
  types at every node, six type questions before a string's value, a transaction condition's tree
  three times (local/moto_speed.py, each compared with moto's own in tests/local_stack/test_moto_speed.py):
  18 % of the CPU of the heaviest routes and fault tests.

- **Fast answers.** DynamoDB answers that are plain JSON skip moto's shape-walking serializer
  (local/moto_wire.py): a Query of 200 items costs a third of what it did.

`lock()` is the same lock, for code that touches moto's backends directly.

Since the local stack (`make run`, the HTTP suites) and the storage suites of `make test` run on AWS's
DynamoDB Local (local/dynamodb_local.py), these patches serve only the quick tier's in-process moto
(`make check`); docs/local-stack.md says which test needs each.
"""

from __future__ import annotations

import functools
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

__all__ = ["install", "installed", "lock"]

_LOCK = threading.RLock()
_installed = False


def lock() -> threading.RLock:
    """The one lock every request into the embedded backends holds while it runs."""
    return _LOCK


def installed() -> bool:
    return _installed


def install() -> None:
    """Patch moto once per process (idempotent). Must run before moto serves its first request."""
    global _installed
    with _LOCK:
        if _installed:
            return
        from moto.core.responses import BaseResponse
        from moto.dynamodb.models import DynamoDBBackend

        dispatch = BaseResponse._dispatch

        def serialized_dispatch(self: Any, *args: Any, **kwargs: Any) -> Any:
            with _LOCK:
                return dispatch(self, *args, **kwargs)

        BaseResponse._dispatch = serialized_dispatch

        from local.moto_transactions import transact_write_items

        DynamoDBBackend.transact_write_items = transact_write_items

        from moto.core.common_models import BaseModel

        BaseModel.__new__ = staticmethod(_untracked(BaseModel.__new__))

        from moto.dynamodb.models.table import Table

        global _UNPATCHED_QUERY
        _UNPATCHED_QUERY = Table.query
        Table.query = _partition_query(Table.query)

        from moto.dynamodb.comparisons import ConditionExpressionParser

        global _UNPATCHED_LEX
        _UNPATCHED_LEX = ConditionExpressionParser._lex_condition_expression
        ConditionExpressionParser._lex_condition_expression = _lexed_once(ConditionExpressionParser, _UNPATCHED_LEX)

        from local import moto_speed, moto_wire

        moto_wire.install()
        moto_speed.install()
        _installed = True


_UNPATCHED_QUERY: Callable[..., Any] | None = None  # moto's own, kept for the test that compares answers
_QUERY_INDEX_NAME_POSITION = (
    6  # Table.query(hash_key, range_comparison, range_objs, limit, start, forward, projection, index_name, ...)
)


def _partition_query(table_query: Callable[..., Any]) -> Callable[..., Any]:
    """moto's Table.query with its candidate items cut to the one partition asked for (the same answer: moto
    keeps exactly the items whose partition key equals `hash_key`, then sorts them by sort key)."""

    def query(self: Any, hash_key: Any, *args: Any, **kwargs: Any) -> Any:
        positional_index = args[_QUERY_INDEX_NAME_POSITION] if len(args) > _QUERY_INDEX_NAME_POSITION else None
        if hash_key is None or kwargs.get("index_name", positional_index) is not None:
            return table_query(self, hash_key, *args, **kwargs)
        partition = self.items.get(hash_key)  # .get: moto's defaultdict must not grow an empty partition
        members = [] if partition is None else list(partition.values()) if self.range_key_attr else [partition]
        self.all_items = lambda: members  # under the one lock: no other request reads this table meanwhile
        try:
            return table_query(self, hash_key, *args, **kwargs)
        finally:
            del self.all_items

    return query


_UNPATCHED_LEX: Callable[..., Any] | None = None  # moto's own lexer, kept for the test that compares tokens


def _lexed_once(parser_class: Any, lex: Callable[..., Any]) -> Callable[..., Any]:
    """moto's condition-expression lexer, remembered per expression text (its tokens depend on nothing else).

    Each call gets new Node tuples with new `children` lists, so nothing a parse does to its nodes
    reaches another parse; a text moto cannot lex raises as before, and is not remembered."""

    @functools.lru_cache(maxsize=512)
    def tokens(expression: str) -> tuple[tuple[Any, Any, Any, Any], ...]:
        probe = parser_class.__new__(parser_class)
        probe.condition_expression = expression
        return tuple((node.nonterminal, node.kind, node.text, node.value) for node in lex(probe))

    def lexed(self: Any) -> Any:
        node = parser_class.Node
        return deque(
            node(nonterminal, kind, text, value, [])
            for nonterminal, kind, text, value in tokens(self.condition_expression)
        )

    lexed.cache_info = tokens.cache_info  # type: ignore[attr-defined]
    return lexed


_UNTRACKED_MODULES = ("moto.dynamodb.", "moto.dynamodbstreams.")


def _untracked(tracked_new: Callable[..., Any]) -> Callable[..., Any]:
    """BaseModel.__new__ that leaves DynamoDB's models out of moto's instance tracking (and tracks the rest)."""

    def new(cls: type, *args: Any, **kwargs: Any) -> Any:
        if cls.__module__.startswith(_UNTRACKED_MODULES):
            return object.__new__(cls)
        return tracked_new(cls, *args, **kwargs)

    return new
