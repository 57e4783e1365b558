"""Phones stay awake over plain HTTP (issue 33, item 1): a phone that joins
by the QR code opens http://<the table's LAN address>/, not a secure context,
so chromium has no Screen Wake Lock there (at 127.0.0.1 it has: the page is
opened at the machine's own non-loopback address here, the table listening
on 0.0.0.0). The page then plays NoSleep.js's muted inline looping video
(static/js/awake.js), started at the first tap where the browser wants one,
and where it cannot play says so in one line (docs/web.md, "Keeping the
screen on").

Figure: ``phone_awake_http`` (yes: the video playing on a LAN page)."""

from __future__ import annotations

import pytest

from companion.web.join import lan_ip
from tests.kit.a11y import player_link
from tests.kit.browser import BROWSER, PHONE, TIMEOUT_MS, expect_text, open_host, watch
from tests.kit.web import start_table

pytestmark = BROWSER

#: a browser that lets a video play only after a tap (iOS Safari in Low
#: Power Mode, chromium with --autoplay-policy=user-gesture-required)
TAP_FIRST = """(() => {
  const play = HTMLMediaElement.prototype.play;
  HTMLMediaElement.prototype.play = function () {
    if (!navigator.userActivation.hasBeenActive)
      return Promise.reject(new DOMException('a tap first', 'NotAllowedError'));
    return play.call(this);
  };
})()"""
#: a browser that never plays it
NEVER = """HTMLMediaElement.prototype.play = function () {
  return Promise.reject(new DOMException('no video here', 'NotAllowedError'));
};"""
#: the fallback's state: <html data-awake>, the video playing, the note
STATE = """() => {
  const v = document.getElementById('awake-video');
  const note = document.getElementById('awake-note');
  return {awake: document.documentElement.dataset.awake, secure: window.isSecureContext,
          lock: 'wakeLock' in navigator, playing: !!v && !v.paused && v.currentTime > 0,
          loop: !!v && v.loop && v.muted && v.hasAttribute('playsinline'),
          note: note && !note.hidden ? note.textContent : null};
}"""
PLAYING = """() => { const v = document.getElementById('awake-video');
                     return !!v && !v.paused && v.currentTime > 0.1; }"""


@pytest.fixture
def lan_table(tmp_path):
    """The table listening on every address, and its LAN address's URL."""
    ip = lan_ip()
    if not ip:
        pytest.skip("this machine has no non-loopback address")
    table = start_table(tmp_path, host="0.0.0.0")
    table.lan_url = f"http://{ip}:{table.port}"
    yield table
    table.close()


def lan_page(browser, url, script=None):
    ctx = browser.new_context(**PHONE)
    ctx.set_default_timeout(TIMEOUT_MS)
    if script:
        ctx.add_init_script(script)
    page = watch(ctx.new_page())
    page.goto(url)
    page.wait_for_selector("#conn.live")
    return ctx, page


def test_a_phone_at_the_lan_address_keeps_awake_with_the_video_from_its_first_tap(
        browser, lan_table):
    """The scoreboard and a player's own page at http://<LAN address>/: no
    wake lock there, the muted looping video plays from the first tap."""
    t = lan_table
    host_ctx = browser.new_context(**PHONE)
    own = player_link(open_host(host_ctx, t), "Ana").replace(t.url, t.lan_url)
    host_ctx.close()
    for url in (t.lan_url + "/", own):
        ctx, page = lan_page(browser, url, TAP_FIRST)
        before = page.evaluate(STATE)
        assert before["secure"] is False and before["lock"] is False, before   # the premise
        assert before["awake"] == "waiting" and before["note"] is None, before
        page.locator("#banner").click()                  # the first tap
        page.wait_for_function(PLAYING)
        after = page.evaluate(STATE)
        assert after["awake"] == "video" and after["playing"] and after["loop"], after
        assert after["note"] is None, after
        assert page.errors == [], page.errors            # the video's files served, no CSP refusal
        ctx.close()


def test_where_the_video_cannot_play_the_page_says_the_screen_may_go_dark(browser, lan_table):
    ctx, page = lan_page(browser, lan_table.lan_url + "/", NEVER)
    page.locator("#banner").click()
    expect_text(page, "#awake-note", "This screen may go dark")
    assert page.evaluate(STATE)["awake"] == "none"
    ctx.close()


def test_on_the_tv_the_line_does_not_push_the_screen_down(browser, lan_table):
    ctx = browser.new_context(viewport={"width": 1280, "height": 800})
    ctx.add_init_script(NEVER)
    page = ctx.new_page()
    page.goto(lan_table.lan_url + "/")
    page.wait_for_selector("#conn.live")
    page.locator("#banner").click()
    expect_text(page, "#awake-note", "This screen may go dark")
    assert page.evaluate("document.documentElement.scrollHeight") <= 800
    ctx.close()


def test_a_french_phone_is_told_in_french(browser, lan_table):
    ctx, page = lan_page(browser, lan_table.lan_url + "/?lang=fr", NEVER)
    page.locator("#banner").click()
    expect_text(page, "#awake-note", "Cet écran peut s’éteindre")
    ctx.close()


def test_on_a_secure_page_the_wake_lock_is_used_and_no_video(full_browser, live_server):
    """127.0.0.1 is a secure context: the Wake Lock API, no video (the
    whole chromium: its headless shell has no Wake Lock)."""
    ctx, page = lan_page(full_browser, live_server.url + "/")
    page.wait_for_function("document.documentElement.dataset.awake === 'lock'")
    assert page.evaluate(STATE)["playing"] is False
    assert page.locator("#awake-video").count() == 0
    ctx.close()
