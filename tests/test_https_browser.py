"""HTTPS on the LAN in a real chromium (issue 33; docs/web.md "HTTPS on the
LAN"): at https://<the machine's LAN address>/ the page is a secure context,
so the Screen Wake Lock is there (at http:// on the same address it is not:
tests/test_awake_browser.py), and the live stream works over TLS.

chromium is started on its own, with ``--ignore-certificate-errors-spki-list``
naming the table's server key: the one certificate is accepted as if a phone
trusted the table's CA, every other certificate error still stands (not
``--ignore-certificate-errors``, which would accept anything and could hide
a page that is not secure)."""

from __future__ import annotations

import pytest

from companion.tablecert import spki_sha256
from companion.web.join import lan_ip
from tests.kit.browser import BROWSER, CHROMIUM, CHROMIUM_ARGS, PHONE, TIMEOUT_MS, watch
from tests.kit.web import start_table

pytestmark = BROWSER

STATE = """() => ({secure: window.isSecureContext, lock: 'wakeLock' in navigator,
                   awake: document.documentElement.dataset.awake,
                   scheme: location.protocol})"""


@pytest.fixture
def lan_https(tmp_path):
    ip = lan_ip()
    if not ip:
        pytest.skip("this machine has no non-loopback address")
    table = start_table(tmp_path, host="0.0.0.0", https=True)
    assert ip in table.keeper.ips                   # the certificate is for the LAN address
    table.lan_https = f"https://{ip}:{table.https_port}"
    table.lan_http = f"http://{ip}:{table.port}"
    yield table
    table.close()


@pytest.fixture
def trusting_chromium(playwright, lan_https):
    """A chromium that accepts the table's server key (as a phone that
    trusted the CA), from the process's one Playwright driver (a second
    sync driver in a process that has one fails)."""
    pin = spki_sha256(lan_https.keeper.issued.cert)
    b = playwright.chromium.launch(executable_path=CHROMIUM, args=[
        *CHROMIUM_ARGS, f"--ignore-certificate-errors-spki-list={pin}"])
    yield b
    b.close()


def phone_page(browser, url):
    ctx = browser.new_context(**PHONE)
    ctx.set_default_timeout(TIMEOUT_MS)
    page = watch(ctx.new_page())
    page.goto(url)
    page.wait_for_selector("#conn.live")            # the live stream, over TLS
    return ctx, page


def test_at_the_lan_address_over_https_the_page_is_secure_and_has_the_wake_lock(
        trusting_chromium, lan_https):
    ctx, page = phone_page(trusting_chromium, lan_https.lan_https + "/")
    state = page.evaluate(STATE)
    assert state["scheme"] == "https:" and state["secure"] is True, state
    assert state["lock"] is True, state
    page.wait_for_function("() => document.documentElement.dataset.awake === 'lock'")
    assert page.errors == [], page.errors
    ctx.close()
    # the same chromium at the plain-HTTP address (the QR code's): it trusts
    # the table, so the page goes on to https by itself, secure again
    ctx, page = phone_page(trusting_chromium, lan_https.lan_http + "/")
    page.wait_for_url(lan_https.lan_https + "/")
    page.wait_for_selector("#conn.live")
    moved = page.evaluate(STATE)
    assert moved["scheme"] == "https:" and moved["secure"] is True, moved
    assert page.errors == [], page.errors
    ctx.close()


def test_a_phone_that_does_not_trust_the_table_stays_on_plain_http_with_no_warning(
        browser, lan_https):
    """Every phone joins on plain HTTP (the QR code's address): one that has
    not trusted the table yet stays there, no certificate warning, live,
    and its page knows it (data-secure="untrusted"); not secure, no wake
    lock (the premise of HTTPS)."""
    ctx = browser.new_context(**PHONE)
    ctx.set_default_timeout(TIMEOUT_MS)
    page = watch(ctx.new_page())
    page.goto(lan_https.lan_http + "/")
    page.wait_for_selector("#conn.live")
    page.wait_for_function("() => document.documentElement.dataset.secure === 'untrusted'")
    plain = page.evaluate(STATE)
    assert page.url == lan_https.lan_http + "/"
    assert plain["secure"] is False and plain["lock"] is False, plain
    assert page.errors == [], page.errors
    ctx.close()


def test_a_chromium_that_does_not_trust_the_table_gets_no_page(browser, lan_https):
    """Without the trust step the browser stops at its certificate error:
    the table never counts as secure by accident."""
    from playwright.sync_api import Error

    ctx = browser.new_context(**PHONE)
    page = ctx.new_page()
    with pytest.raises(Error, match="ERR_CERT"):
        page.goto(lan_https.lan_https + "/")
    ctx.close()


def test_the_join_page_on_http_leads_to_the_trust_step_then_https(browser, lan_https):
    ctx = browser.new_context(**PHONE)
    ctx.set_default_timeout(TIMEOUT_MS)
    page = watch(ctx.new_page())
    page.goto(lan_https.lan_http + "/join")
    page.get_by_role("link", name="How to trust the table").click()
    page.wait_for_selector("#ca-fingerprint")
    href = page.locator("#https-link").get_attribute("href")
    assert href.startswith("https://") and f":{lan_https.https_port}/" in href
    with page.expect_download() as got:
        page.locator("#ca-download").click()
    assert got.value.suggested_filename == "tabletop-table-ca.crt"
    assert page.errors == [], page.errors
    ctx.close()


@pytest.mark.parametrize("lang", ["en", "fr"])
def test_the_trust_and_join_pages_pass_axe_and_read_in_the_phones_language(
        browser, lan_https, lang):
    """axe-core (WCAG 2.2 AA, serious and critical) on /ca and /join with
    HTTPS on, in both schemes; on a French phone no English word (the
    stoplist of the French pages' scan) outside the OS and product names."""
    from tests.kit.a11y import axe_findings, screen
    from tests.kit.french import VISIBLE_TEXT, english_words

    found, words = [], []
    for scheme in ("dark", "light"):
        ctx = screen(browser, scheme, 390, lang=lang)
        page = watch(ctx.new_page())
        for path in ("/ca", "/join"):
            page.goto(lan_https.lan_http + path)
            page.wait_for_selector("main")
            assert page.evaluate("document.documentElement.lang") == lang
            found += axe_findings(page, f"{path} {scheme} {lang}")
            if lang == "fr":
                words += english_words(page.evaluate(VISIBLE_TEXT), set())
        assert page.errors == [], page.errors
        ctx.close()
    assert found == []
    assert words == []
