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
