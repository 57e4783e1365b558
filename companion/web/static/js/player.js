/* A player's own page (/p/<secret>): their hidden information, the events
 * they log themselves (the cards they drew), the table as the scoreboard
 * shows it, and in demo mode their own virtual buzzer (press and hold).
 *
 * Everything goes into the page as text (TC.el sets textContent). The live
 * stream is <api>/events: the scoreboard's messages plus `private` (this
 * player's private snapshot) and `gone` (the link stopped working). */
(function () {
  'use strict';
  const TC = window.TC, el = TC.el;
  const $ = (id) => document.getElementById(id);
  const body = document.body;
  const API = body.dataset.api;
  const initial = JSON.parse($('initial-state').textContent);
  const me = initial.player;
  let snap = Object.assign({}, initial.state, { presses: [] });
  let mine = initial.private;
  let gone = false;
  let conn = null;                 // the live stream, once started
  const raceEls = TC.raceEls(document);
  TC.seedGameInfo($('game-info'));

  /* --- drawing -------------------------------------------------------- */
  function render() {
    const title = snap.game_title || snap.title || 'Tabletop Companion';
    document.title = `${TC.plainName(me)}: ${title}`;
    $('title').textContent = title;
    TC.renderBanner(snap, $('banner'));
    TC.renderPlayers(snap, $('players'));
    for (const li of $('players').children) li.classList.toggle('me', li.dataset.player === me);
    TC.renderRace(snap, snap.race, raceEls);
    TC.renderPanel(snap, $('panel'));
    $('last-event').textContent = TC.tx(snap.last_event || '');
    TC.paint($('me'), TC.colours(snap)[me]);
    /* drawn aside and put in place only when it reads differently: the
     * section is a live region, so a screen reader reads the hand again
     * only when it changed, not after every move at the table */
    const fresh = el('div');
    renderPrivate(fresh, mine && mine.view, snap);
    const box = $('private-view');
    if (fresh.innerHTML !== box.innerHTML) box.replaceChildren(...fresh.childNodes);
    renderEvents();
    renderBuzzer();
    body.dataset.version = String(snap.version ?? 0);
    body.dataset.privateVersion = String((mine && mine.version) ?? 0);
  }
  TC.onGameReady(render);

  const KNOWN = new Set(['player', 'hand', 'unknown']);
  /* a private view's key as a word of the page's language */
  const KEY_WORDS = {
    stall: TC.t('Stall'), ingredients: TC.t('Ingredients'), actions: TC.t('Actions'),
    inflation: TC.t('Inflation'), cookable: TC.t('Cookable'), hand: TC.t('Hand'),
  };
  const label = (k) => TC.own(KEY_WORDS, k) || TC.tx(TC.cap(String(k).replace(/_/g, ' ')));
  const total = (v) => (typeof v === 'number' ? v
    : v && typeof v === 'object' ? Object.values(v).reduce((a, n) => a + (typeof n === 'number' ? n : 0), 0) : 0);

  function readable(s, v) {
    if (v == null) return null;
    if (typeof v === 'boolean') return v ? TC.t('yes') : TC.t('no');
    if (typeof v === 'number') return String(v);
    if (typeof v === 'string') return TC.cardName(s, v);
    if (Array.isArray(v)) return v.length ? v.map((x) => readable(s, x)).join(', ') : TC.t('none');
    if (typeof v === 'object') {
      const parts = Object.entries(v).map(([k, x]) => `${label(k)} ${readable(s, x)}`);
      return parts.length ? parts.join(' · ') : TC.t('none');
    }
    return String(v);
  }

  /* The game's own private panel, `private(container, pv, s)` in its page
   * script (static/games/<name>.js), if it has one; else a generic one: the
   * hand as chips (cards not logged as "?"), the other fields as a list. */
  function renderPrivate(box, pv, s) {
    box.replaceChildren();
    $('secret').hidden = gone;
    if (gone) return;
    if (!s.game) { box.append(el('p', { class: 'muted', text: TC.t('No game yet.') })); return; }
    if (!pv || !Object.keys(pv).length) {
      box.append(el('p', { class: 'muted', text: TC.t('Nothing hidden for you in this game.') }));
      return;
    }
    const panel = TC.panelOf(s);
    if (panel.private) {
      try { panel.private(box, pv, s); return; } catch (e) { console.error(e); box.replaceChildren(); }
    }
    if (Array.isArray(pv.hand)) {
      const unknown = total(pv.unknown);
      const n = pv.hand.length + unknown;
      const chips = pv.hand.map((id) => TC.cardName(s, id)).concat(Array(unknown).fill('?'));
      box.append(el('h3', { class: 'hand-title', text: TC.t('Your hand · {cards}', { cards: TC.plural(n, 'card') }) }),
        chips.length ? TC.chips(chips, 'card-chip') : el('p', { class: 'muted', text: TC.t('empty') }));
      if (unknown) box.append(el('p', { class: 'muted small', text: TC.t('? = {cards} you did not log', { cards: TC.plural(unknown, 'card') }) }));
    }
    const rows = [];
    for (const [k, v] of Object.entries(pv)) {
      if (KNOWN.has(k)) continue;
      const text = readable(s, v);
      if (text == null) continue;
      rows.push(el('dt', { text: label(k) }), el('dd', { text }));
    }
    if (rows.length) box.append(el('dl', { class: 'kv facts' }, rows));
  }

  /* --- the player's own events ---------------------------------------- */
  /* Events that differ only in their `cards` (a draw of any 2 Ingredients)
   * are one picker: tap the cards you got, then log them; others are buttons. */
  const pick = new Map();          // group key -> [card ids chosen]
  function groupsOf(events, labels) {
    const out = new Map();
    events.forEach((e, i) => {
      const key = Array.isArray(e.cards) ? 'cards:' + JSON.stringify(Object.assign({}, e, { cards: null })) : 'one:' + i;
      if (!out.has(key)) out.set(key, []);
      out.get(key).push({ event: e, label: labels[i] || { text: e.type } });
    });
    return out;
  }
  const counts = (list) => list.reduce((m, c) => m.set(c, (m.get(c) || 0) + 1), new Map());
  const covers = (cards, chosen) => {
    const have = counts(cards);
    for (const [c, n] of counts(chosen)) if ((have.get(c) || 0) < n) return false;
    return true;
  };
  const same = (a, b) => a.length === b.length && covers(a, b);

  function renderEvents() {
    const box = $('my-events');
    const events = (mine && mine.events) || [];
    $('mine').hidden = !events.length || gone;
    if (!events.length) { box.replaceChildren(); return; }
    $('mine-help').textContent = TC.t('Only the table’s part of it is shown to the others.');
    /* a game's own move composer (`compose` in its page script), if it has one */
    const panel = TC.panelOf(snap);
    if (panel.compose) {
      try {
        panel.compose(box, events, mine.labels || [], { send, snap, view: mine.view, version: mine.version, redraw: renderEvents });
        return;
      } catch (e) { console.error(e); box.replaceChildren(); }
    }
    const parts = [];
    const buttons = [];
    for (const [key, items] of groupsOf(events, mine.labels || [])) {
      if (key.startsWith('cards:') && items.length > 6) parts.push(picker(key, items));
      else for (const it of items) buttons.push(eventButton(it.event, it.label));
    }
    if (buttons.length) parts.push(el('div', { class: 'grid-buttons mine-buttons' }, buttons));
    box.replaceChildren(...parts);
  }

  function eventButton(event, lab) {
    return el('button', { type: 'button', class: 'event', 'data-event': JSON.stringify(event), onclick: () => send(event) },
      el('span', { class: 'what', text: TC.tx(lab.text) }), lab.detail ? el('span', { class: 'detail', text: TC.tx(lab.detail) }) : null);
  }

  function picker(key, items) {
    const chosen = pick.get(key) || [];
    const ids = [];
    for (const it of items) for (const c of it.event.cards) if (!ids.includes(c)) ids.push(c);
    const want = items[0].event.cards.length;
    const match = items.find((it) => same(it.event.cards, chosen));
    const set = (list) => { pick.set(key, list); renderEvents(); };
    const cardButtons = ids.map((c) => {
      const next = chosen.concat([c]);
      const ok = chosen.length < want && items.some((it) => covers(it.event.cards, next));
      const n = chosen.filter((x) => x === c).length;
      return el('button', { type: 'button', class: 'card-pick' + (n ? ' on' : ''), 'data-card': c, disabled: !ok,
        onclick: () => set(next) }, TC.cardName(snap, c), n ? el('span', { class: 'n', text: `×${n}` }) : null);
    });
    const names = chosen.map((c) => TC.cardName(snap, c));
    return el('div', { class: 'picker', 'data-group': key },
      el('h3', { text: items[0].label.detail ? TC.tx(items[0].label.detail) : TC.t('Your cards') }),
      el('p', { class: 'muted small', text: want === 1 ? TC.t('Tap the card you got.') : TC.t('Tap the {n} cards you got.', { n: want }) }),
      el('div', { class: 'card-grid' }, cardButtons),
      el('div', { class: 'row pick-row' },
        el('button', { type: 'button', class: 'primary log-pick', disabled: !match,
          onclick: () => { if (match) send(match.event, () => pick.delete(key)); } },
        match ? TC.t('Log: {cards}', { cards: names.join(', ') }) : TC.t('{n} of {want} chosen', { n: chosen.length, want })),
        el('button', { type: 'button', class: 'clear-pick', disabled: !chosen.length, onclick: () => set([]) }, TC.t('Clear'))));
  }

  /* the player's taps, in the order made; a double tap is logged once, and
     the page says so (TC.tapLine) */
  const tapLine = TC.tapLine(() => snap.version);
  function twice() {
    const note = $('my-error');
    note.textContent = TC.t('Tapped twice before the answer: logged once. Tap it again if there were two.');
    note.hidden = false;
  }
  function send(event, done) {
    return tapLine(JSON.stringify(event), async (expected) => {
      const err = $('my-error');
      err.hidden = true;
      try {
        const r = await TC.post(API + '/event', { event, expected_version: expected });
        if (r.ok) {
          if (done) done();
          accept(r.data);
          return r.data && r.data.state ? r.data.state.version : null;
        }
        err.textContent = r.data && r.data.error ? TC.refusal({ error: r.data.error }) : TC.t('refused ({status})', { status: r.status });
        err.hidden = false;
        if (r.status === 409) refetch();
        if (r.status === 404) lose(err.textContent);
      } catch (e) {
        err.textContent = TC.t('Not sent: no connection to the table. Try again.');
        err.hidden = false;
      }
      return null;
    }, twice);
  }

  function accept(data) {
    if (!data) return;
    if (data.state) { TC.syncClock(data.state.now_ns); snap = Object.assign({}, data.state, { presses: snap.presses || [] }); }
    if ('private' in data) mine = data.private;
    render();
  }

  const refetch = TC.refetcher(() => fetch(API + '/state', { credentials: 'same-origin', cache: 'no-store' })
    .then((r) => { if (r.status === 404) { lose(); return null; } return r.json(); })
    .then(accept));

  function lose(message) {
    gone = true;
    mine = null;
    const g = $('gone');
    g.textContent = message ? TC.tx(message) : TC.t('This link no longer works: ask the host for your new one.');
    g.hidden = false;
    $('private-view').replaceChildren();
    if (conn) conn.stop();
    render();
  }

  /* --- my own buzzer (demo mode): press on touch-down, release on let-go */
  const buzzer = $('my-buzzer');
  let down = false;
  let seq = 0;   /* per change: the time in µs, so that it also increases across reloads */
  function press(pressed) {
    if (down === pressed || gone) return;
    down = pressed;
    buzzer.classList.toggle('down', pressed);
    /* numbered, so the server puts a press and its release back in order */
    TC.post(API + '/press', { pressed, seq: (seq = Math.max(seq + 1, Date.now() * 1000)),
                              page: TC.PAGE }).catch(() => {});
  }
  if (buzzer) {
    buzzer.addEventListener('pointerdown', (e) => {
      e.preventDefault();
      try { buzzer.setPointerCapture(e.pointerId); } catch (err) { /* synthetic or ended pointer */ }
      press(true);
    });
    for (const t of ['pointerup', 'pointercancel', 'lostpointercapture']) buzzer.addEventListener(t, () => press(false));
    buzzer.addEventListener('contextmenu', (e) => e.preventDefault());
    buzzer.addEventListener('keydown', (e) => { if (!e.repeat && (e.key === ' ' || e.key === 'Enter')) { e.preventDefault(); press(true); } });
    buzzer.addEventListener('keyup', (e) => { if (e.key === ' ' || e.key === 'Enter') press(false); });
    window.addEventListener('blur', () => press(false));
  }

  function renderBuzzer() {
    const card = $('buzzer-card');
    if (!card) return;
    const race = snap.race;
    card.hidden = gone || !snap.game || snap.finished;
    TC.paint(buzzer, TC.colours(snap)[me]);
    const mineRace = race && (!race.eligible || !race.eligible.length || race.eligible.includes(me));
    let prompt = TC.t('No race now: your buzzer still counts for the next one.');
    if (race && mineRace) {
      const hold = race.kind === 'first-release';
      const phase = race.phase;
      if (phase === 'decided') prompt = raceEls.verdict.textContent || TC.t('Verdict');
      else if (hold && (phase === 'pending' || phase === 'countdown')) prompt = TC.t('Hold your buzzer now, and keep holding!');
      else if (hold) prompt = TC.t('Keep holding! The first to let go loses.');
      else if (phase === 'live') prompt = race.kind === 'last-press' ? TC.t('Press! The last to press loses.') : TC.t('Press!');
      else prompt = TC.t('Get ready.');
    } else if (race) prompt = TC.t('You are not in this race.');
    $('buzzer-prompt').textContent = prompt;
    card.classList.toggle('racing', !!(race && mineRace && race.phase !== 'decided'));
  }

  /* --- the live stream: the scoreboard's (live.js), plus this page's own
   * `private` and `gone` events; after the browser gave up, the state is
   * fetched again before reconnecting --------------------------------------- */
  function onMessage(type, msg) {
    if (type === 'gone') { lose(msg && msg.error); return; }
    if (type === 'private') { mine = msg.data; render(); return; }
    if (refetch.busy()) refetch();       /* the fetch on its way may predate this */
    const next = TC.applyUpdate(snap, type, msg);
    if (next == null) { refetch(); return; }
    snap = next;
    render();
  }
  function live(beatS) {
    const stream = TC.live({
      heartbeatS: beatS, badge: $('conn'), saving: $('saving'), url: API + '/events',
      types: ['private', 'gone'], onRetry: refetch, onMessage,
    });
    document.addEventListener('visibilitychange', () => { if (document.visibilityState !== 'visible') press(false); });
    return { stop() { stream.stop(TC.t('link revoked')); }, reconnect: stream.reconnect };
  }

  render();
  TC.syncClock(initial.now_ns);
  conn = live(Number(body.dataset.heartbeat) || 15);
  TC.keepAwake();
}());
