"""A suggestion shows the entries it is like, with "Replace this one" (issue 24); duplicates are explained.

The similarity function itself (chalicelib/web/similar.js) is pinned here in Chromium, by pairs that must
and must not be shown as similar.
"""

from __future__ import annotations

from typing import Any

from playwright.sync_api import Page, expect

from tests.browser.browser_support import Agent, add_entry, memory, new_user, reload, settled, sign_in, switch_on

PROPOSALS = "[data-testid=proposal]"

SIMILAR = [
    ("Prefers coffee", "Now prefers tea"),
    ("Has a cat called Miso", "The cat Miso is nine years old"),
    ("Works at Acme", "works at ACME Corp"),
    ("Lives in Lyon", "Lives in Paris now"),
    ("Prefers tea", "PREFERS  TEA"),
    ("Ｐrefers tea", "Pre\u200bfers tea"),
]
NOT_SIMILAR = [
    ("Prefers short answers", "Prefers metric units"),
    ("Has a cat called Miso", "Has a dog called Rex"),
    ("Prefers coffee", "Prefers metric units"),
    ("Prefers tea", "Lives in Lyon"),
    ("Likes jazz", "Allergic to peanuts"),
    ("The user", "The person"),
    ("", "Prefers tea"),
]


def test_similar_js_pins_pairs_that_must_and_must_not_be_shown_as_similar(page: Page) -> None:
    pairs = [[a, b] for a, b in SIMILAR + NOT_SIMILAR]
    verdicts = page.evaluate(
        """async (pairs) => {
            const m = await import(new URL("assets/similar.js", document.baseURI).href);
            return pairs.map(([a, b]) => [m.isSimilar(a, b), m.isSimilar(b, a)]);
        }""",
        pairs,
    )
    expected = [[True, True]] * len(SIMILAR) + [[False, False]] * len(NOT_SIMILAR)
    assert verdicts == expected, list(zip(pairs, verdicts, strict=True))
    ranked = page.evaluate(
        """async () => {
            const m = await import(new URL("assets/similar.js", document.baseURI).href);
            const entries = ["Prefers coffee", "Lives in Lyon", "Prefers coffee, black", "Prefers tea", "Tea: green", "Prefers tea at noon"]
              .map((text, i) => ({ id: String(i), text }));
            return m.similarEntries("Now prefers tea", entries).map((e) => e.text);
        }"""
    )
    assert ranked == ["Prefers tea", "Prefers tea at noon", "Prefers coffee"]  # most alike first, at most 3


def test_a_suggestion_like_an_entry_shows_it_and_replaces_it(page: Page, live: Any, agent: Agent) -> None:
    """The closest entry is the row's "Looks like an update of" (tests/browser/test_likely_update.py); the others
    close in wording are listed below it, each with "Replace this one"."""
    user = new_user("similar")
    token = sign_in(page, user)
    switch_on(page)
    add_entry(page, "Prefers coffee in the morning", kind="preference")
    add_entry(page, "Prefers green tea at night", kind="preference")
    add_entry(page, "Lives in Lyon")
    proposal = agent.propose(user, token, "Now prefers tea in the morning")
    reload(page)
    item = page.locator(PROPOSALS).first
    expect(item.get_by_test_id("likely-update")).to_contain_text("Prefers coffee in the morning")
    like = item.get_by_test_id("similar-entry")
    expect(like).to_have_count(1)
    expect(like).to_contain_text("Prefers green tea at night")
    button = like.get_by_role(
        "button",
        name="Replace this one: accept “Now prefers tea in the morning” and forget “Prefers green tea at night”",
    )
    expect(button).to_have_text("Replace this one")
    button.click()
    settled(page)
    expect(page.locator("#status")).to_contain_text("in place of the entry it replaces")
    expect(page.locator(PROPOSALS)).to_have_count(0)
    stored = memory(live, token)
    assert sorted(i["text"] for i in stored["items"]) == [
        "Lives in Lyon",
        "Now prefers tea in the morning",
        "Prefers coffee in the morning",
    ]
    assert stored["proposals"] == [] and proposal["id"] in {i["id"] for i in stored["items"]}


def test_a_suggestion_like_nothing_shows_no_similar_block_and_a_duplicate_is_explained(
    page: Page, agent: Agent
) -> None:
    user = new_user("dupe")
    token = sign_in(page, user)
    switch_on(page)
    add_entry(page, "Prefers tea")
    agent.propose(user, token, "Allergic to peanuts")
    reload(page)
    expect(page.locator(PROPOSALS)).to_have_count(1)
    expect(page.get_by_test_id("similar")).to_have_count(0)
    page.locator("#add-text").fill("  PREFERS tea ")
    page.locator("#add-submit").click()
    settled(page)
    expect(page.locator("#status")).to_contain_text("You already keep this, as “Prefers tea”. Nothing was added.")
    expect(page.locator("[data-testid=entry]")).to_have_count(1)


def test_replace_this_one_after_the_entry_was_forgotten_in_another_tab_says_so_and_the_suggestion_waits(
    page: Page, live: Any, agent: Agent
) -> None:
    user = new_user("replace-gone")
    token = sign_in(page, user)
    switch_on(page)
    add_entry(page, "Prefers coffee in the morning", kind="preference")
    add_entry(page, "Prefers green tea at night", kind="preference")
    proposal = agent.propose(user, token, "Now prefers tea in the morning")
    reload(page)
    kept = {i["text"]: i["id"] for i in memory(live, token)["items"]}
    gone = kept["Prefers green tea at night"]
    assert live.request("DELETE", f"/v1/memory/{gone}", token=token)[0] == 204  # another tab forgets it
    page.locator(PROPOSALS).first.locator(f"[data-action=replace][data-replaces='{gone}']").click()
    settled(page)
    status = page.locator("#status")
    expect(status).to_contain_text("The entry it was to replace no longer exists")
    expect(status).not_to_contain_text("no longer waiting")  # it is: nothing was decided
    expect(page.locator(PROPOSALS)).to_have_count(1)
    expect(page.get_by_test_id("similar")).to_have_count(0)  # the refreshed list offers no gone entry
    stored = memory(live, token)
    assert [i["text"] for i in stored["items"]] == ["Prefers coffee in the morning"]
    assert [p["id"] for p in stored["proposals"]] == [proposal["id"]]


def test_a_full_inbox_against_full_memory_reads_each_text_once_not_once_per_pair(page: Page) -> None:
    """50 suggestions x 200 entries of 2000 bytes: each text's words are worked out once (counted by its NFKC
    step), not four times per pair (40,000 normalizations, seconds of a frozen page at every render)."""
    calls = page.evaluate(
        """async () => {
            const m = await import(new URL("assets/similar.js", document.baseURI).href);
            const text = (seed) => Array.from({ length: 250 }, (_, i) => `w${(seed * 7919 + i * 31) % 997}`).join(" ").slice(0, 2000);
            const entries = Array.from({ length: 200 }, (_, i) => ({ id: String(i), text: text(i) }));
            const suggestions = Array.from({ length: 50 }, (_, i) => text(1000 + i));
            const normalize = String.prototype.normalize;
            let count = 0;
            String.prototype.normalize = function (...args) { count += 1; return normalize.apply(this, args); };
            try { for (const s of suggestions) m.similarEntries(s, entries); } finally { String.prototype.normalize = normalize; }
            return count;
        }"""
    )
    assert calls <= 250 + 50, calls  # each entry and each suggestion once (was 4 per pair: 40,000)


def test_sign_out_leaves_none_of_the_persons_texts_held_by_the_similarity_cache(page: Page, agent: Agent) -> None:
    """similar.js keeps each text's words (up to 512 texts) so a render does not work them out again; on a shared
    computer the next person to sign in must find none of the previous person's texts held in the tab."""
    user = new_user("similar-cache")
    token = sign_in(page, user)
    switch_on(page)
    add_entry(page, "Prefers coffee in the morning", kind="preference")
    agent.propose(user, token, "Now prefers tea in the morning")
    reload(page)
    expect(page.locator(PROPOSALS).first.get_by_test_id("likely-update")).to_have_count(1)
    held = 'async () => (await import(new URL("assets/similar.js", document.baseURI).href)).heldTexts()'
    assert page.evaluate(held) >= 2  # the suggestion's and the entry's words were worked out for the render
    page.locator("#signout").click()
    expect(page.locator("#signout")).to_be_hidden()
    assert page.evaluate(held) == 0
