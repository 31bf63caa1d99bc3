"""A keyed binary heap with the exact sift rules of Go's container/heap.

Upstream's activeQ and backoffQ are `heap.Heap` values built on container/heap; pods that compare
equal under `less` come out in the order those sift rules give. Porting the rules (rather than
using heapq with a tie-break counter) keeps that order, so equal-priority pods queued at the same
instant pop in the same order as upstream for the same sequence of operations.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

T = TypeVar("T")


class _ByLess:
    """An item's rank where the heap has only `less`: comparing two calls it."""

    __slots__ = ("item", "less")

    def __init__(self, item: Any, less: Callable[[Any, Any], bool]) -> None:
        self.item = item
        self.less = less

    def __lt__(self, other: _ByLess) -> bool:
        return self.less(self.item, other.item)


class KeyedHeap(Generic[T]):
    """`less`: whether one item comes out before another. `rank_of`, where given: an item's rank,
    which `<` orders exactly as `less` orders the items (a tuple compares without a call to
    Python); read when the item is added or updated, so an item must not change its order while
    queued other than through `add_or_update`."""

    __slots__ = ("_items", "_keys", "_ranks", "_index", "_key_of", "_rank_of")

    def __init__(self, key_of: Callable[[T], str], less: Callable[[T, T], bool],
                 rank_of: Callable[[T], Any] | None = None) -> None:
        self._items: list[T] = []
        self._keys: list[str] = []
        self._ranks: list[Any] = []
        self._index: dict[str, int] = {}
        self._key_of = key_of
        self._rank_of: Callable[[T], Any] = rank_of or (lambda item: _ByLess(item, less))

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[T]:
        """Items in heap-array order (as upstream's List)."""
        return iter(list(self._items))

    def has_key(self, key: str) -> bool:
        return key in self._index

    def get(self, key: str) -> T | None:
        i = self._index.get(key)
        return None if i is None else self._items[i]

    def peek(self) -> T | None:
        return self._items[0] if self._items else None

    def add_or_update(self, item: T) -> None:
        key = self._key_of(item)
        i = self._index.get(key)
        if i is not None:
            self._items[i] = item
            self._ranks[i] = self._rank_of(item)
            self._fix(i)
            return
        self._items.append(item)
        self._keys.append(key)
        self._ranks.append(self._rank_of(item))
        self._index[key] = len(self._items) - 1
        self._up(len(self._items) - 1)

    def pop(self) -> T | None:
        if not self._items:
            return None
        n = len(self._items) - 1
        self._swap(0, n)
        self._down(0, n)
        return self._remove_last()

    def delete(self, key: str) -> T | None:
        i = self._index.get(key)
        if i is None:
            return None
        n = len(self._items) - 1
        if n != i:
            self._swap(i, n)
            if not self._down(i, n):
                self._up(i)
        return self._remove_last()

    # -- container/heap internals ---------------------------------------------------------------
    def _remove_last(self) -> T:
        item = self._items.pop()
        self._ranks.pop()
        del self._index[self._keys.pop()]
        return item

    def _swap(self, i: int, j: int) -> None:
        items, keys, ranks = self._items, self._keys, self._ranks
        items[i], items[j] = items[j], items[i]
        keys[i], keys[j] = keys[j], keys[i]
        ranks[i], ranks[j] = ranks[j], ranks[i]
        self._index[keys[i]] = i
        self._index[keys[j]] = j

    def _fix(self, i: int) -> None:
        if not self._down(i, len(self._items)):
            self._up(i)

    # Sifts move a hole instead of swapping at each level: the comparisons, and so the resulting
    # order, are container/heap's, with one index update per moved item.
    def _up(self, j: int) -> None:
        items, keys, ranks, index = self._items, self._keys, self._ranks, self._index
        x, key, rank = items[j], keys[j], ranks[j]
        j0 = j
        while j > 0:
            parent = (j - 1) // 2
            if not rank < ranks[parent]:
                break
            items[j] = items[parent]
            keys[j] = keys[parent]
            ranks[j] = ranks[parent]
            index[keys[j]] = j
            j = parent
        if j != j0:
            items[j], keys[j], ranks[j], index[key] = x, key, rank, j

    def _down(self, i0: int, n: int) -> bool:
        items, keys, ranks, index = self._items, self._keys, self._ranks, self._index
        x, key, rank = items[i0], keys[i0], ranks[i0]
        i = i0
        while True:
            j1 = 2 * i + 1
            if j1 >= n:
                break
            j = j1
            j2 = j1 + 1
            if j2 < n and ranks[j2] < ranks[j1]:
                j = j2
            if not ranks[j] < rank:
                break
            items[i] = items[j]
            keys[i] = keys[j]
            ranks[i] = ranks[j]
            index[keys[i]] = i
            i = j
        if i != i0:
            items[i], keys[i], ranks[i], index[key] = x, key, rank, i
        return i > i0


__all__ = ["KeyedHeap"]
