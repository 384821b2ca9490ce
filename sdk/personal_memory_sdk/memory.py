"""What an agent is given: frozen memory items in an immutable sequence.

An agent reads memory but never edits it (only the person does), so the objects it receives refuse
every mutation: items are frozen dataclasses, the sequence is tuple-backed with no setters. Their
`repr` shows the shape, not the text, so printing or logging one does not leak what the person
shared.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, overload

__all__ = ["KINDS", "MemoryItem", "MemoryItems", "comparable"]

_SPACE = re.compile("[\\s\u2800]+")  # the braille blank too: blank to the eye
_CLOSING_STOPS = re.compile("[ .,;\u3002]+$")  # closing stops, ellipses, commas, semicolons
_FILLERS = "\u115f\u1160\u3164\uffa0"  # Hangul fillers: blank to the eye, not format characters


def comparable(text: str) -> str:
    """The text as the service compares it for duplicates, near enough for an agent to skip one.

    Invisible (format) characters dropped, NFKC, case-folded, white-space runs as one space,
    trimmed, closing full stops, ellipses, commas and semicolons dropped ("İ" folds to "i").
    A Hangul filler reads as a space.
    The service also unmasks look-alike letters of other scripts; an agent that misses such a
    disguise is told its proposal was made, and nothing is added (the person's journal says why).
    """
    visible = "".join(" " if c in _FILLERS else c for c in text if unicodedata.category(c) != "Cf")
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", visible).casefold())
    folded = folded.replace("i\u0307", "i")
    spaced = _SPACE.sub(" ", folded).strip()
    return _CLOSING_STOPS.sub("", spaced) or spaced


# The contract's entry kinds.
KINDS: tuple[str, ...] = ("preference", "fact", "note")


@dataclass(frozen=True, slots=True, repr=False)
class MemoryItem:
    """One entry as the host gives it to an agent: the text and where it stands."""

    text: str
    kind: str
    pinned: bool
    tainted: bool
    # An opaque handle for this note, valid in this session only: pass it as `replaces` when a
    # proposal updates the note. None from a service that gives none.
    ref: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.text, str) or not isinstance(self.kind, str):
            raise TypeError("text and kind must be strings")
        if not isinstance(self.pinned, bool) or not isinstance(self.tainted, bool):
            raise TypeError("pinned and tainted must be booleans")
        if self.ref is not None and not isinstance(self.ref, str):
            raise TypeError("ref must be a string or None")

    @classmethod
    def from_json(cls, document: object) -> MemoryItem:
        """Parse one `{text, kind, pinned, tainted, ref?}` item; errors name the field only."""
        if not isinstance(document, Mapping):
            raise ValueError("item is not an object")
        values: dict[str, Any] = {}
        for name, expected in (("text", str), ("kind", str), ("pinned", bool), ("tainted", bool)):
            value = document.get(name)
            if not isinstance(value, expected):
                raise ValueError(f"item.{name} is missing or not a {expected.__name__}")
            values[name] = value
        ref = document.get("ref")
        if ref is not None and not isinstance(ref, str):
            raise ValueError("item.ref is not a str")
        return cls(**values, ref=ref)

    def __repr__(self) -> str:
        return (
            f"MemoryItem(kind={self.kind!r}, pinned={self.pinned}, tainted={self.tainted}, "
            f"text=<{len(self.text)} chars>)"
        )


class MemoryItems(Sequence[MemoryItem]):
    """An immutable, tuple-backed sequence of `MemoryItem`: indexing and iteration only."""

    __slots__ = ("_items",)
    _items: tuple[MemoryItem, ...]

    def __init__(self, items: Iterable[MemoryItem] = ()) -> None:
        values = tuple(items)
        if not all(isinstance(value, MemoryItem) for value in values):
            raise TypeError("MemoryItems holds only MemoryItem values")
        object.__setattr__(self, "_items", values)

    @classmethod
    def from_json(cls, documents: object) -> MemoryItems:
        """Parse the `items` list of a context response."""
        if not isinstance(documents, list):
            raise ValueError("items is not a list")
        return cls(MemoryItem.from_json(document) for document in documents)

    @overload
    def __getitem__(self, index: int) -> MemoryItem: ...

    @overload
    def __getitem__(self, index: slice) -> MemoryItems: ...

    def __getitem__(self, index: int | slice) -> MemoryItem | MemoryItems:
        if isinstance(index, slice):
            return MemoryItems(self._items[index])
        return self._items[index]

    def __len__(self) -> int:
        return len(self._items)

    def holds(self, text: str) -> bool:
        """Whether an item already says `text` as a person reads it (proposing it: `duplicate`)."""
        wanted = comparable(text)
        return any(comparable(item.text) == wanted for item in self._items)

    def __iter__(self) -> Iterator[MemoryItem]:
        return iter(self._items)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, MemoryItems):
            return self._items == other._items
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._items)

    def __setattr__(self, name: str, value: object) -> NoReturn:
        raise AttributeError("MemoryItems is immutable")

    def __delattr__(self, name: str) -> NoReturn:
        raise AttributeError("MemoryItems is immutable")

    def __reduce__(self) -> tuple[type[MemoryItems], tuple[tuple[MemoryItem, ...]]]:
        return (MemoryItems, (self._items,))

    def __repr__(self) -> str:
        return f"MemoryItems({list(self._items)!r})"
