"""English left on a French page (issue 33, item 4): the words a page shows
(:data:`VISIBLE_TEXT`), the card names and player names taken out, then
every word looked up in a stoplist of common English words that are not
French ones (:data:`STOPLIST`); a decimal point between digits, and an
internal name (a word with an underscore: "latest_tiebreak") count too.
:func:`english_words` gives each finding with the text it was in;
:func:`report` prints the figure ``fr_english_words``."""

from __future__ import annotations

import re

#: the page's visible words: text nodes (not in scripts, not in the language
#: switch, which names each language in its own words, nor in <code>, which
#: is an address, nor in a quote marked lang="en": an English rulebook's line,
#: shown as written with its French beside it) and the words of attributes
VISIBLE_TEXT = """() => {
  const out = [];
  const skip = 'script, style, code, .lang-switch, [hidden], template, [lang=en], [translate=no]';
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const p = n.parentElement;
    if (!p || p.closest(skip)) continue;
    if (p.closest('details:not([open])') && !p.closest('summary')) continue;
    const t = n.data.replace(/\\s+/g, ' ').trim();
    if (t) out.push(t);
  }
  for (const e of document.querySelectorAll('[aria-label], [title], [alt], [placeholder]')) {
    if (e.closest(skip)) continue;
    for (const a of ['aria-label', 'title', 'alt', 'placeholder']) {
      const v = e.getAttribute(a);
      if (v && v.trim()) out.push(v.trim());
    }
  }
  out.push(document.title);
  return out;
}"""

#: common English words that are not French words (so "on", "plus", "points",
#: "table", "place", "race" stay out: French has them too)
STOPLIST = frozenset("""
the and of to is are was were be been your you with from by first last turn turns turned
over card cards food foods let goes loses lose lost wins win won start starts started
square nobody anyone someone may might chooses choose chose chosen player players game
games round rounds waiting wait waits for this that these those it its his her their they
them he she not yes all any each every other another more most less than then when while
after before until has have had does do did done will would can could should must
hand hands draw draws drew takes take took gives give gave gets get got back out in into
onto up down off only just still again next left right seat seats pressed
press presses tie tied ties tiebreak winner loser false true log logged undo redo reason
end ends ended finished finish which what who whose why how where there here now one two
three four five seven eight nine ten bust busts keep keeps kept discard
discarded claim claims claimed slam slams slammed slapped slap choped chopes pressing
held hold holds release released nothing something settings setting penalty penalties stray strays host move moves moved
roll rolls rolled blocked passes pass passed new rematch same cancel offline reconnecting
connecting virtual details show shows shown hidden own ready set bottle bottles corridor""".split())
#: words the games print on their cards and call out, kept as written when
#: capitalised (the race calls, the card types, a variant's name): "Food"
#: is the Chope! card type, "la food" in a sentence is English
TERMS = ("Chope!", "Siam!", "Chomp!", "Feeding Frenzy!", "Ink Out!", "Ink Out", "Bad Chomp",
         "Food Poisoning!", "Food Poisoning", "Favourite Food", "My Favourite", "Black Market",
         "Drive-off", "Food", "Bust", "Main", "Side", "Event", "Action", "Ingredient", "Mynah",
         "Table", "Wildcard", "Licence Suspended", "GO", "Take", "Sell")
#: French words made of English ones (in French dictionaries; the catalog's
#: own translations): "photo-finish" (of "photo finish", the race strip's
#: label, shown when a verdict counts two presses) is no English "finish"
FRENCH = ("photo-finish",)

#: an English word of the list, a decimal point, an internal name
DECIMAL_POINT = re.compile(r"\d\.\d")
INTERNAL = re.compile(r"\b[a-z]+_[a-z_]+\b")
WORD = re.compile(r"[A-Za-zÀ-ÖØ-öø-ÿ']+")
ELIDED = re.compile(r"^(?:[dlnjmstc]|qu|jusqu|lorsqu|puisqu)'", re.I)


def names_of(snapshot: dict) -> set[str]:
    """The names a French page keeps as written: the players', the game's
    title, the cards' (the view's ``cards`` table), the races' titles."""
    out = {p["name"] if isinstance(p, dict) else p for p in snapshot.get("players") or ()}
    out |= {snapshot.get("title") or "", snapshot.get("game_title") or "", *TERMS}
    for view in (snapshot.get("view"), snapshot.get("host_view")):
        cards = (view or {}).get("cards") if isinstance(view, dict) else None
        for card in (cards or {}).values():
            out.add(card["name"] if isinstance(card, dict) else str(card))
    return {n for n in out if n}


def english_words(texts: list[str], names: set[str]) -> list[tuple[str, str]]:
    """(what, text) for each English word, decimal point or internal name
    in ``texts``, with ``names`` (cards, players, titles) and :data:`FRENCH`
    taken out first."""
    found = []
    cut = sorted(set(names) | set(FRENCH), key=len, reverse=True)
    for text in texts:
        plain = text.replace("’", "'")
        for name in cut:
            plain = plain.replace(name.replace("’", "'"), " ")
        for hit in DECIMAL_POINT.findall(plain):
            found.append((f"decimal point {hit}", text))
        for hit in INTERNAL.findall(plain):
            found.append((f"internal name {hit}", text))
        for word in WORD.findall(plain):
            bare = ELIDED.sub("", word).strip("'").lower()
            if bare in STOPLIST:
                found.append((bare, text))
    return found


def report(found: list) -> int:
    """Print the figure (``-s`` shows it) and return it."""
    print(f"\nfr_english_words {len(found)} words (English words, decimal points and internal "
          f"names on French pages)")
    return len(found)
