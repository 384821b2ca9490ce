"""Which DynamoDB actions each Lambda function's code performs on which table, read from the source.

Least privilege is only worth something while the policies match the code. This reads the code's
syntax tree instead of trusting a hand-kept list: a repository method's actions are the client calls
and transaction elements it builds; a service's needs are the repository methods it calls through
`stores.<table>.<method>(...)`. tests/deploy/test_package.py compares the result with the policy files, so a
new write path without its permission (or a permission nobody uses any more) fails the tests.

IAM authorises each element of a TransactWriteItems by its underlying action (PutItem, UpdateItem,
DeleteItem, ConditionCheckItem): there is no `dynamodb:TransactWriteItems` IAM action. A Query of a
global secondary index is authorised on the index's own ARN (`<table ARN>/index/<name>`), so a call
naming `IndexName=` counts under `<table>/index/<name>` (see `resource`).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STORAGE = ROOT / "chalicelib" / "storage"
SERVICES = ROOT / "chalicelib" / "services"

# `Stores` attribute → the storage module holding its repository → the table's logical id.
REPOSITORIES = {
    "entries": "EntriesTable",
    "proposals": "ProposalsTable",
    "journal": "JournalTable",
    "sessions": "SessionsTable",
    "events": "EventsTable",
    "keys": "KeysTable",
    "agents": "EntriesTable",  # the user's grants per agent live in their entries partition
    "connections": "KeysTable",  # a person's connections and the service's MAC key (storage/connections.py)
    "oauth": "KeysTable",  # OAuth's clients, pending requests, codes and refresh tokens (storage/oauth.py)
}
# chalicelib/crypto/keyring.py reaches the keys and journal repositories as `self.keys` / `self.journal`.
# Every function that stores or reads text goes through it: repositories seal and open with its keys.
KEYRING = ROOT / "chalicelib" / "crypto" / "keyring.py"
# The entries and proposals repositories each carry a `fingerprints` helper (storage/fingerprints.py,
# issue 24) acting on the same table; services reach it as `stores.<table>.fingerprints`.
FINGERPRINTS = STORAGE / "fingerprints.py"
FINGERPRINT_HELPER = "fingerprints"
# Modules whose functions act for a repository they are handed as `repo` (kept apart to keep imports one-way):
# read as that repository's methods, and `f(stores.<repo>, ...)` in a service as a call of one.
COMPANIONS = {"entries": ("entry_edits",)}
TEXT_REPOSITORIES = {"entries", "proposals", "events"}
KEYRING_FOR_TEXT = {"sealing_key", "opening_key"}
CLIENT_CALLS = {
    "get_item": "GetItem",
    "put_item": "PutItem",
    "update_item": "UpdateItem",
    "delete_item": "DeleteItem",
    "query": "Query",
    "scan": "Scan",
    "batch_get_item": "BatchGetItem",
    "batch_write_item": "BatchWriteItem",
}
# Helpers of chalicelib/storage/dynamo.py that make a client call on the caller's behalf.
DYNAMO_HELPERS = {
    "query_all": "Query",
    "query_partition": "Query",
    "put_if_absent": "PutItem",
    "update_if": "UpdateItem",
    "partition_keys": "Query",
    "batch_delete": "BatchWriteItem",
}
TRANSACTION_ELEMENTS = {
    "Put": "PutItem",
    "Update": "UpdateItem",
    "Delete": "DeleteItem",
    "ConditionCheck": "ConditionCheckItem",
    "Get": "GetItem",
}
CONSUMER_MODULE = "consumer"


class UnreadableAccess(RuntimeError):
    """The code reaches DynamoDB in a way this reader cannot attribute to a table: extend the reader."""


def _is_self_client(node: ast.expr) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "_client" and _is_name(node.value, "self")


def _is_name(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _is_fingerprints(node: ast.expr) -> bool:
    """`self.fingerprints` (in a repository) or `<repo>.fingerprints` (a repository passed to a helper)."""
    return isinstance(node, ast.Attribute) and node.attr == FINGERPRINT_HELPER


def _index_name(call: ast.Call, constants: dict[str, str]) -> str | None:
    """The `IndexName=` of a call (a literal or a module constant), None without one."""
    for keyword in call.keywords:
        if keyword.arg == "IndexName":
            value = keyword.value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                return value.value
            if isinstance(value, ast.Name) and value.id in constants:
                return constants[value.id]
            raise UnreadableAccess("IndexName is neither a literal nor a module constant")
    return None


def _module_constants(tree: ast.Module) -> dict[str, str]:
    return {
        target.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        for target in node.targets
        if isinstance(target, ast.Name)
    }


def _direct_actions(method: ast.FunctionDef, constants: dict[str, str] | None = None) -> tuple[set[str], set[str]]:
    """The actions a method performs itself, and the other methods of its class it calls (a call on its
    fingerprints helper counts as all of that helper's actions: `fingerprints.*`). An action on an index
    reads `index/<name>:<action>`."""
    actions: set[str] = set()
    calls: set[str] = set()
    through: set[int] = set()  # `.fingerprints` nodes that are the owner of a method call
    for node in ast.walk(method):
        if isinstance(node, ast.Attribute) and _is_fingerprints(node.value):  # called, or handed on as a bound method
            calls.add(f"{FINGERPRINT_HELPER}.{node.attr}")
            through.add(id(node.value))
    for node in ast.walk(method):
        if isinstance(node, ast.Attribute) and _is_fingerprints(node) and id(node) not in through:
            calls.add(f"{FINGERPRINT_HELPER}.*")  # handed on as a value: whatever the receiver may do with it
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            attr, owner = node.func.attr, node.func.value
            if _is_self_client(owner) or _is_name(owner, "client"):  # the fingerprints helper is handed the client
                if attr not in CLIENT_CALLS:
                    raise UnreadableAccess(f"{method.name}: unknown client call {attr}")
                actions.add(_on_index(CLIENT_CALLS[attr], _index_name(node, constants or {})))
            elif _is_name(owner, "dynamo") and attr in DYNAMO_HELPERS:
                actions.add(_on_index(DYNAMO_HELPERS[attr], _index_name(node, constants or {})))
            elif _is_name(owner, "self"):
                calls.add(attr)
        elif isinstance(node, ast.Dict):
            for key in node.keys:
                if isinstance(key, ast.Constant) and key.value in TRANSACTION_ELEMENTS:
                    actions.add(TRANSACTION_ELEMENTS[key.value])
    return actions, calls


def _on_index(action: str, index: str | None) -> str:
    return action if index is None else f"index/{index}:{action}"


def _class_actions(
    classes: list[ast.ClassDef], extra: dict[str, set[str]] | None = None, constants: dict[str, str] | None = None
) -> dict[str, set[str]]:
    methods = {n.name: n for n in classes[0].body if isinstance(n, ast.FunctionDef)}
    direct = {name: _direct_actions(node, constants) for name, node in methods.items()}
    known = dict(extra or {})

    def resolve(name: str, seen: frozenset[str]) -> set[str]:
        actions, calls = direct[name]
        total = set(actions)
        for callee in calls & set(methods) - seen:
            total |= resolve(callee, seen | {callee})
        for callee in calls & set(known):
            total |= known[callee]
        return total

    return {name: resolve(name, frozenset({name})) for name in methods}


def fingerprint_actions() -> dict[str, set[str]]:
    """`fingerprints.<method>` → what that method of storage/fingerprints.py's FingerprintItems may do;
    `fingerprints.*` → everything it may do (the helper handed on as a value)."""
    classes = [
        n
        for n in ast.parse(FINGERPRINTS.read_text()).body
        if isinstance(n, ast.ClassDef) and n.name == "FingerprintItems"
    ]
    if len(classes) != 1:
        raise UnreadableAccess("fingerprints.py: expected the FingerprintItems class")
    methods = _class_actions(classes)
    named = {f"{FINGERPRINT_HELPER}.{name}": actions for name, actions in methods.items()}
    return {**named, f"{FINGERPRINT_HELPER}.*": set().union(*methods.values())}


def repository_actions(module: Path) -> dict[str, set[str]]:
    """Each public method of the module's repository class → every DynamoDB action it may perform; a
    repository with a fingerprints helper also answers `fingerprints.*` (a service's use of that helper)."""
    tree = ast.parse(module.read_text())
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name.endswith("Repository")]
    if len(classes) != 1:
        raise UnreadableAccess(f"{module.name}: expected one repository class, found {len(classes)}")
    for companion in COMPANIONS.get(module.stem, ()):
        classes[0].body.extend(_as_methods(STORAGE / f"{companion}.py"))
    helper = fingerprint_actions()
    resolved = _class_actions(classes, helper, _module_constants(tree))
    if any(
        isinstance(n, ast.Attribute) and n.attr == FINGERPRINT_HELPER and _is_name(n.value, "self")
        for n in ast.walk(classes[0])
    ):
        resolved.update(helper)
    return resolved


class _RepoAsSelf(ast.NodeTransformer):
    """A companion module's functions read as methods: `repo` is `self`, `f(repo, ...)` is `self.f(...)`."""

    def __init__(self, functions: set[str]) -> None:
        self.functions = functions

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id in self.functions and node.args:
            if _is_name(node.args[0], "self"):
                return ast.Call(
                    ast.Attribute(ast.Name("self", ast.Load()), node.func.id, ast.Load()), node.args[1:], node.keywords
                )
        return node

    def visit_Name(self, node: ast.Name) -> ast.AST:
        return ast.Name("self", node.ctx) if node.id == "repo" else node


def _as_methods(module: Path) -> list[ast.FunctionDef]:
    """The module's functions whose first parameter is `repo` (the repository they act for), read as its methods."""
    tree = ast.parse(module.read_text())
    functions = [
        n for n in tree.body if isinstance(n, ast.FunctionDef) and n.args.args and n.args.args[0].arg == "repo"
    ]
    names = {f.name for f in functions}
    return [_RepoAsSelf(names).visit(f) for f in functions]


def _service_imports(tree: ast.Module) -> set[str]:
    """Sibling service modules a service imports (their storage use counts as its own)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "chalicelib.services":
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("chalicelib.services."):
            found.add(str(node.module).rsplit(".", 1)[1])
    return found


def repository_calls(module: Path) -> set[tuple[str, str]]:
    """Every `stores.<table>.<method>(...)` in a module; any other use of a repository is refused."""
    tree = ast.parse(module.read_text())
    calls: set[tuple[str, str]] = set()
    called: set[int] = set()
    through: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and _is_fingerprints(node.value):  # called, or handed on as a bound method
            helper = node.value
            if _is_stores_repo(helper.value):  # type: ignore[attr-defined]
                calls.add((helper.value.attr, f"{FINGERPRINT_HELPER}.{node.attr}"))  # type: ignore[attr-defined]
                called.add(id(helper.value))  # type: ignore[attr-defined]
                through.add(id(helper))
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr == FINGERPRINT_HELPER
            and _is_stores_repo(node.value)
            and id(node) not in through
        ):
            # `stores.<table>.fingerprints` handed to a helper: all of its actions on that table
            calls.add((node.value.attr, f"{FINGERPRINT_HELPER}.*"))  # type: ignore[attr-defined]
            called.add(id(node.value))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.args:
            first = node.args[0]
            if _is_stores_repo(first) and node.func.id in _companion_functions(first.attr):  # type: ignore[attr-defined]
                calls.add((first.attr, node.func.id))  # type: ignore[attr-defined]
                called.add(id(first))
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            owner = node.func.value
            if isinstance(owner, ast.Attribute) and _is_stores(owner.value):
                if owner.attr in REPOSITORIES or owner.attr == "keyring":
                    calls.add((owner.attr, node.func.attr))
                    called.add(id(owner))
                elif owner.attr == "client":
                    raise UnreadableAccess(f"{module.name}: direct client call {node.func.attr}")
    for node in ast.walk(tree):
        if _is_stores_repo(node) and id(node) not in called:
            raise UnreadableAccess(f"{module.name}: stores.{node.attr} used other than by a method call")  # type: ignore[attr-defined]
    return calls


def _companion_functions(repo: str) -> set[str]:
    return {f.name for companion in COMPANIONS.get(repo, ()) for f in _as_methods(STORAGE / f"{companion}.py")}


def _is_stores(node: ast.expr) -> bool:
    """`stores`, or `self.stores` (a service class holding them)."""
    return _is_name(node, "stores") or (
        isinstance(node, ast.Attribute) and node.attr == "stores" and _is_name(node.value, "self")
    )


def _is_stores_repo(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr in REPOSITORIES and _is_stores(node.value)


def _service_modules(names: set[str]) -> set[str]:
    """`names` and every service module they import, transitively."""
    todo, done = set(names), set()
    while todo:
        name = todo.pop()
        done.add(name)
        todo |= _service_imports(ast.parse((SERVICES / f"{name}.py").read_text())) - done
    return done


def keyring_calls(path: Path = KEYRING) -> dict[str, set[tuple[str, str]]]:
    """Each public Keyring method → the (repository, method) pairs it reaches, through its own helpers too."""
    classes = [n for n in ast.parse(path.read_text()).body if isinstance(n, ast.ClassDef) and n.name == "Keyring"]
    methods = {n.name: n for n in classes[0].body if isinstance(n, ast.FunctionDef)}
    direct: dict[str, tuple[set[tuple[str, str]], set[str]]] = {}
    for name, node in methods.items():
        reached: set[tuple[str, str]] = set()
        helpers: set[str] = set()
        for call in ast.walk(node):
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute):
                owner = call.func.value
                if isinstance(owner, ast.Attribute) and _is_name(owner.value, "self") and owner.attr in REPOSITORIES:
                    reached.add((owner.attr, call.func.attr))
                elif _is_name(owner, "self") and call.func.attr in methods:
                    helpers.add(call.func.attr)
        direct[name] = (reached, helpers)

    def resolve(name: str, seen: frozenset[str]) -> set[tuple[str, str]]:
        reached, helpers = direct[name]
        total = set(reached)
        for helper in helpers - seen:
            total |= resolve(helper, seen | {helper})
        return total

    return {name: resolve(name, frozenset({name})) for name in methods if not name.startswith("_")}


def resource(target: str) -> dict[str, object]:
    """The policy's Resource for a table's logical id, or for `<table>/index/<name>` (an index's own ARN)."""
    table, _, index = target.partition("/index/")
    return {"Fn::Sub": f"${{{table}.Arn}}/index/{index}"} if index else {"Fn::GetAtt": [table, "Arn"]}


def required_actions(service_names: set[str]) -> dict[str, set[str]]:
    """Table logical id (or `<table>/index/<name>`) → DynamoDB actions (without the `dynamodb:` prefix) the given
    services need."""
    methods = {repo: repository_actions(STORAGE / f"{repo}.py") for repo in REPOSITORIES}
    keyring = keyring_calls()
    calls: set[tuple[str, str, str]] = set()  # (calling module, repository or "keyring", method)
    for name in sorted(_service_modules(service_names)):
        calls |= {(name, repo, method) for repo, method in repository_calls(SERVICES / f"{name}.py")}
    if {repo for _, repo, _ in calls} & TEXT_REPOSITORIES:
        calls |= {("keyring.py", "keyring", method) for method in KEYRING_FOR_TEXT}
    for name, repo, method in sorted(calls):
        if repo == "keyring":
            if method not in keyring:
                raise UnreadableAccess(f"{name} calls stores.keyring.{method}, which does not exist")
            calls |= {("keyring.py", reached, via) for reached, via in keyring[method]}
    needed: dict[str, set[str]] = {}
    for name, repo, method in sorted(calls):
        if repo == "keyring":
            continue
        if method not in methods[repo]:
            raise UnreadableAccess(f"{name} calls stores.{repo}.{method}, which does not exist")
        for action in methods[repo][method]:
            index, _, plain = action.rpartition(":")
            needed.setdefault(f"{REPOSITORIES[repo]}/{index}" if index else REPOSITORIES[repo], set()).add(plain)
    return needed


def api_services() -> set[str]:
    """The services behind the HTTP routes: every service module except the stream consumer."""
    return {p.stem for p in SERVICES.glob("*.py") if p.stem not in ("__init__", CONSUMER_MODULE)}


def by_function() -> dict[str, dict[str, set[str]]]:
    """Chalice function name → table logical id → actions, for the two functions that touch DynamoDB."""
    return {
        "api_handler": required_actions(api_services()),
        "handle_events_stream": required_actions({CONSUMER_MODULE}),
    }


if __name__ == "__main__":
    for function, tables in by_function().items():
        print(function)
        for table, actions in sorted(tables.items()):
            print(f"  {table}: {', '.join(sorted(actions))}")
