"""How many updates of a kept fact "Replace this one" finds for agents that give no `replaces` (issue 39 #4).

The page's own chalicelib/web/similar.js, in Chromium, on updates a person keeps (the issue's three and seven
like them) and on pairs that are no update. Word overlap alone found 5 of these 10; a product's i-/e- compound
meeting its base word ("iPhone" / "phone") makes it 6, with no false match. The rest need the agent to say
what it updates (`replaces`); docs/review.md has the figures and what was tried.
"""

from __future__ import annotations

from playwright.sync_api import Page

UPDATES = [  # (the kept entry, the suggestion that updates it)
    ("Lives in Lyon", "Now lives in Berlin"),
    ("Is vegetarian", "Is vegan now"),
    ("Uses an Android phone", "Uses an iPhone now"),
    ("Works at Acme", "Now works at Globex"),
    ("Drives a Toyota Corolla", "Drives a Tesla now"),
    ("Has two children", "Has three children now"),
    ("Is learning Spanish", "Speaks Spanish fluently now"),
    ("Prefers coffee in the morning", "Prefers tea in the morning now"),
    ("Takes the bus to work", "Cycles to work now"),
    ("Is allergic to cats", "Is no longer allergic to cats"),
]
FOUND = {0, 2, 3, 5, 7, 9}  # which of UPDATES the matcher sees (6 of 10)
NOT_UPDATES = [
    ("Lives in Lyon", "Likes the old town of Lyon"),
    ("Uses an Android phone", "Uses a standing desk now"),
    ("Is vegetarian", "Is allergic to peanuts now"),
    ("Has two children", "Has a dog called Rex now"),
    ("Works at Acme", "Works from home on Fridays now"),
    ("Prefers tea", "Is a teacher"),
    ("Is vegan", "Visits Vegas every year"),
    ("Reads a book a week", "Uses an eBook reader"),
    ("Has a phone plan with Orange", "Uses an iPhone"),
    ("Reads novels", "Bakes bread"),
    ("Finds a good deal", "Has an ideal weight"),
]


def _verdicts(page: Page, pairs: list[tuple[str, str]]) -> list[list[bool]]:
    return list(
        page.evaluate(
            """async (pairs) => {
                const m = await import(new URL("assets/similar.js", document.baseURI).href);
                return pairs.map(([a, b]) => [m.isSimilar(a, b), m.isSimilar(b, a)]);
            }""",
            [list(pair) for pair in pairs],
        )
    )


def test_replace_this_one_finds_six_of_ten_updates_and_no_non_update(page: Page) -> None:
    updates = _verdicts(page, UPDATES)
    found = {index for index, (forward, backward) in enumerate(updates) if forward and backward}
    assert found == FOUND, [UPDATES[i] for i in sorted(found ^ FOUND)]
    assert all(a == b for a, b in updates)  # the same verdict whichever text comes first
    wrong = [pair for pair, verdict in zip(NOT_UPDATES, _verdicts(page, NOT_UPDATES), strict=True) if any(verdict)]
    assert wrong == []


def test_an_iphone_suggestion_offers_the_android_entry_first(page: Page) -> None:
    ranked = page.evaluate(
        """async () => {
            const m = await import(new URL("assets/similar.js", document.baseURI).href);
            const entries = ["Uses a standing desk", "Uses an Android phone", "Has a phone plan with Orange"]
              .map((text, i) => ({ id: String(i), text }));
            return m.similarEntries("Uses an iPhone now", entries).map((e) => e.text);
        }"""
    )
    assert ranked == ["Uses an Android phone"]
