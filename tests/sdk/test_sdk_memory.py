"""ctx.memory for agents: frozen items, an immutable sequence, and propose posting one event."""

from __future__ import annotations

import copy
import dataclasses
import pickle
from collections.abc import Sequence

import pytest
from personal_memory_sdk import (
    AgentContext,
    AgentMemory,
    MemoryItem,
    MemoryItems,
    ProposeEvent,
)


class FakeWorker:
    """Records posts instead of sending them."""

    def __init__(self) -> None:
        self.posts: list[tuple[str, list[ProposeEvent]]] = []

    def post_events(self, session_id: str, events: Sequence[ProposeEvent]) -> int:
        self.posts.append((session_id, list(events)))
        return len(events)


def _items() -> MemoryItems:
    return MemoryItems(
        [
            MemoryItem("Prefers metric units", "preference", True, False),
            MemoryItem("Has a dog called Pixel", "fact", False, True),
        ]
    )


def test_memory_item_fields_cannot_be_assigned() -> None:
    item = MemoryItem("Prefers tea", "preference", False, False)
    with pytest.raises(dataclasses.FrozenInstanceError):
        item.text = "Prefers coffee"  # type: ignore[misc]
    with pytest.raises((dataclasses.FrozenInstanceError, AttributeError, TypeError)):
        item.extra = 1  # type: ignore[attr-defined]
    assert item.text == "Prefers tea"


def test_memory_item_rejects_wrong_types() -> None:
    with pytest.raises(TypeError):
        MemoryItem("x", "note", "yes", False)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        MemoryItem(None, "note", False, False)  # type: ignore[arg-type]


def test_memory_items_refuse_item_assignment_append_and_deletion() -> None:
    items = _items()
    with pytest.raises(TypeError):
        items[0] = MemoryItem("x", "note", False, False)  # type: ignore[index]
    with pytest.raises(TypeError):
        del items[0]  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        items.append(MemoryItem("x", "note", False, False))  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        items._items = ()  # type: ignore[misc]
    with pytest.raises(TypeError):
        items += [MemoryItem("x", "note", False, False)]  # type: ignore[operator]
    assert len(items) == 2


def test_memory_items_behave_as_a_read_only_sequence() -> None:
    items = _items()
    assert isinstance(items, Sequence)
    assert [item.kind for item in items] == ["preference", "fact"]
    assert items[-1].tainted is True
    assert isinstance(items[:1], MemoryItems) and len(items[:1]) == 1
    assert items == _items() and hash(items) == hash(_items())
    assert pickle.loads(pickle.dumps(items)) == items
    assert copy.deepcopy(items) == items


def test_memory_items_hold_only_memory_items() -> None:
    with pytest.raises(TypeError):
        MemoryItems([{"text": "x", "kind": "note", "pinned": False, "tainted": False}])  # type: ignore[list-item]


def test_reprs_show_the_shape_not_the_text() -> None:
    items = _items()
    assert "metric" not in repr(items) and "Pixel" not in repr(items)
    assert "kind='preference'" in repr(items[0])
    event = ProposeEvent("e1", "Secret-ish preference", "preference")
    assert "Secret-ish" not in repr(event)


def test_parsed_items_are_strictly_typed_and_errors_name_fields_not_values() -> None:
    parsed = MemoryItems.from_json([{"text": "Likes rain", "kind": "fact", "pinned": False, "tainted": False, "x": 1}])
    assert parsed[0] == MemoryItem("Likes rain", "fact", False, False)
    with pytest.raises(ValueError) as caught:
        MemoryItems.from_json([{"text": "Likes rain", "kind": "fact", "pinned": "no"}])
    assert "pinned" in str(caught.value) and "Likes rain" not in str(caught.value)


def test_propose_posts_exactly_one_propose_event_and_returns_its_id() -> None:
    worker = FakeWorker()
    memory = AgentMemory(_items(), "s-1", worker, id_factory=lambda: "evt-fixed")
    event_id = memory.propose("Prefers short answers", kind="preference", message_id="m-9")
    assert event_id == "evt-fixed"
    assert len(worker.posts) == 1
    session_id, events = worker.posts[0]
    assert session_id == "s-1"
    assert [event.to_json() for event in events] == [
        {
            "id": "evt-fixed",
            "type": "memory.propose",
            "text": "Prefers short answers",
            "kind": "preference",
            "message_id": "m-9",
        }
    ]


def test_propose_uses_fresh_uuid4_ids_by_default() -> None:
    worker = FakeWorker()
    memory = AgentMemory([], "s-1", worker)
    first, second = memory.propose("a"), memory.propose("b")
    assert first != second
    import uuid

    assert uuid.UUID(first).version == 4
    assert worker.posts[0][1][0].kind == "note"
    assert "message_id" not in worker.posts[0][1][0].to_json()


def test_propose_can_repeat_an_event_id() -> None:
    worker = FakeWorker()
    memory = AgentMemory([], "s-1", worker)
    event_id = memory.propose("a")
    assert memory.propose("a", event_id=event_id) == event_id
    assert {events[0].id for _, events in worker.posts} == {event_id}


def test_propose_with_an_unknown_kind_is_refused_before_posting() -> None:
    worker = FakeWorker()
    memory = AgentMemory([], "s-1", worker)
    with pytest.raises(ValueError) as caught:
        memory.propose("Some private text", kind="instruction")
    assert "Some private text" not in str(caught.value)
    assert worker.posts == []


def test_agent_context_and_memory_are_frozen() -> None:
    memory = AgentMemory([MemoryItem("x", "note", False, False)], "s-1", FakeWorker())
    ctx = AgentContext("s-1", memory)
    assert isinstance(ctx.memory.items, MemoryItems)
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.memory = memory  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        ctx.memory.items = MemoryItems()  # type: ignore[misc]


def test_items_carry_their_ref_and_propose_sends_it_as_replaces() -> None:
    items = MemoryItems.from_json(
        [
            {"text": "Is vegetarian", "kind": "fact", "pinned": False, "tainted": False, "ref": "AbC"},
            {"text": "Walks at six", "kind": "note", "pinned": False, "tainted": False},  # an older service: no ref
        ]
    )
    assert [i.ref for i in items] == ["AbC", None]
    assert "AbC" not in repr(items)
    worker = FakeWorker()
    memory = AgentMemory(items, "s-1", worker, id_factory=lambda: "e-1")
    memory.propose("Is vegan now", "fact", replaces=items[0].ref)
    memory.propose("Likes trains", event_id="e-2")
    [(_, [linked]), (_, [plain])] = worker.posts
    assert linked.to_json() == {
        "id": "e-1",
        "type": "memory.propose",
        "text": "Is vegan now",
        "kind": "fact",
        "replaces": "AbC",
    }
    assert "replaces" not in plain.to_json()
    with pytest.raises(ValueError):
        MemoryItems.from_json([{"text": "x", "kind": "note", "pinned": False, "tainted": False, "ref": 5}])
