"""The pages' languages (English and French; see :mod:`companion.translations`).

:func:`install` puts Flask-Babel on the app (:func:`companion.translations.install`):
the templates' ``_()`` and ``{% trans %}`` read the request's language
(:func:`current`), every page embeds its catalog for the page scripts
(``tc_i18n()``: ``TC.t`` in /i18n.js reads it), and ``?lang=xx`` on any page
switches the language and remembers it in the ``lang`` cookie.

:func:`extract` is the babel extractor (``companion/translations/babel.cfg``)
for the Python side: besides ``_()``/``gettext()``/``N_()``, it collects the
words the rules and the web edge send to the pages as data: a
:class:`~companion.games.RulesError`'s message, a setting's label, help,
choices and rulebook quote, a race's title and wording, the API's refusals.
An f-string becomes a message with named fields (``f"it is {who}'s turn"``
-> ``"it is {who}'s turn"``), which the page scripts match against the
English line the server sent (``TC.tx``) to put the French one in its place.
The games keep writing English; the store and the log never see a
translation.
"""

from __future__ import annotations

import ast
import re

from flask import Flask

from .. import translations
from ..translations import current
from .policy import PUBLIC, allow


def install(app: Flask) -> None:
    """The languages on the table's app (:func:`companion.translations.install`),
    ``/i18n.js`` served to anyone, on a reserve connection too (the login
    page needs it, as it needs the static files)."""
    translations.install(app)
    allow(PUBLIC, reserve=True)(app.view_functions["tc_i18n_script"])


# --- extraction (pybabel extract -F companion/translations/babel.cfg) --------

#: calls whose first argument is a message the pages show (a RulesError's second,
#: the rule it names, is one too: "game turn"; not a French rulebook's line)
MESSAGE_CALLS = {"RulesError", "BadRequest", "_refuse", "_answer", "NoLink", "LinkError",
                 "SeasonError", "SeasonNameTaken", "TeachError", "CameraBusy", "ClipError"}
#: keyword arguments that hold words the pages show
TEXT_KEYWORDS = {"label", "help", "rule", "title", "winner", "loser", "tie", "nobody",
                 "false_start", "ineligible", "penalty", "choice_labels", "error"}
#: methods whose docstring a page shows (a game's ranking rule, on the league
#: screen: companion/league/store.py), one line
SHOWN_DOCSTRINGS = {"ranking"}
#: marks a message that may be a single word (a rule's name, a word in _())
RULE = "rule"
GETTEXT = {"_", "gettext", "N_", "lazy_gettext", "ngettext"}
_WORDS = re.compile(r"[A-Za-z]{2}")
#: words of an expression that name no value (a field is named after a value)
_NOT_NAMES = {"if", "else", "not", "and", "or", "in", "is", "for", "None", "True", "False"}


def _words(text: str) -> bool:
    """Whether a message has words of its own (not only {fields})."""
    return bool(_WORDS.search(re.sub(r"\{\w*\}", "", text)))


def _field_name(expr: ast.expr, used: dict) -> str:
    """A readable name for an f-string's field: its last identifier."""
    code = ast.unparse(expr)
    names = re.findall(r"[A-Za-z_]\w*", re.sub(r"'[^']*'|\"[^\"]*\"", lambda m: m.group(0)[1:-1], code))
    names = [n for n in names if n not in _NOT_NAMES]
    name = names[-1] if names else "x"
    if used.get(name, code) != code:
        n = 2
        while f"{name}{n}" in used and used[f"{name}{n}"] != code:
            n += 1
        name = f"{name}{n}"
    used[name] = code
    return name


def template(node: ast.expr, used: dict | None = None) -> str | None:
    """A string, an f-string or a ``+`` of them as one message (``{field}``s
    for the f-string's values; literal braces doubled); None otherwise."""
    used = {} if used is None else used
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value.replace("{", "{{").replace("}", "}}")
    if isinstance(node, ast.JoinedStr):
        out = []
        for part in node.values:
            if isinstance(part, ast.Constant):
                out.append(str(part.value).replace("{", "{{").replace("}", "}}"))
            else:
                out.append("{" + _field_name(part.value, used) + "}")
        return "".join(out)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = template(node.left, used), template(node.right, used)
        if left is None and right is None:
            return None
        # a string joined to a value ("turned over: " + ", ".join(...)): a field
        if left is None:
            left = "{" + _field_name(node.left, used) + "}"
        if right is None:
            right = "{" + _field_name(node.right, used) + "}"
        return left + right
    return None


def _plain(node: ast.expr) -> str | None:
    """A message for ``_()``: a plain string only (its braces as written)."""
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _messages(call: ast.Call, skip_rules: bool):
    """The messages one call carries."""
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    if name in GETTEXT:
        if call.args and (text := _plain(call.args[0])) is not None:
            yield RULE, text                  # marked for the catalog: a word is enough
        return
    if name in MESSAGE_CALLS and call.args:
        yield template(call.args[0])
    if name == "RulesError" and len(call.args) > 1 and not skip_rules:
        yield RULE, template(call.args[1])       # the rule it names: a word is enough
    # a race's wording is a format string already: its {fields} stay fields
    word = _plain if name == "RaceReason" else template
    if name == "RaceReason" and len(call.args) >= 3:
        yield word(call.args[2])
    for kw in call.keywords:
        if kw.arg not in TEXT_KEYWORDS or (skip_rules and kw.arg == "rule"):
            continue
        values = kw.value.elts if isinstance(kw.value, ast.Tuple) else [kw.value]
        for value in values:
            yield word(value)


_SQL = re.compile(r"\s*(SELECT|INSERT|CREATE|DELETE|UPDATE|PRAGMA|DROP|ALTER)\b|.*\(SELECT\b")
#: words of the rulebook's own French (a Chopote rule line quoted in the code)
_FRENCH = re.compile(r"[éèàçùâêîôû]|\b(?:le|la|les|un|une|des|du|il|est|sa|son)\b")


def _all_strings(tree: ast.Module, skip_french: bool):
    """Every sentence a game module writes (statuses, log lines, the buttons'
    words, the pending choice): each string or f-string with a space in it,
    but not a docstring (but for a ranking rule's, which the league shows),
    and not a rulebook's French line."""
    docs, inner = set(), set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(body[0].value, ast.Constant):
            if getattr(node, "name", None) in SHOWN_DOCSTRINGS:
                doc = " ".join(str(body[0].value.value).split())   # as the league shows it
                yield body[0].lineno, "_", doc, []
            docs.add(id(body[0].value))
        if isinstance(node, ast.JoinedStr | ast.BinOp):
            inner.update(id(c) for c in ast.walk(node) if c is not node)
    for node in ast.walk(tree):
        if id(node) in docs or id(node) in inner:
            continue
        if not isinstance(node, ast.Constant | ast.JoinedStr | ast.BinOp):
            continue
        # a plain string with {fields} is a format template already
        text = _plain(node) if isinstance(node, ast.Constant) else template(node)
        if not text or " " not in text.strip() or not _words(text):
            continue
        if " | " in text or "%s" in text or "%r" in text or _SQL.match(text):
            continue                     # a type annotation, a log line, a query
        if skip_french and _FRENCH.search(text):
            continue
        yield node.lineno, "_", text, []


def extract(fileobj, keywords, comment_tags, options):
    """Babel extraction method for the companion's Python modules."""
    source = fileobj.read().decode(options.get("encoding", "utf-8"))
    tree = ast.parse(source)
    filename = getattr(fileobj, "name", "")
    stem = re.sub(r".*/|\.py$", "", str(filename))
    from ..translations import RULEBOOK_LANGUAGE

    skip_rules = RULEBOOK_LANGUAGE.get(stem, "en") != "en"
    if str(options.get("all_strings", "")).lower() in ("1", "true", "yes"):
        yield from _all_strings(tree, skip_rules)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for text in _messages(node, skip_rules):
                loose, text = (True, text[1]) if isinstance(text, tuple) else (False, text)
                if text and _words(text) and (loose or " " in text.strip()) \
                        and not _SQL.match(text):
                    yield node.lineno, "_", text, []
        elif isinstance(node, ast.AnnAssign | ast.Assign):
            target = node.target if isinstance(node, ast.AnnAssign) else node.targets[0]
            if getattr(target, "id", None) == "score_unit" and node.value is not None:
                if (text := _plain(node.value)) is not None:
                    yield node.lineno, "_", text, []


__all__ = ["install", "current", "extract", "template"]


#: a JS string literal, single or double quoted
_JS_STRING = r"""('(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")"""
#: ``TC.t('msgid'`` and ``TC.plural(n, 'word'`` (the word's translation may
#: give both forms: "carte|cartes"), wherever they are nested
_JS_CALLS = (re.compile(r"\bTC\.t\(\s*" + _JS_STRING),
             re.compile(r"\bTC\.plural\((?:[^,()]|\([^()]*\))*,\s*" + _JS_STRING))


def _js_unquote(literal: str) -> str:
    body = literal[1:-1]
    return re.sub(r"\\(u[0-9a-fA-F]{4}|.)", lambda m: chr(int(m.group(1)[1:], 16))
                  if m.group(1).startswith("u") and len(m.group(1)) == 5
                  else {"n": "\n", "t": "\t"}.get(m.group(1), m.group(1)), body)


def extract_js(fileobj, keywords, comment_tags, options):
    """Babel extraction method for the page scripts: every ``TC.t('…')`` and
    ``TC.plural(n, '…')``, nested in other calls or template strings too
    (babel's own JavaScript extractor misses a call inside a call)."""
    source = fileobj.read().decode(options.get("encoding", "utf-8"))
    for pattern in _JS_CALLS:
        for match in pattern.finditer(source):
            lineno = source.count("\n", 0, match.start()) + 1
            yield lineno, "_", _js_unquote(match.group(1)), []


__all__ += ["extract_js"]
