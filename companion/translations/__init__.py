"""The companion's languages: gettext catalogs, one per language, for the
server's words (Flask-Babel, in the templates) and the page scripts' words
(the same catalog, shipped to the page as JSON: ``TC.t`` in i18n.js, served
at ``/i18n.js``).

``<lang>/LC_MESSAGES/messages.po`` is what a translator edits; the compiled
``messages.mo`` beside it is committed (``pybabel compile``), so a fresh
clone serves every language with no build step; tests/test_i18n.py fails
when a ``.mo`` is older than its ``.po``. English is the source language:
its msgids are the English words, so it needs no catalog.

Which language a request gets (:func:`pick`): ``?lang=xx`` on any page (the
switch every page shows; remembered in the ``lang`` cookie for a year),
else the ``lang`` cookie, else the phone's ``Accept-Language``, else English.

Game content keeps its names: a card, a player or a game title is never
translated. The log, the exports and the store keep ids and the game's own
English lines; only what a page shows is translated.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

from babel.messages.mofile import read_mo

DIR = Path(__file__).resolve().parent
DOMAIN = "messages"
SOURCE = "en"
COOKIE = "lang"
COOKIE_MAX_AGE = 365 * 24 * 3600
#: what the switch calls each language, in that language
NAMES = {"en": "English", "fr": "Français"}
#: the language each game's rulebook is written in (the others are English):
#: a rule quoted from it is shown as written, never translated
RULEBOOK_LANGUAGE = {"chopote": "fr"}


@functools.lru_cache(maxsize=None)
def languages() -> tuple[str, ...]:
    """English, then every language with a compiled catalog here (looked
    up once: every request asks, and the catalogs change only with an
    install)."""
    found = sorted(p.parent.parent.name for p in DIR.glob(f"*/LC_MESSAGES/{DOMAIN}.mo"))
    return (SOURCE, *[lang for lang in found if lang != SOURCE])


def pick(query: str | None, cookie: str | None, accept) -> str:
    """The language for a request: ``?lang=``, the cookie, then ``accept``
    (werkzeug's ``request.accept_languages``), then English."""
    langs = languages()
    for asked in (query, cookie):
        if asked in langs:
            return asked
    best = accept.best_match(langs) if accept is not None else None
    return best or SOURCE


@functools.lru_cache(maxsize=None)
def catalog(lang: str) -> dict[str, str]:
    """Every msgid with its translation in ``lang`` (empty for English):
    what the page scripts translate with (read from the compiled ``.mo``;
    its header and plural messages left out)."""
    if lang == SOURCE or lang not in languages():
        return {}
    with (DIR / lang / "LC_MESSAGES" / f"{DOMAIN}.mo").open("rb") as mo:
        messages = read_mo(mo)
    return {m.id: m.string for m in messages
            if isinstance(m.id, str) and m.id and isinstance(m.string, str) and m.string}


@functools.lru_cache(maxsize=None)
def catalog_json(lang: str) -> str:
    """:func:`catalog` as the JSON a page embeds (``<`` escaped, so no
    string in it can close the script element)."""
    body = json.dumps({"lang": lang, "messages": catalog(lang)}, ensure_ascii=False,
                      sort_keys=True)
    return body.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def current() -> str:
    """The language of this request (``?lang=``, cookie, Accept-Language)."""
    from flask import g, request

    lang = getattr(g, "tc_lang", None)
    if lang is None:
        lang = g.tc_lang = pick(request.args.get("lang"), request.cookies.get(COOKIE),
                                request.accept_languages)
    return lang


def _remember(resp):
    """``?lang=xx`` is kept in the ``lang`` cookie, so the phone remembers it."""
    from flask import request

    asked = request.args.get("lang")
    if asked in languages() and request.cookies.get(COOKIE) != asked:
        resp.set_cookie(COOKIE, asked, max_age=COOKIE_MAX_AGE, samesite="Lax", path="/")
    if resp.mimetype == "text/html":
        resp.vary.add("Accept-Language")
        resp.vary.add("Cookie")
    return resp


def switch() -> list[dict]:
    """The language switch: each language in its own words, with its link."""
    from flask import request

    lang = current()
    here = request.script_root + request.path
    return [{"code": code, "name": NAMES.get(code, code), "href": f"{here}?lang={code}",
             "current": code == lang} for code in languages()]


def install(app) -> None:
    """Flask-Babel on a Flask ``app`` (the table's pages, the league screen):
    the templates' ``_()`` in the request's language, the cookie, the
    templates' helpers ``tc_lang()``, ``tc_switch()`` and ``tc_i18n()``
    (the catalog as JSON, for the page scripts), and ``/i18n.js``
    (endpoint ``tc_i18n_script``: TC.t and TC.tx, which read it)."""
    from flask_babel import Babel
    from markupsafe import Markup

    app.config.setdefault("BABEL_TRANSLATION_DIRECTORIES", str(DIR))
    Babel(app, locale_selector=current)
    app.after_request(_remember)
    app.jinja_env.globals.update(tc_lang=current, tc_switch=switch,
                                 tc_i18n=lambda: Markup(catalog_json(current())))
    app.add_url_rule("/i18n.js", "tc_i18n_script", script_response)


#: the page scripts' side of the catalogs (TC.t, TC.tx): one file, served by
#: the table's pages and the league screen alike at /i18n.js
SCRIPT = DIR / "i18n.js"


def script_response():
    """``i18n.js`` as a Flask response (cached an hour: it changes with a release)."""
    from flask import Response

    resp = Response(SCRIPT.read_bytes(), mimetype="text/javascript")
    resp.headers["Cache-Control"] = "public, max-age=3600"
    return resp


def gettext(lang: str, msgid: str, **params) -> str:
    """``msgid`` in ``lang`` with ``{name}`` params filled (outside a request)."""
    text = catalog(lang).get(msgid, msgid)
    return text.format(**params) if params else text


__all__ = ["languages", "pick", "current", "install", "switch", "script_response", "SCRIPT", "catalog", "catalog_json", "gettext", "NAMES", "COOKIE",
           "RULEBOOK_LANGUAGE", "DIR"]
