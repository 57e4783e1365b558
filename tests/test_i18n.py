"""The languages (issue 25): every word the code shows is in the catalog and
translated, the compiled catalogs are the .po files' own, the language is
picked from ?lang=, the cookie and Accept-Language, and every page carries
the switch and its catalog. The browser side (no English left on a French
page) is tests/test_i18n_browser.py."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from babel.messages.extract import extract_from_dir
from babel.messages.frontend import parse_mapping_cfg
from babel.messages.mofile import read_mo, write_mo
from babel.messages.pofile import read_po

from companion import translations
from companion.web.i18n import extract, template

ROOT = Path(__file__).resolve().parents[1]
TR = ROOT / "companion" / "translations"
FIELDS = re.compile(r"\{\{|\}\}|\{\w*\}|%\(\w+\)[sd]")


def code_msgids() -> set[str]:
    """What pybabel extract finds in the code now (babel.cfg)."""
    with open(TR / "babel.cfg") as fh:
        method_map, options_map = parse_mapping_cfg(fh)
    return {msg for _, _, msg, _, _ in extract_from_dir(
        str(ROOT), method_map, options_map, keywords={"_": None, "gettext": None})
        if isinstance(msg, str) and msg}


def po(lang: str):
    with open(TR / lang / "LC_MESSAGES" / "messages.po", "rb") as fh:
        return read_po(fh)


def test_french_is_a_language_and_english_the_source():
    assert translations.languages() == ("en", "fr")


def test_every_word_the_code_shows_is_in_the_french_catalog():
    """A word wrapped in the code (a template's _(), a script's TC.t, a rule's
    refusal) but not in the catalog fails here: run tasks.py i18n extract."""
    known = {m.id for m in po("fr") if m.id}
    missing = sorted(code_msgids() - known)
    assert not missing, f"not in fr/messages.po (python3 tasks.py i18n extract): {missing[:20]}"


def test_every_msgid_is_translated_with_the_same_fields():
    bad = []
    for m in po("fr"):
        if not m.id:
            continue
        if not m.string:
            bad.append((m.id, "untranslated"))
        elif set(FIELDS.findall(m.id)) != set(FIELDS.findall(m.string)):
            bad.append((m.id, m.string))
        elif "fuzzy" in m.flags:
            bad.append((m.id, "fuzzy"))
    assert not bad, bad[:10]


def test_french_says_bust_as_the_card_term():
    """A lowercase "bust" in a French sentence is English ("1 carte sur les 9
    restantes feraient bust" on a Chope! verdict, issue 33): the call is the
    cards' term "Bust", capitalised as tests/kit/french.py keeps it."""
    bad = [m.string for m in po("fr") if m.id and re.search(r"\bbust\b", str(m.string))]
    assert bad == []


def test_the_compiled_catalog_is_the_po_files_own():
    """The committed .mo (what a fresh clone serves) says what the .po says:
    an edited .po without `tasks.py i18n compile` fails here."""
    with open(TR / "fr" / "LC_MESSAGES" / "messages.mo", "rb") as fh:
        mo = read_mo(fh)
    source = po("fr")
    assert {m.id: m.string for m in mo if m.id} == {m.id: m.string for m in source if m.id}
    out = io.BytesIO()
    write_mo(out, source)
    assert out.getvalue() == (TR / "fr" / "LC_MESSAGES" / "messages.mo").read_bytes()


def test_the_catalog_can_fail():
    """A new wrapped word is caught: the extractor sees it."""
    import ast

    src = 'raise RulesError(f"{p} may not flip a {card} now", "game turn")'
    found = list(extract(io.BytesIO(src.encode()), {}, [], {}))
    assert [m for _, _, m, _ in found] == ["{p} may not flip a {card} now", "game turn"]
    assert "{p} may not flip a {card} now" not in translations.catalog("fr")
    assert template(ast.parse('f"a {{x}} {s[\'roll\']}"').body[0].value) == "a {{x}} {roll}"


def test_chopote_rule_quotes_stay_in_french_and_are_not_extracted():
    """Chopote's rulebook is French: its rule lines are quoted as written,
    never offered for translation; a Singapore game's English one is."""
    known = {m.id for m in po("fr")}
    assert not any("bouteille" in k for k in known)
    assert "Give each player 1 Chope card in their colour." in known
    assert translations.RULEBOOK_LANGUAGE["chopote"] == "fr"


class _Accept:
    def __init__(self, best):
        self.best = best

    def best_match(self, langs):
        return self.best if self.best in langs else None


@pytest.mark.parametrize("query,cookie,accept,want", [
    (None, None, None, "en"),
    (None, None, "fr", "fr"),
    (None, "en", "fr", "en"),           # the phone's choice beats its header
    ("fr", "en", None, "fr"),           # the switch beats the cookie
    ("xx", None, None, "en"),           # an unknown language: English
])
def test_the_language_is_picked_from_the_switch_the_cookie_then_the_phone(query, cookie, accept, want):
    assert translations.pick(query, cookie, _Accept(accept) if accept else None) == want


def test_pages_follow_accept_language_and_the_switch_is_remembered(client):
    r = client.get("/", headers={"Accept-Language": "fr-FR,fr;q=0.9,en;q=0.5"})
    html = r.get_data(as_text=True)
    assert '<html lang="fr">' in html
    assert "Tout le monde joue" in html or "En attente d’une partie" in html
    assert 'class="lang-switch"' in html and 'href="/?lang=en"' in html
    data = json.loads(re.search(r'<script id="tc-i18n" type="application/json">(.*?)</script>',
                                html, re.S).group(1))
    assert data["lang"] == "fr" and data["messages"]["Players"] == "Joueurs"
    r = client.get("/?lang=en", headers={"Accept-Language": "fr"})
    assert '<html lang="en">' in r.get_data(as_text=True)
    assert "lang=en" in r.headers.get("Set-Cookie", "")
    r = client.get("/host", headers={"Accept-Language": "fr"})      # the cookie now says en
    assert '<html lang="en">' in r.get_data(as_text=True)


def test_the_login_error_is_in_the_pages_language(client):
    client.get("/?lang=fr")
    page = client.get("/host").get_data(as_text=True)
    token = re.search(r'name="csrf_token" value="([^"]+)"', page).group(1)
    r = client.post("/host/login", data={"pin": "nope-nope", "csrf_token": token})
    assert "PIN erroné." in r.get_data(as_text=True)


def test_the_catalog_embedded_in_a_page_cannot_close_its_script():
    body = translations.catalog_json("fr")
    assert "</" not in body and "<" not in body


def test_each_game_says_which_language_its_rulebook_is_in(client):
    """The form quotes a rule in its rulebook's language (marked lang=…)."""
    langs = {g["name"]: g["rules_language"] for g in client.get("/api/games").json}
    assert langs["chopote"] == "fr"
    assert {langs[g] for g in ("chope", "chomp", "hawker", "tropichaos")} == {"en"}


def test_the_three_commands_that_add_a_language_run_pybabel_on_the_catalogs(tmp_path):
    """tasks.py i18n extract|add LANG|compile (docs/web.md): the pybabel lines
    they run, and those lines on a copy of the catalogs make a new language's
    .po and compile its .mo."""
    import shutil
    import subprocess
    import sys

    sys.path.insert(0, str(ROOT))
    import tasks

    extract_, update = tasks.i18n_commands(["extract"])
    assert extract_[1:3] == ["extract", "-F"] and extract_[3].endswith("translations/babel.cfg")
    assert update[1] == "update"
    assert tasks.i18n_commands(["add", "de"])[0][1:2] == ["init"]
    assert tasks.i18n_commands(["add", "de"])[0][-2:] == ["-l", "de"]
    assert tasks.i18n_commands(["compile"])[0][1] == "compile"
    with pytest.raises(SystemExit):
        tasks.i18n_commands(["frobnicate"])
    # the same pybabel lines on a copy of the catalogs: init a language, compile it
    pybabel = str(Path(sys.executable).with_name("pybabel"))
    copy = tmp_path / "translations"
    shutil.copytree(TR, copy)
    subprocess.run([pybabel, "init", "-i", str(copy / "messages.pot"), "-d", str(copy), "-l", "de"],
                   check=True, capture_output=True)
    subprocess.run([pybabel, "compile", "-f", "-d", str(copy)], check=True, capture_output=True)
    assert (copy / "de" / "LC_MESSAGES" / "messages.mo").exists()


# -- the error pages (issue 33) ---------------------------------------------------

@pytest.mark.parametrize("lang,title,english", [
    ("fr", "Aucune page ici", "Not Found"), ("en", "No page here", "requested URL")])
def test_a_missing_page_is_an_error_page_in_the_readers_language(client, lang, title, english):
    r = client.get(f"/no-such-page?lang={lang}")
    assert r.status_code == 404 and r.mimetype == "text/html"
    page = r.get_data(as_text=True)
    assert f'<html lang="{lang}">' in page and title in page and english not in page


def test_a_page_posted_to_is_a_french_405_that_keeps_its_allow_header(client):
    client.get("/?lang=fr")                              # the lang cookie: French from now on
    r = client.post("/join")
    assert r.status_code == 405 and "GET" in r.headers["Allow"]
    page = r.get_data(as_text=True)
    assert "Cette adresse n’accepte pas cette requête" in page and "Method Not Allowed" not in page


def test_a_failing_page_is_a_french_500_and_the_api_stays_json(app, client, monkeypatch):
    from companion.web import board

    def broken(*a, **k):
        raise RuntimeError("the snapshot broke")
    monkeypatch.setattr(board, "page_game", broken)
    app.testing = False                                  # Flask answers, as in production
    app.config["PROPAGATE_EXCEPTIONS"] = False
    r = client.get("/?lang=fr")
    assert r.status_code == 500 and "Un problème est survenu" in r.get_data(as_text=True)
    assert "Internal Server Error" not in r.get_data(as_text=True)
    r = client.get("/api/no-such-thing")
    assert r.status_code == 404 and "error" in r.json
