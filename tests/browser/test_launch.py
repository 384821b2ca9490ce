"""The shared Chromium is launched lean: no address-bar popups preloaded per window, Playwright's own switches kept."""

from __future__ import annotations

from playwright.sync_api import Browser

from tests.browser.browser_support import WITHOUT_FEATURES, launch_args, playwright_disabled_features


def test_a_new_context_preloads_no_address_bar_popup_and_playwrights_disabled_features_are_kept(
    browser: Browser,
) -> None:
    """Each context is a window, and Chromium 156 preloaded two chrome://omnibox-popup WebUI pages (a renderer each)
    in every window. Chromium keeps only the last --disable-features switch, so ours must carry Playwright's."""
    kept = playwright_disabled_features()
    assert {"PaintHolding", "HttpsUpgrades", "AimEnabled"} <= set(kept)
    switches = [a for a in launch_args() if a.startswith("--disable-features=")]
    assert switches == ["--disable-features=" + ",".join([*kept, *WITHOUT_FEATURES])]

    context = browser.new_context()
    try:
        context.new_page().goto("about:blank")
        session = browser.new_browser_cdp_session()
        urls = [t["url"] for t in session.send("Target.getTargets")["targetInfos"]]
        session.detach()
    finally:
        context.close()
    assert "about:blank" in urls
    assert [u for u in urls if u.startswith("chrome://")] == []


def test_how_the_page_looks_is_judged_on_the_full_chromium_a_person_uses(
    browser: Browser, person_browser: Browser
) -> None:
    """The headless shell runs most tests (a quarter less CPU); screenshots, layout and axe run on `chromium` itself."""

    def product(chromium: Browser) -> str:
        return str(chromium.new_browser_cdp_session().send("Browser.getVersion")["product"])

    person, shell = product(person_browser), product(browser)
    assert person.startswith("Chrome/") and shell.startswith("HeadlessChrome/"), (person, shell)
    assert person.split("/")[1] == shell.split("/")[1]  # one Chromium release, two builds
