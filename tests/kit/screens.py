"""What the screens tests and ``bench/bench_screens.py`` share (issue 33):
the voice's stub and its latency from a verdict reaching the page to
``speechSynthesis.speak()``; the TV's games x players x moments, each set
up on a real table, and the scoreboard's height at 1280 x 800.

:data:`VOICE_STUB` (a context's init script) puts a recording
``speechSynthesis`` in the page (chromium's own would need a sound card and
a tap) and wraps ``EventSource`` so each live message's arrival is timed
(``performance.now()`` before the page's handler runs): ``window.__spoken``
lists ``{text, lang, t, during}`` (``during``: the arrival time of the
message being handled when speak() was called, null outside one), and
``window.__verdicts`` ``{text, t}``: each verdict line (#verdict of a
decided race) a message brought, with that message's arrival time."""

from __future__ import annotations

import random
import time
from contextlib import contextmanager

from tests.kit.helpers import wait_for

VOICE_STUB = """(() => {
  window.__spoken = [];
  window.__verdicts = [];
  let handling = null;
  const stub = {
    speaking: false, pending: false, paused: false,
    speak(u) { window.__spoken.push({text: u.text, lang: u.lang, t: performance.now(), during: handling}); },
    cancel() {}, pause() {}, resume() {}, getVoices() { return []; },
    addEventListener() {}, removeEventListener() {},
  };
  Object.defineProperty(window, 'speechSynthesis', {value: stub, configurable: true});
  window.SpeechSynthesisUtterance = class { constructor(text) { this.text = text; this.lang = ''; } };
  const Real = window.EventSource;
  window.EventSource = class extends Real {
    addEventListener(type, fn, opts) {
      return super.addEventListener(type, (ev) => {
        const t = performance.now();
        const node = document.getElementById('verdict');
        const race = document.getElementById('race');
        const decided = () => !!race && !race.hidden && race.dataset.phase === 'decided';
        const before = node && decided() ? node.textContent : '';
        handling = t;
        try { return fn(ev); } finally {
          handling = null;
          const after = node && decided() ? node.textContent : '';
          if (after && after !== before) window.__verdicts.push({text: after, t});
        }
      }, opts);
    }
  };
})()"""

#: [(verdict text, ms from its message's arrival to the speak() saying it,
#: whether it was said while that message was handled)] of the page
LATENCIES = """() => window.__verdicts.map((v) => {
  const s = window.__spoken.find((x) => x.text === v.text && x.t >= v.t);
  return [v.text, s ? s.t - v.t : null, !!s && s.during === v.t];
})"""


def spoken(page) -> list[dict]:
    """What the page's stubbed speechSynthesis was asked to say."""
    return page.evaluate("window.__spoken")


# -- the TV at every moment (issue 33, item 3) ---------------------------------

#: the scoreboard on a table TV
TV = {"viewport": {"width": 1280, "height": 800}}
NAMES = ("Ana", "Bo", "Cy", "Dee", "Eve", "Fay")
#: the moments each game is seen at on the TV (item 3: races, questions,
#: countdowns, verdicts, end of game)
MOMENTS = {
    "chope": ("race", "verdict", "question", "end"),
    "chomp": ("countdown", "verdict", "end"),
    "hawker": ("food-poisoning", "end"),
    "chopote": ("play", "end"),
    "tropichaos": ("play", "end"),
}
#: moments that end on their own: Chope!'s open race is over at its deadline
#: (5 s after the card), so each language sees a table of its own, set up
#: just before (the others hold still and are set up once for every language)
RUNS_OUT = frozenset({"race"})
#: the players each game is seen with: 3 to 6, as far as the game goes
PLAYERS = {"chope": (3, 4, 5, 6), "chomp": (3, 4, 5, 6), "hawker": (3, 4),
           "chopote": (3, 4), "tropichaos": (3, 4, 5)}


def seats(n: int) -> list[dict]:
    return [{"name": p, "buzzer": p} for p in NAMES[:n]]


def tap(table, buzzer: str) -> None:
    table.source.press(buzzer)
    table.source.release(buzzer)


def race_phase(table) -> str | None:
    return (table.session.snapshot().get("race") or {}).get("phase")


@contextmanager
def scripted(table):
    """The host's scripted events applied on this thread, not queued on the
    table's way in (``session.enter_through(None)``, as a script does):
    each change through the buzzer pipeline waits out the delivery margin
    (2 ms) for edges stamped before it, which a game of a thousand events
    played to its end pays a thousand times (measured: Chopote for 4 players,
    3.8 s through the pipeline, 1.2 s here). For events only: no buzzer is
    pressed meanwhile, and the way in is given back after."""
    s = table.session
    way_in = s.way_in
    s.enter_through(None)
    try:
        yield s
    finally:
        s.enter_through(way_in)


def play_to_end(table, game: str, n: int, options: dict | None = None,
                setup=()) -> None:
    """A new game of ``game`` for ``n`` players (``setup``: its first
    events), then random legal events from the console's list until it
    ends: a race someone wins or loses where there is one, and another seed
    for a game that goes round in circles (Chomp!'s Ink Out that nobody
    wins). Logged as a script (:func:`scripted`)."""
    with scripted(table):
        _play_to_end(table, game, n, options, setup)


def _play_to_end(table, game: str, n: int, options: dict | None, setup) -> None:
    s = table.session
    for seed in range(3, 20):
        s.new_game(game, seats(n), options or {})
        for ev in setup:
            s.log(ev)
        rng = random.Random(seed)
        for _ in range(1500):
            # the tracker's own answers (a whole snapshot a move, the pages'
            # and the console's, cost more than the game it plays)
            if s.game.finished(s.state):
                return
            legal = s.game.host_events(s.state)      # the console's buttons
            if not legal:
                break
            decisive = [e for e in legal if e.get("winner") or e.get("loser")]
            s.log(rng.choice(decisive or legal))
    raise AssertionError(f"no game of {game} for {n} ended")


def chope_at(table, n: int, moment: str) -> None:
    s = table.session
    if moment == "end":
        return play_to_end(table, "chope", n)
    s.new_game("chope", seats(n))
    if moment == "question":           # a claim older than a card may be: the host is asked
        tap(table, NAMES[1])
        s.log({"type": "flip", "card": "table:red"})
        time.sleep(0.45)
        tap(table, NAMES[2])
        time.sleep(0.35)
        tap(table, NAMES[1])
        time.sleep(0.15)
        s.log({"type": "flip", "card": "table:blue"})
        assert wait_for(lambda: (s.snapshot().get("race") or {}).get("confirm"), 10)
        return
    s.log({"type": "flip", "card": "food:laksa"})
    s.log({"type": "flip", "card": "table:red"})
    if moment == "verdict":            # every other player slams: the whole photo finish
        for name in NAMES[1:n]:
            tap(table, name)
        assert wait_for(lambda: race_phase(table) == "decided", 10)


def chomp_at(table, n: int, moment: str) -> None:
    s = table.session
    if moment == "end":
        return play_to_end(table, "chomp", n)
    s.new_game("chomp", seats(n))
    for i in range(n):                     # each player's card turned over
        legal = s.legal_events()
        s.log(legal[i % len(legal)])
    if moment == "countdown":
        s.start_race(countdown_ms=600_000)
        return
    s.start_race(countdown_ms=0)
    assert wait_for(lambda: race_phase(table) == "live", 10)
    for name in NAMES[:n]:
        tap(table, name)
    assert wait_for(lambda: race_phase(table) == "decided", 10)


def hawker_at(table, n: int, moment: str) -> None:
    from tests.kit.browser import HAWKER_SETUP

    s = table.session
    stalls = ("malay", "chinese", "indian", "international")
    setup = [{"type": "choose_stall", "player": name, "stall": stall}
             for name, stall in zip(NAMES, stalls[:n])] + HAWKER_SETUP[2:]
    if moment == "end":
        return play_to_end(table, "hawker", n, setup=setup)
    s.new_game("hawker", seats(n), {"draws": "private"})
    for ev in setup:
        s.log(ev)
    for name in NAMES[:n]:                 # each draws on their own page
        for pile in ("ingredient", "action"):
            s.log_private(name, next(e for e in s.legal_events()
                                     if e.get("player") == name and e.get("pile") == pile))
    s.log({"type": "event_check", "event": "food-poisoning"})
    for name in NAMES[:n]:              # everyone holds their stomach, then GO
        table.source.press(name)
    s.start_race(countdown_ms=0)
    assert wait_for(lambda: race_phase(table) == "live", 10)


def board_game_at(game: str):
    def at(table, n: int, moment: str) -> None:
        if moment == "end":
            return play_to_end(table, game, n)
        with scripted(table) as s:
            s.new_game(game, seats(n))
            rng = random.Random(3)
            for _ in range(30):
                legal = s.host_snapshot()["legal_events"]
                if not legal or s.snapshot()["finished"]:
                    break
                s.log(rng.choice(legal))
    return at


SET_UP = {"chope": chope_at, "chomp": chomp_at, "hawker": hawker_at,
          "chopote": board_game_at("chopote"), "tropichaos": board_game_at("tropichaos")}

#: the page's height and what sticks out of a 1280 x 800 screen
MEASURE = """() => ({height: document.documentElement.scrollHeight,
                     width: document.documentElement.scrollWidth})"""


#: a context's init script: ``window.__fetching`` counts the page's fetches
#: not done yet, each until its body is read (or it failed) and the page's
#: own callbacks on it have run (the count drops in a task after them)
FETCHING = """(() => {
  window.__fetching = 0;
  const done = () => setTimeout(() => { window.__fetching -= 1; }, 0);
  const real = window.fetch.bind(window);
  const reads = ['json', 'text', 'arrayBuffer', 'blob', 'formData'];
  window.fetch = (...args) => {
    window.__fetching += 1;
    return real(...args).then((res) => {
      for (const m of reads) {
        const read = res[m].bind(res);
        res[m] = () => { window.__fetching += 1; return read().finally(done); };
      }
      done();
      return res;
    }, (err) => { done(); throw err; });
  };
})()"""

#: what a page's own drawing may still be waiting for once it shows the
#: table's version: its fetches (the console's game list, a refetched
#: state), its fonts, then (``frames``) two frames, one drawn after the last
#: of them, else a task after them
SETTLED = """async (frames) => {
  while (window.__fetching > 0) await new Promise((r) => setTimeout(r, 5));
  await document.fonts.ready;
  await new Promise((r) => (frames ? requestAnimationFrame(() => requestAnimationFrame(r))
                                   : setTimeout(r, 0)));
}"""


def settle(page, frames: bool = True) -> None:
    """Wait until ``page`` (in a context with :data:`FETCHING`) has drawn
    what its fetches brought (``frames``: and painted it): a condition, not
    a fixed pause (a busy machine takes what it takes). Without ``frames``
    for a page read for its words only: of two tabs of one context, chromium
    draws frames for the front one only (the other's two frames took 2 s)."""
    page.evaluate(SETTLED, frames)


class Tv:
    """A table TV: one 1280 x 800 tab kept from table to table (a new tab
    costs chromium a renderer and the page's scripts again: about a second
    a screen). Each :meth:`height` loads the scoreboard afresh in it."""

    def __init__(self, browser):
        from tests.kit.browser import TIMEOUT_MS

        self.ctx = browser.new_context(**TV)
        self.ctx.set_default_timeout(TIMEOUT_MS)
        self.ctx.add_init_script(FETCHING)
        self.page = self.ctx.new_page()

    def height(self, table, name: str | None = None, lang: str = "en") -> dict:
        """The scoreboard of ``table`` once it shows the table's state:
        ``{height, width}`` of the page (a screenshot ``name`` if given)."""
        from tests.kit.browser import shot

        page = self.page
        page.goto(f"{table.url}/?lang={lang}")
        page.wait_for_selector("#conn.live")
        version = table.session.version
        page.wait_for_function("(v) => Number(document.body.dataset.version) >= v", arg=version)
        settle(page)                     # the panel's fonts and boards laid out
        got = page.evaluate(MEASURE)
        if name:
            shot(page, name, full_page=False)
        return got

    def close(self) -> None:
        self.ctx.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def tv_screens(browser, root, plan: dict, shots: bool = False):
    """``(game, players, moment, lang, {height, width})`` of the TV for
    every moment of every game in ``plan`` (``{game: {players: languages}}``),
    each moment set up once on a table of its own under ``root`` and seen
    in each of its languages, all on one TV tab; ``shots``: a screenshot of
    each (``tv-<game>-<n>-<moment>.png``, in ``<lang>/`` but for English).
    A table set up once serves every language: the same state, measured
    in each (a game played to its end costs up to a few seconds)."""
    from tests.kit.web import start_table

    with Tv(browser) as tv:
        for game, counts in plan.items():
            for n, langs in counts.items():
                for moment in MOMENTS[game]:
                    each = [(lang,) for lang in langs] if moment in RUNS_OUT else [tuple(langs)]
                    for some in each:
                        table = start_table(root / f"tv-{game}-{n}-{moment}-{'-'.join(some)}",
                                            players=NAMES)
                        try:
                            SET_UP[game](table, n, moment)
                            for lang in some:
                                prefix = "" if lang == "en" else f"{lang}/"
                                name = f"{prefix}tv-{game}-{n}-{moment}.png" if shots else None
                                yield game, n, moment, lang, tv.height(table, name, lang)
                        finally:
                            table.close()


def tv_heights(browser, root, plan: dict, lang: str = "en", shots: bool = False):
    """``(game, players, moment, {height, width})`` of the TV for every
    moment of every game in ``plan`` (``{game: player counts}``) in
    ``lang``, as :func:`tv_screens` sees them."""
    one = {game: {n: (lang,) for n in counts} for game, counts in plan.items()}
    for game, n, moment, _, got in tv_screens(browser, root, one, shots):
        yield game, n, moment, got
