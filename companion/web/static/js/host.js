/* The host console: the table as the scoreboard shows it, plus big buttons
 * for the legal next events only, undo/redo, races, virtual buzzers and a
 * new-game form built from the game's declared settings. Every change goes
 * through /api/host/... with the CSRF token; the rules' refusals are shown
 * as they come back (beside the form control that caused them). It knows
 * no game by name: game-specific drawing is in static/games/<name>.js. */
(function () {
  'use strict';
  const TC = window.TC;
  const el = TC.el;
  const $ = (id) => document.getElementById(id);
  const cfg = JSON.parse($('host-config').textContent);
  const raceEls = TC.raceEls(document);
  TC.seedGameInfo($('game-info'));
  let hs = null;            // the host snapshot

  /* --- talking to the server ------------------------------------------- */
  let toastTimer = null;
  /* While the host is asked a race's question, what a tap says is written
   * in the question itself, above its buttons: a toast over the foot of
   * the screen would cover the answers (a phone shows them there). */
  function noteInQuestion(text, ok) {
    const box = $('race-confirm');
    if (!box || box.hidden) return false;
    let note = $('race-confirm-note');
    if (!note) note = el('p', { id: 'race-confirm-note' });
    note.className = ok ? 'confirm-note ok' : 'confirm-note field-error';
    note.setAttribute('role', ok ? 'status' : 'alert');
    note.textContent = text;
    if (!box.contains(note)) box.querySelector('.confirm-q').after(note);
    return true;
  }
  function toast(text, ok) {
    const t = $('toast');
    if (noteInQuestion(text, ok)) { t.hidden = true; return; }
    t.replaceChildren(el('p', { class: ok ? 'ok' : 'error', role: 'alert', text }));
    t.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { t.hidden = true; }, ok ? 2000 : 6000);
  }

  /* POST; on success take the new state; on a refusal call onError(data)
   * if given (the form shows it in place), else toast it. */
  async function act(url, body, onError) {
    const res = await TC.post(url, body);
    if (res.ok && res.data && res.data.update && res.data.update.type === 'queued') {
      const d = res.data.update.data || {};
      toast(TC.t('Waiting for the race: {what}', { what: d.line ? TC.tx(d.line) : TC.t('logged') }), true);
    }
    if (res.status === 401) { location.reload(); return null; }
    if (!res.ok) {
      const d = res.data || {};
      /* the store could not write: the banner says so until an event is
         logged again (the live stream's `saving` event usually says it first) */
      if (res.status === 503 && d.rule === 'store' && $('saving').hidden) TC.showSaving($('saving'), { saving: false, error: d.error });
      if (onError) onError(d, res.status);
      else toast(TC.refusal(d, res.status));
      if (res.status === 409) refresh();
      return null;
    }
    if (res.data && res.data.state) { hs = keep(res.data.state); render(); }
    return res.data;
  }

  function keep(next) { return Object.assign(next, { presses: TC.settled(hs && hs.presses) }); }

  /* Fetch the host snapshot (TC.refetcher: news that comes while a fetch
   * is on its way asks for one more after it) */
  const refresh = TC.refetcher(() => fetch('/api/host/state', { credentials: 'same-origin' }).then((r) => {
    if (r.status === 401) { location.reload(); return null; }
    return r.json();
  }).then((s) => {
    if (!s) return;
    TC.syncClock(s.now_ns);
    hs = keep(s);
    render();
  }));

  /* --- labels for events: the game's own words (legal_labels) ------------ */
  const cap = TC.cap;
  const typeWord = TC.typeWord;
  /* a race outcome in the game's declared wording: "Grab! Ana grabs it · false start: Bo" */
  function raceLabel(e) {
    const [line] = TC.verdictLine(hs, { reason: e.reason, info: (hs.race_request || {}).info }, e);
    const r = TC.reasonInfo(hs, e.reason) || {};
    const notes = [];
    if ((e.false_starts || []).length) notes.push(`${r.false_start ? TC.tx(r.false_start) : TC.t('false start')}: ${e.false_starts.join(', ')}`);
    if ((e.ineligible || []).length) notes.push(`${r.ineligible ? TC.tx(r.ineligible) : TC.t('not eligible')}: ${e.ineligible.join(', ')}`);
    /* "no penalty" only beside an outcome that has a penalty, to tell them apart */
    const penalised = (hs.legal_events || []).some((x) => x.type === 'race' && ((x.false_starts || []).length || (x.ineligible || []).length));
    if (!notes.length && penalised) notes.push(TC.t('no penalty'));
    return [line, ...notes].join(' · ');
  }
  function label(e, words) {
    /* a race outcome always says all of it: the verdict and every penalty
     * (false starts, Bad Chomps), so no two buttons read the same */
    if (e.type === 'race') return raceLabel(e);
    /* no words of the game's own (the base class's "type=flip side=heads"):
     * the event's values, readable */
    if (!words || /^type=/.test(words)) {
      const vals = Object.entries(e).filter(([k, v]) => k !== 'type' && v != null && typeof v !== 'object');
      return vals.length ? vals.map(([, v]) => TC.cardName(hs, v)).join(' · ') : cap(String(e.type));
    }
    /* under a heading that names the type already: "flip Laksa" -> "Laksa" */
    const t = String(e.type).replace(/[-_]/g, ' ');
    let rest = words.toLowerCase().startsWith(t.toLowerCase() + ' ') ? words.slice(t.length + 1) : words;
    /* ... unless the words go on from the verb ("stop and claim the food") */
    if (/^(and|or|then|to)\b/i.test(rest)) rest = words;
    return TC.tx(cap(rest.replace(/^:\s*/, '')));
  }
  function colourOf(e) {
    const col = TC.colours(hs);
    for (const k of ['player', 'winner', 'loser']) if (e[k] && col[e[k]]) return col[e[k]];
    const panel = TC.panelOf(hs);
    if (panel.eventColour) {
      try { return panel.eventColour(e, hs) || null; } catch (err) { console.error(err); }
    }
    return null;
  }

  /* --- the legal next events -------------------------------------------- */
  const MAX_BUTTONS = 30;
  /* "Logged: Red Table" under the host's thumb (the thumb bar), so a tap
   * is confirmed where it was made, not only in the log further down */
  function showLogged(text) {
    const line = $('logged');
    line.textContent = text;
    line.hidden = !text;
  }
  /* Every event the host logs goes through one tap line (TC.tapLine): in
   * the order tapped; a double tap is logged once, and the thumb bar says
   * so. `what`: the event's words; `onError` as act's. Resolves to {sent,
   * data}: data is act's answer (null: refused); sent false for a double
   * tap, which was not sent at all. */
  const tapLine = TC.tapLine(() => hs.version);
  async function logThrough(event, what, onError) {
    const out = { sent: false, data: null };
    await tapLine(JSON.stringify(event), async (expected) => {
      out.sent = true;
      out.data = await act('/api/host/event', { event, expected_version: expected }, onError);
      return out.data && out.data.state ? out.data.state.version : null;
    }, () => setTimeout(() => showLogged(    /* after the first tap's own "Logged: ..." */
      TC.t('Tapped twice before the answer: {what} logged once. Tap it again if there were two.',
        { what: words(event, what) })), 0));
    return out;
  }
  /* what the thumb bar calls a logged event: the button's words, else the
   * log's last line, else its type */
  const words = (event, what) => what || TC.tx(lastLine()) || event.type;
  async function logEvent(event, what) {
    const res = (await logThrough(event, what)).data;
    if (res) {
      const queued = res.update && res.update.type === 'queued';
      const done = { what: words(event, what) };
      showLogged(queued ? TC.t('Waits for the race: {what}', done) : TC.t('Logged: {what}', done));
    }
    return res;
  }
  function lastLine() {
    const last = (hs.log || []).slice(-1)[0];
    return last ? last.line : '';
  }
  /* The panels' way to log (TC.logEvent in render.js): the same path, but
   * a refusal goes back to the panel, which says why where the tap was. */
  TC.setLogger((event) => new Promise((resolve, reject) => {
    let refused = null;
    logThrough(event, null, (d, status) => {
      refused = { error: d.error ? TC.tx(d.error) : TC.t('error {status}', { status }), rule: d.rule || null, status };
    }).then(({ sent, data }) => (data || !sent ? resolve(data) : reject(refused || { error: TC.t('not logged: log in again'), rule: 'login', status: 401 })),
      () => reject({ error: TC.t('no answer from the companion: nothing was logged'), rule: null, status: 0 }));
  }));

  /* "Roll for us": when the table's next step is a die-like roll (the
   * server's `draw`), the companion draws it by its odds and logs it. */
  function drawButton(offer) {
    const what = typeWord(offer.type);
    const ps = [...new Set(offer.outcomes.map((o) => o.p))];
    const odds = ps.length === 1 ? TC.t(', each {p}', { p: ps[0] }) : '';
    return el('div', { class: 'draw-for-us' }, el('p', { class: 'row' },
      el('button', { type: 'button', id: 'draw-for-us', class: 'primary', onclick: async (ev) => {
        ev.currentTarget.disabled = true;
        const res = await act('/api/host/draw', { expected_version: hs.version });
        if (res) {
          const last = (res.state.log || []).slice(-1)[0];
          toast(last ? TC.tx(last.line) : `${what}: ${res.drawn[offer.field]}`, true);
          /* the live update of the roll may have been fetched before the
           * server marked it "drawn by the companion": fetch once more */
          refresh();
        }
      } }, TC.t('{what} for us', { what }))),
      el('p', { class: 'help', text: TC.t('Lost it? The companion draws one of {values} at random{odds}, and logs it.', { values: offer.outcomes.map((o) => o.value).join(', '), odds }) }));
  }

  /* The host never waits to log: while an unannounced race is open (its
   * outcome is all the rules take now), the steps that could be logged
   * before it (the next cards, Stop) stay offered, the cards under "Next
   * card"; one logged now waits for the race (the session queues it) and
   * is refused if no outcome allows it. They stay from its verdict until
   * the verdict is logged too (the page draws the decided race first, the
   * logged state a moment later): else for that moment they vanished and
   * the race's outcome buttons moved up where the host's thumb was going.
   * (A verdict logged that leaves a choice, a Siam! loser's card: the
   * choice comes first, as before.) */
  const DRAWS = new Set(['flip', 'draw', 'reveal', 'roll']);
  let lastDraws = { game: null, items: [] };
  function nextCards(legal, labels) {
    const draws = [];
    legal.forEach((e, i) => { if (e.type !== 'race') draws.push([e, labels[i]]); });
    const key = `${hs.game_id}`;
    if (draws.some(([e]) => DRAWS.has(e.type))) { lastDraws = { game: key, items: draws }; return []; }
    const race = hs.race;
    const unlogged = legal.some((e) => e.type === 'race');    // its outcome still to log
    const open = race && !race.announced && (race.phase === 'live' || race.confirm
      || (race.phase === 'decided' && unlogged));
    return open && lastDraws.game === key ? lastDraws.items : [];
  }

  function renderLegal() {
    const box = $('legal');
    const labels0 = hs.legal_labels || [];
    const next = nextCards(hs.legal_events || [], labels0);
    /* the next card first: the host's likely tap while a race is open */
    const legal = next.map(([e]) => e).concat(hs.legal_events || []);
    const labels = next.map(([, l]) => l).concat(labels0);
    if (!hs.game) { TC.refill(box, [el('p', { class: 'muted', text: TC.t('No game yet: start one below.') })]); return; }
    if (!legal.length) {
      TC.refill(box, [el('p', { class: 'muted', text: hs.finished ? TC.t('The game is over.') : TC.t('Nothing to log now.') })]);
      return;
    }
    const own = ownLegal(legal, labels);
    if (own) { TC.refill(box, own); return; }
    const groups = new Map();
    legal.forEach((e, i) => {
      if (!groups.has(e.type)) groups.set(e.type, []);
      groups.get(e.type).push([e, labels[i]]);
    });
    const out = [];
    const nextTypes = new Set(next.map(([e]) => e.type));
    const slot = sideSlot(groups);
    if (slot) out.push(slot.node);
    for (const [type, items] of groups) {
      if (slot && slot.types.has(type)) continue;
      const titles = TC.panelOf(hs).groupTitles || {};
      const heading = Object.hasOwn(titles, type) ? titles[type] : typeWord(type);
      const waits = !nextTypes.has(type) ? heading : DRAWS.has(type) ? TC.t('Next card: {heading} (waits for the race)', { heading })
        : TC.t('{heading} (waits for the race)', { heading });
      out.push(el('h3', { class: 'group', text: waits }));
      if (hs.draw && hs.draw.type === type) out.push(drawButton(hs.draw));
      if (items.length <= MAX_BUTTONS) {
        const texts = items.map(([e, l]) => label(e, l));
        const dup = (t) => texts.filter((x) => x === t).length > 1;
        out.push(el('div', { class: DRAWS.has(type) ? 'grid-buttons cards' : 'grid-buttons' }, items.map(([e], i) => {
          /* two buttons saying the same: add what tells them apart */
          const extra = dup(texts[i]) ? Object.entries(e).filter(([k, v]) => k !== 'type' && v != null && typeof v !== 'object'
            && !texts[i].includes(String(v))).map(([, v]) => TC.cardName(hs, v)).join(' · ') : '';
          return eventButton(e, extra ? `${texts[i]} · ${extra}` : texts[i]);
        })));
      } else {
        out.push(builder(type, items.map(([e]) => e)));
      }
    }
    const clash = trackerFaults();
    TC.refill(box, [...(clash ? [clash] : []), ...out]);
  }

  /* The tracker's faults (host_view.faults: accepted events that clash
   * with another log, e.g. a 4th Wildcard), above the buttons, where Undo
   * is: the host sorts them out at the table. */
  function trackerFaults() {
    const hv = hs.host_view || {};
    const over = (hv.inconsistent || []).map((f) => f.text);
    const faults = (hv.faults || []).slice(-3).reverse().map((f) => f.text);
    if (!over.length && !faults.length) return null;
    return el('div', { class: 'tracker-faults', id: 'tracker-faults', role: 'alert' },
      el('strong', { text: over.length ? TC.t('The logs disagree: {what}', { what: over.map(TC.tx).join(', ') }) : TC.t('The logs disagreed') }),
      el('ul', {}, faults.map((t) => el('li', { text: TC.tx(t) }))),
      el('p', { class: 'small', text: TC.t('Someone logged a card they do not have. Undo back to the wrong log, or play on: the cards stay counted.') }));
  }

  /* A keyboard stays where it was when `draw` redraws `box`: the control
   * at the same place gets the focus back (a logged card's button is
   * replaced by the next step's), else Undo. */
  function keepFocus(box, draw) {
    const controls = () => [...box.querySelectorAll('button, select, input')];
    const at = box.contains(document.activeElement) ? controls().indexOf(document.activeElement) : -1;
    draw();
    if (at < 0 || box.contains(document.activeElement)) return;
    const now = controls().filter((c) => !c.disabled);
    const next = now[Math.min(at, now.length - 1)] || ($('undo').disabled ? null : $('undo'));
    if (next) next.focus({ preventScroll: true });
  }

  /* `logged`: what "Logged: ..." says when the button's text alone does not */
  function eventButton(e, text, logged) {
    return TC.paint(el('button', {
      type: 'button', class: 'event', 'data-event': JSON.stringify(e), onclick: () => logEvent(e, logged || text),
    }, text), colourOf(e));
  }

  /* A game may draw its own buttons (Chomp!: one player's cards at a time):
   * panel.legal(events, labels, snapshot, button) returns the nodes, or
   * null for the generic groups; `button` is eventButton above. */
  function ownLegal(legal, labels) {
    const panel = TC.panelOf(hs);
    if (!panel.legal) return null;
    try { return panel.legal(legal, labels, hs, eventButton); } catch (err) { console.error(err); return null; }
  }

  /* Beside a grid of cards to flip (draws), the few other steps ("Stop and
   * claim the face-up food") sit in a slot of their own above the grid that
   * is there whether or not they are offered: one appearing never pushes
   * the cards down under the host's thumb. */
  const SIDE_MAX = 3;
  function sideSlot(groups) {
    const types = new Set();
    let grid = false;
    for (const [type, items] of groups) {
      if (DRAWS.has(type) && items.length > SIDE_MAX) grid = true;
      else if (!DRAWS.has(type) && items.length <= SIDE_MAX) types.add(type);
    }
    if (!grid) return null;
    const buttons = [];
    for (const type of types) for (const [e, l] of groups.get(type)) buttons.push(eventButton(e, label(e, l)));
    const node = el('div', { class: 'side-slot', id: 'side-slot' },
      buttons.length ? buttons : [el('p', { class: 'muted small', text: TC.t('Nothing else to log yet: other steps appear here') })]);
    return { node, types };
  }

  /* an event's field as the builder's label says it ("cards" -> "Cartes") */
  const FIELD_WORDS = {
    player: TC.t('Player'), card: TC.t('Card'), cards: TC.t('Cards'), pile: TC.t('Pile'),
    count: TC.t('Number'), event: TC.t('Event'), dish: TC.t('Dish'), target: TC.t('Target'),
    give: TC.t('Given'), take: TC.t('Taken'), keep: TC.t('Kept'), stall: TC.t('Stall'),
    value: TC.t('Value'), from: TC.t('From'), to: TC.t('To'), chip: TC.t('Chip'),
    chips: TC.t('Chips'), season: TC.t('Season'), sale: TC.t('Sale'), slot: TC.t('Slot'),
    winner: TC.t('Winner'), loser: TC.t('Loser'),
  };
  const fieldWord = (k) => TC.own(FIELD_WORDS, k) || TC.tx(cap(String(k).replace(/_/g, ' ')));

  /* Too many combinations for buttons (e.g. one card per player): a select
   * per field, offering only values some legal event has. */
  function builder(type, events) {
    const fields = new Map();     // "key" or "key.sub" -> Set of JSON values
    const add = (k, v) => { if (!fields.has(k)) fields.set(k, new Set()); fields.get(k).add(JSON.stringify(v)); };
    for (const e of events) {
      for (const [k, v] of Object.entries(e)) {
        if (k === 'type') continue;
        if (v && typeof v === 'object' && !Array.isArray(v)) for (const [k2, v2] of Object.entries(v)) add(`${k}.${k2}`, v2);
        else add(k, v);
      }
    }
    const selects = [];
    const form = el('form', { class: 'builder' });
    for (const [k, values] of fields) {
      const id = `b-${type}-${k}`.replace(/[^\w-]/g, '_');
      const rank = (j) => {
        const v = JSON.parse(j);
        const card = typeof v === 'string' ? TC.own(hs.view && hs.view.cards, v) : null;
        return card && typeof card.rank === 'number' ? card.rank : Infinity;
      };
      const sorted = [...values].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
      /* no default: a value picked by nobody would be logged as if seen */
      const sel = el('select', { id, 'data-field': k, required: true },
        values.size > 1 ? el('option', { value: '', text: TC.t('— choose —'), selected: true, disabled: true }) : null,
        sorted.map((j) => {
          const v = JSON.parse(j);
          const text = typeof v === 'string' ? TC.cardName(hs, v)
            : Array.isArray(v) ? v.map((x) => TC.cardName(hs, x)).join(', ') : j;   /* a group of cards */
          return el('option', { value: j, text });
        }));
      selects.push(sel);
      const name = k.includes('.') ? k.split('.').slice(1).join('.') : k;
      form.append(el('label', { for: id, text: fieldWord(name) }), sel);
    }
    form.append(el('p', {}, el('button', { type: 'submit', class: 'primary', text: TC.t('Log {type}', { type: typeWord(type) }) })));
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const e = Object.assign(TC.map(), { type });   /* field names come from the game */
      const missing = selects.find((sel) => !sel.value);
      if (missing) { toast(TC.t('Choose {field} first', { field: missing.previousElementSibling.textContent })); missing.focus(); return; }
      for (const sel of selects) {
        const k = sel.dataset.field;
        const v = JSON.parse(sel.value);
        if (k.includes('.')) {
          const [a, ...rest] = k.split('.');
          e[a] = TC.own(e, a) || TC.map();
          e[a][rest.join('.')] = v;
        } else e[k] = v;
      }
      logEvent(e);
    });
    return form;
  }

  /* --- the rest of the console ----------------------------------------- */
  function renderRaceControls() {
    const req = hs.race_request;
    const race = hs.race;
    const phase = race ? race.phase : null;
    const canStart = !!req && (req.announced ? phase !== 'countdown' && phase !== 'live' : phase === 'interrupted');
    $('race-controls').hidden = !req;
    /* a countdown only for a start the companion calls */
    $('countdown-ms').hidden = $('countdown-ms').previousElementSibling.hidden = !(req && (req.announced || phase === 'interrupted'));
    $('start-race').hidden = !canStart;
    $('start-race').textContent = req && !req.announced ? TC.t('Re-run race') : TC.t('Start race');
    $('cancel-race').hidden = !(phase === 'countdown' || phase === 'live' || phase === 'interrupted');
  }

  let buzzersFor = null;
  function renderBuzzers() {
    const key = JSON.stringify(TC.colours(hs));
    if (key === buzzersFor) return;
    buzzersFor = key;
    TC.refill($('buzzers'), TC.buzzers(hs.players, TC.colours(hs), '/api/host/press'));
    $('buzzers-card').hidden = !(hs.players && hs.players.length);
  }

  /* After a verdict the next thing to log comes first (on screen without
   * scrolling); while a race runs or waits, the race card does. */
  function placeNext() {
    const next = $('next-card'), race = raceEls.section;
    const phase = hs.race ? hs.race.phase : null;
    const raceFirst = (phase === 'live' || phase === 'countdown' || phase === 'pending' || phase === 'interrupted'
      || (hs.race && hs.race.confirm));
    /* the race, the presses outside it and the alerts move together */
    if (raceFirst && next.compareDocumentPosition(race) & Node.DOCUMENT_POSITION_FOLLOWING) next.before(race, $('queued'), $('burst-card'), $('faults'));
    else if (!raceFirst && race.compareDocumentPosition(next) & Node.DOCUMENT_POSITION_FOLLOWING) race.before(next);
  }

  /* What a choice of a doubtful race says: "Cy choped it (+0.45 s)" (the
   * race's title as a verb, for a first-press race), with the seconds from
   * the previous race's first press or the earliest choice. */
  function choiceText(race, c, zero) {
    /* times count from the card's log (what the host remembers doing) */
    const base = typeof race.logged_ns === 'number' ? race.logged_ns : zero.t_ns;
    const d = c.t_ns - base;
    const secs = `${d < 0 ? '−' : '+'}${TC.num(Math.abs(d) / 1e9, 2)} s`;
    if (c.nobody) return TC.t('Nobody: discard it');
    if (c.last) {
      return c.never ? TC.t('{name} never slapped', { name: c.player })
        : TC.t('{name} slapped last ({secs})', { name: c.player, secs });
    }
    const title = String(race.title || TC.reasonTitle(hs, race.reason)).replace(/[!.]+$/, '').trim().toLowerCase();
    if (TC.lang !== 'en' || !(race.kind === 'first-press' && /^[a-z]+$/.test(title))) {
      return TC.t('{name} pressed first ({secs})', { name: c.player, secs });
    }
    return `${c.player} ${title}${title.endsWith('e') ? 'd' : 'ed'} it (${secs})`;
  }
  function confirmQuestion(race) {
    const card = race.card ? TC.cardName(hs, race.card) : null;
    if (race.kind === 'last-press') {
      return card ? TC.t('Who slapped {card} last?', { card }) : TC.t('Who slapped last?');
    }
    return card ? TC.t('Who slammed {card} first?', { card }) : TC.t('Who slammed this card?');
  }
  /* A doubtful race: one tap answers it: a button per press the card's
   * race could start at (the default last, outlined), or race again. */
  let confirmKey = null;
  function renderConfirm() {
    let box = $('race-confirm');
    if (!box) {
      box = el('div', { id: 'race-confirm', class: 'row confirm-race' });
      $('race-controls').before(box);
    }
    const race = hs.race;
    const asking = !!(race && race.confirm);
    box.hidden = !asking;
    if (!asking) { box.replaceChildren(); confirmKey = null; return; }
    const choices = race.choices || [];
    const zero = TC.choiceZero(race) || { t_ns: 0 };
    const key = JSON.stringify([race.confirm, choices, zero.t_ns]);
    if (key === confirmKey) return;
    confirmKey = key;
    const col = TC.colours(hs);
    const answer = (body) => async (ev) => {
      for (const b of box.querySelectorAll('button')) b.disabled = true;   /* one tap */
      const res = await act('/api/host/race/confirm', body);
      /* refused: the reason stays in the question (noteInQuestion), the
         buttons take a tap again */
      if (!res) for (const b of box.querySelectorAll('button')) b.disabled = false;
    };
    const likely = choices.findIndex((c) => c.likely);
    const dflt = likely >= 0 ? likely : choices.length - 1;
    const buttons = choices.map((c, i) => TC.paint(el('button', {
      type: 'button', class: 'choice' + (i === dflt ? ' default' : ''),
      'data-t': String(c.t_ns), 'data-player': c.player, onclick: answer({ accept: true, t_ns: c.t_ns }),
    }, choiceText(race, c, zero)), c.player ? col[c.player] : undefined));
    if (!choices.length) {
      buttons.push(el('button', { type: 'button', class: 'primary', id: 'race-accept', onclick: answer({ accept: true }) }, TC.t('Yes, these presses count')));
    }
    const when = typeof race.logged_ns === 'number' ? TC.t('Times from when you logged the card.') : '';
    const note = $('race-confirm-note');     /* what the last tap said, kept */
    box.replaceChildren(el('p', { class: 'confirm-q', text: confirmQuestion(race) }), ...(note ? [note] : []),
      ...(when ? [el('p', { class: 'confirm-when', text: when })] : []), ...buttons,
      el('button', { type: 'button', class: 'danger', id: 'race-reject', onclick: answer({ accept: false }) }, TC.t('No: race again')));
  }

  /* The host's slip (the state's `reorder`): the last two cards were
   * likely turned the other way round than logged (or their verdicts as
   * logged are unlikely). One tap swaps them, and their races are judged
   * again from the presses; "No" keeps the log as it is. */
  let reorderKey = null;
  function renderReorder() {
    let box = $('reorder');
    if (!box) {
      box = el('div', { id: 'reorder', class: 'reorder', role: 'alert' });
      $('legal').before(box);
    }
    const offer = hs.reorder;
    box.hidden = !offer;
    if (!offer) { box.replaceChildren(); reorderKey = null; return; }
    const key = JSON.stringify(offer.events);
    if (key === reorderKey) return;
    reorderKey = key;
    const name = (i) => (offer.cards[i] ? TC.cardName(hs, offer.cards[i]) : TC.tx(offer.lines[i]));
    const names = { first: name(0), second: name(1) };
    const answer = (accept) => async () => {
      for (const b of box.querySelectorAll('button')) b.disabled = true;   /* one tap */
      const res = await act('/api/host/reorder', { events: offer.events, accept, expected_version: hs.version },
        (d, status) => { toast(TC.refusal(d, status)); refresh(); });
      if (!res) { reorderKey = null; renderReorder(); return; }
      if (accept) showLogged(TC.t('Swapped: {first}, then {second}', names));
    };
    box.replaceChildren(
      el('p', { class: 'reorder-q', text: TC.t('{first} was turned before {second}?', names) }),
      el('p', { class: 'small', text: TC.t('Their races are judged again from the presses.') }),
      el('div', { class: 'row' },
        el('button', { type: 'button', class: 'primary', id: 'reorder-swap', onclick: answer(true) }, TC.t('Swap them')),
        el('button', { type: 'button', id: 'reorder-keep', onclick: answer(false) }, TC.t('No, as logged'))));
  }

  /* Cards logged while a race is open wait for it (the session queues
   * them): "Waiting for the race: flip Blue Table", until it is applied. */
  function renderQueued() {
    let box = $('queued');
    if (!box) {
      box = el('ul', { id: 'queued', class: 'queued', 'aria-live': 'polite' });
      $('burst-card').before(box);
    }
    const lines = hs.queued || [];
    box.hidden = !lines.length;
    /* the race is logged but left a choice to make first (a Siam! loser's
     * card): the cards wait for that choice, asked above, not for a race */
    const race = hs.race;
    const racing = !!(race && (race.confirm || race.phase === 'live' || race.phase === 'countdown'));
    const line = (l) => (racing ? TC.t('Waiting for the race: {what}', { what: TC.tx(l) })
      : TC.t('Waiting for the choice above: {what}', { what: TC.tx(l) }));
    box.replaceChildren(...lines.map((l) => el('li', { text: line(l) })));
    if (lines.length && !racing) showLogged(TC.t('Waits for the choice above: {what}', { what: TC.tx(lines[0]) }));
  }

  /* A stray press may be handed to the card waiting for an unannounced race. */
  function canUse() {
    const req = hs.race_request;
    return !!(req && !req.announced && !(hs.race && hs.race.phase === 'decided'));
  }
  function usePresses(x) { return act('/api/host/race/use', { t_ns: x.t_ns }); }

  function renderRematch() {
    const box = $('result');
    if (box.hidden) return;
    box.append(el('p', {}, el('button', { type: 'button', class: 'primary', id: 'rematch', onclick: async () => {
      const res = await act('/api/host/rematch', {});
      if (res) { toast(TC.t('Rematch: same players, same settings'), true); window.scrollTo({ top: 0 }); }
    } }, TC.t('Rematch: same players, same settings'))));
  }

  /* The buttons the host logs with never move on screen when the page
   * changes above them (the race card put first as a race begins, its
   * question, the verdict, a news line, an alert): the page scrolls by what
   * changed instead. They moved by the race card's height (305 px at 390 x
   * 844) when a race began and back at its verdict, so a tap on its way to
   * the next card landed on another card, on Stop, or on "Cancel race".
   * Their place is kept in the page's coordinates (the host's own scrolling
   * moves nothing here) after every drawing and every change of size above
   * them; not where the page cannot scroll that far. */
  let gridY = null;
  function holdGrid(rebase = false) {
    if (shownVersion === null) return;         // not before the page's first drawing
    if (rebase) gridY = null;
    /* the grid of cards, else the first grid of buttons (a heading above it
       may wrap anew: "Next card: Flip (waits for the race)"), else the list */
    const legal = $('legal');
    const grid = legal.querySelector('.grid-buttons.cards') || legal.querySelector('.grid-buttons') || legal;
    const y = grid.getClientRects().length ? grid.getBoundingClientRect().top + window.scrollY : null;
    if (y !== null && gridY !== null && Math.abs(y - gridY) >= 0.5) {
      window.scrollBy(0, y - gridY);    // at once: the console never scrolls smoothly
    }
    gridY = y;
  }
  /* Except as a race comes that the host starts (Food Poisoning's "Start
   * race", a race to run again): the host's next tap is Start, so its card
   * comes first where it is put, and the buttons move this once. And as the
   * game ends: nothing is left to log, and the page goes to its top, where
   * the end screen is. */
  function keepGridPlace(draw) {
    const starting = startShown();
    const over = !!(shownVersion && shownVersion.finished);
    draw();
    const ended = !over && !!hs.finished;
    if (ended) window.scrollTo(0, 0);
    holdGrid(ended || (!starting && startShown()));
  }
  function startShown() {
    return !$('start-race').hidden && !$('race-controls').hidden;
  }
  const sizes = new ResizeObserver(() => holdGrid());
  for (const box of [...document.body.children, ...document.querySelector('main').children]) sizes.observe(box);

  /* ... so what asks the host something may be above the screen: the race
   * card's question or its Start, or the slip check's "Laksa was turned
   * before Blue Table?" (at the top of the log's card). The bar at the
   * screen's top then says what is asked; a tap on it brings it into view
   * (the bar itself answers and starts nothing). */
  const peek = $('race-peek');
  let peekTo = null;
  function renderPeek() {
    const confirm = $('race-confirm'), slip = $('reorder');
    const race = raceEls.section.hidden ? null : raceEls.section;
    const asks = [
      [race && confirm && !confirm.hidden ? confirm.querySelector('.confirm-q') : null, race],
      [slip && !slip.hidden ? slip.querySelector('.reorder-q') : null, slip],
      [race && startShown() ? $('start-race') : null, race],
    ].find(([what]) => what);
    const away = !!asks && asks[0].getBoundingClientRect().top < 0;
    peek.hidden = !away;
    peekTo = away ? asks[1] : null;
    if (away) peek.textContent = asks[0].textContent;
  }
  peek.addEventListener('click', () => { if (peekTo) peekTo.scrollIntoView({ block: 'start' }); renderPeek(); });
  let peekFrame = 0;
  window.addEventListener('scroll', () => {
    if (!peekFrame) peekFrame = requestAnimationFrame(() => { peekFrame = 0; renderPeek(); });
  }, { passive: true });

  let shownVersion = null;
  function render() {
    if (!hs) return;
    keepGridPlace(draw);
    renderPeek();
  }
  function draw() {
    if (shownVersion !== null && shownVersion.version !== hs.version) TC.renderNews(shownVersion, hs, $('news'));
    shownVersion = hs;
    document.body.dataset.version = String(hs.version ?? 0);
    document.body.dataset.game = hs.game || '';
    const title = hs.game_title || hs.title;
    $('title').textContent = title || TC.t('Host console');
    document.title = title ? TC.t('Host: {title}', { title }) : TC.t('Host console');
    TC.renderBuzzerStatus(hs, $('buzzer-status'));
    TC.renderBanner(hs, $('banner'));
    TC.renderResult(hs, $('result'));
    renderRematch();
    TC.renderRace(hs, hs.race, raceEls);
    raceEls.section.hidden = hs.finished || (!hs.race && !hs.race_request);
    renderRaceControls();
    renderConfirm();
    renderReorder();
    renderQueued();
    placeNext();
    TC.renderBurst(hs, $('burst-card'), $('burst'), canUse() ? usePresses : null);
    TC.renderFaults(hs, $('faults'));
    keepFocus($('legal'), renderLegal);
    const undo = $('undo'), redo = $('redo');
    undo.disabled = !hs.undo;
    undo.textContent = hs.undo ? TC.t('Undo: {what}', { what: TC.tx(hs.undo) }) : TC.t('Undo');
    redo.disabled = !hs.redo;
    redo.textContent = hs.redo ? TC.t('Redo: {what}', { what: TC.tx(hs.redo) }) : TC.t('Redo');
    TC.renderPlayers(hs, $('players'));
    renderBuzzers();
    $('buzzers-card').hidden = !!hs.finished || !(hs.players && hs.players.length) || !TC.races(hs);
    TC.renderPanel(hs, $('panel'), hs.host_view || hs.view);
    $('log').replaceChildren(...(hs.log || []).slice(-15).reverse().map((l) => el('li', { text: TC.tx(l.line) })));
    TC.renderKV(hs.host_view || hs.view, $('kv'));
    $('export-game').href = hs.game_id ? `/api/host/export/${hs.game_id}` : '#';
    const example = (hs.legal_events || [])[0];
    $('custom-event').placeholder = example ? JSON.stringify(example) : '{"type": "..."}';
    newGame.onState();
  }
  TC.onGameReady(render);

  /* --- new game: a form built from the game's declared settings ---------- */
  const newGame = (function () {
    const form = $('new-game');
    const rows = $('ng-players');
    const gameSel = $('ng-game');
    /* colour words the form offers (the page paints them; a game that uses
     * colours gets them in its `colours` option) */
    const COLOURS = ['red', 'blue', 'green', 'yellow', 'purple', 'orange', 'pink', 'teal', 'brown', 'grey'];
    const games = TC.map();   // name -> description (GET /api/games)
    let confirming = false;

    const info = () => TC.own(games, gameSel.value) || null;
    const colourChoices = () => (info() && info().player_colours) || COLOURS;

    /* -- errors beside their control ---------------------------------- */
    function clearErrors() {
      for (const n of form.querySelectorAll('.field-error')) n.remove();
      for (const n of form.querySelectorAll('[aria-invalid]')) n.removeAttribute('aria-invalid');
    }
    /* the control a server `field` names, e.g. players.1.name, options.tables */
    function controlFor(field) {
      if (!field) return null;
      let f = field;
      while (f) {
        const node = form.querySelector(`[data-field="${CSS.escape(f)}"]`);
        if (node) return node;
        if (f === 'players.colour') return form.querySelector('.ng-colour');
        f = f.includes('.') ? f.slice(0, f.lastIndexOf('.')) : '';
      }
      return null;
    }
    function showError(message, field) {
      const control = controlFor(field);
      const note = el('p', { class: 'field-error', role: 'alert', text: message });
      if (control) {
        control.setAttribute('aria-invalid', 'true');
        const details = control.closest('details');
        if (details) details.open = true;
        const anchor = control.closest('.opt, .player-row, fieldset') || control;
        anchor.after(note);
      } else {
        $('ng-submit-row').before(note);
      }
      note.scrollIntoView({ block: 'center' });
      if (control && control.focus) control.focus({ preventScroll: true });
    }

    /* -- players -------------------------------------------------------- */
    function playerRow(name, colour, buzzer, handicap) {
      const buzzers = cfg.buzzers || [];
      const colourSel = el('select', { class: 'ng-colour' }, colourChoices().map((c) =>
        el('option', { value: c, text: TC.colourWord(c), selected: c === colour })));
      const paintSel = () => TC.paint(colourSel, colourSel.value);
      colourSel.addEventListener('change', paintSel);
      paintSel();
      const row = el('div', { class: 'player-row' },
        el('div', { class: 'pr-name' },
          el('input', { class: 'ng-name', value: name || '', maxlength: 40, autocomplete: 'off', placeholder: TC.t('name') }),
          el('button', { type: 'button', class: 'ng-remove', text: '✕', onclick: () => { row.remove(); renumber(); } })),
        el('div', { class: 'pr-pick' }, colourSel,
          el('select', { class: 'ng-buzzer' },
            el('option', { value: '', text: TC.t('no buzzer') }),
            buzzers.map((b) => el('option', { value: b, text: TC.t('buzzer {id}', { id: b }), selected: b === buzzer }))),
          /* a head start (ms) the referee gives this player in its races,
           * named on screen (a bare "0" said nothing); off in a league and
           * in a game with no race (showHandicaps) */
          el('label', { class: 'pr-handicap', hidden: !handicapsShown() }, el('span', { text: TC.t('Head start') }),
            el('span', { class: 'hs-field' },
              el('input', { class: 'ng-handicap', type: 'number', min: 0, max: 2000, step: 5, inputmode: 'numeric', value: handicap || 0 }),
              el('span', { text: 'ms' })))));
      row.querySelector('.ng-name').addEventListener('input', () => { renumber(); });
      return row;
    }
    /* labels and data-field names follow the seating order */
    function renumber() {
      [...rows.children].forEach((row, i) => {
        const n = i + 1;
        const set = (sel, field, aria) => {
          const c = row.querySelector(sel);
          c.dataset.field = `players.${i}${field}`;
          c.setAttribute('aria-label', aria);
        };
        set('.ng-name', '.name', TC.t('player {n}', { n }));
        set('.ng-colour', '.colour', TC.t('colour of player {n}', { n }));
        set('.ng-buzzer', '.buzzer', TC.t('buzzer of player {n}', { n }));
        set('.ng-handicap', '.handicap_ms', TC.t('head start of player {n}, in ms', { n }));
        set('.ng-remove', '', TC.t('remove player {n}', { n }));
      });
      const g = info();
      const count = rows.children.length;
      if (g) {
        const hint = TC.t('{min} to {max} players, in seating order', { min: g.min_players, max: g.max_players });
        $('ng-players-hint').textContent = count < g.min_players || count > g.max_players ? TC.t('{hint} (now {count})', { hint, count }) : hint;
        $('ng-add').disabled = count >= g.max_players;
      }
      refreshPlayerPickers();
    }
    function names() {
      return [...rows.children].map((r) => r.querySelector('.ng-name').value.trim()).filter(Boolean);
    }
    function fillPlayers() {
      rows.replaceChildren();
      const current = hs && hs.players && hs.players.length ? hs.players : null;
      const list = current || (cfg.players && cfg.players.length ? cfg.players : ['Ana', 'Bo', 'Cy']).map((n) => ({ name: n }));
      const choices = colourChoices();
      const taken = new Set();
      /* the running game's colours as its board paints them (the view's) */
      const running = hs ? TC.colours(hs) : {};
      list.forEach((p, i) => {
        const was = TC.own(running, p.name) || p.colour;
        let colour = was && choices.includes(was) ? was : null;
        if (!colour || taken.has(colour)) colour = choices.find((c) => !taken.has(c)) || choices[i % choices.length];
        taken.add(colour);
        rows.append(playerRow(p.name, colour, p.buzzer || (cfg.buzzers || [])[i], p.handicap_ms));
      });
      renumber();
    }

    /* -- options, one control per declared setting ---------------------- */
    /* a rulebook quote as a reader sees it: '"marked with an \"S\""' (the
     * setting's escaped inner quote) reads “marked with an ‘S’” */
    function quoted(rule) {
      return String(rule).replace(/\\"([^"\\]*)\\"/g, '‘$1’').replace(/"([^"]*)"/g, '“$1”');
    }
    function help(s) {
      const bits = [];
      if (s.help) bits.push(el('span', { text: TC.tx(s.help) }));
      if (s.rule) bits.push(...TC.ruleQuote(s.rule, quoted, (info() || {}).rules_language));
      if (s.assumed) bits.push(el('span', { class: 'assumed', text: TC.t('assumed: the rulebook does not say') }));
      return bits.length ? el('p', { class: 'help' }, bits) : null;
    }
    function control(s) {
      const id = `opt-${s.name}`;
      const field = `options.${s.name}`;
      const common = { id, 'data-option': s.name, 'data-kind': s.kind, 'data-field': field };
      if (s.kind === 'bool') {
        return el('div', { class: 'opt opt-bool' },
          el('label', { for: id, class: 'check' }, el('input', Object.assign({ type: 'checkbox', checked: !!s.default }, common)), TC.tx(s.label)),
          help(s));
      }
      let input;
      if (s.kind === 'choice' && !fitsDropdown((s.choices || []).map((c) => TC.tx(c.label)))) return choiceList(s, common);
      if (s.kind === 'choice') {
        input = el('select', common, (s.choices || []).map((c, i) => el('option', {
          value: String(i), text: TC.tx(c.label), selected: isDefault(s, c) })));
      } else if (s.kind === 'int') {
        input = el('input', Object.assign({ type: 'number', inputmode: 'numeric', step: 1,
          min: s.minimum ?? null, max: s.maximum ?? null, value: s.default ?? '' }, common));
      } else if (s.kind === 'player') {
        input = el('select', common);
        input.dataset.default = JSON.stringify(s.default);
      } else {
        input = el('textarea', Object.assign({ spellcheck: 'false', rows: 6 }, common));
        input.value = JSON.stringify(s.default, null, 1);
      }
      return el('div', { class: 'opt' }, el('label', { for: id, text: TC.tx(s.label) }), input, help(s));
    }
    const isDefault = (s, c) => JSON.stringify(c.value) === JSON.stringify(s.default);
    /* A closed dropdown shows one line and cuts the rest (every phone's
     * browser): a choice with a label longer than the form's dropdown is
     * a list of radio buttons instead, whose labels wrap. */
    let measure = null;
    function fitsDropdown(labels) {
      measure = measure || document.createElement('canvas').getContext('2d');
      measure.font = getComputedStyle(gameSel).font;
      /* the card's width less its padding, the fieldset's, the dropdown's own and its arrow */
      const room = $('new-game-card').clientWidth - 96;
      return labels.every((l) => measure.measureText(l).width <= room);
    }
    function choiceList(s, common) {
      return el('fieldset', Object.assign({ class: 'opt opt-choice', role: 'radiogroup' }, common),
        el('legend', { text: TC.tx(s.label) }),
        (s.choices || []).map((c, i) => el('label', { class: 'check' },
          el('input', { type: 'radio', name: common.id, value: String(i), checked: isDefault(s, c) }), TC.tx(c.label))),
        help(s));
    }
    /* the choice's index: a dropdown's value, a radio list's checked one */
    const chosen = (c) => (c.tagName === 'SELECT' ? c.value : (c.querySelector('input:checked') || { value: '0' }).value);
    function refreshPlayerPickers() {
      const who = names();
      for (const sel of form.querySelectorAll('select[data-kind=player]')) {
        const was = sel.value || JSON.parse(sel.dataset.default || 'null') || '';
        sel.replaceChildren(el('option', { value: '', text: TC.t('— (the rules decide)') }),
          ...who.map((n) => el('option', { value: n, text: TC.plainName(n), selected: n === was })));
      }
    }
    function renderOptions() {
      const g = info();
      const box = $('ng-options');
      clearErrors();
      if (!g) { box.replaceChildren(); return; }
      $('ng-about').textContent = g.hides_scores ? TC.t('Scores stay hidden until the end.') : '';
      const settings = (g.settings || []).filter((s) => !(g.colours_option && s.name === 'colours'));
      const plain = settings.filter((s) => s.kind !== 'data');
      const data = settings.filter((s) => s.kind === 'data');
      const out = plain.map(control);
      if (data.length) {
        out.push(el('details', { class: 'components' },
          el('summary', { text: TC.t('Components (JSON: change only if your box differs)') }), data.map(control)));
      }
      if (!out.length) out.push(el('p', { class: 'muted small', text: TC.t('No options.') }));
      box.replaceChildren(...out);
      showHandicaps();
      /* colour choices may differ between games */
      for (const row of rows.children) {
        const sel = row.querySelector('.ng-colour');
        const was = sel.value;
        const choices = colourChoices();
        sel.replaceChildren(...choices.map((c) => el('option', { value: c, text: TC.colourWord(c), selected: c === was })));
        if (!choices.includes(was)) sel.value = choices[[...rows.children].indexOf(row) % choices.length];
        TC.paint(sel, sel.value);
      }
      renumber();
    }

    /* -- reading the form ------------------------------------------------ */
    function read() {
      const g = info();
      const players = [...rows.children].map((r) => ({
        name: r.querySelector('.ng-name').value.trim(),
        colour: r.querySelector('.ng-colour').value || null,
        buzzer: r.querySelector('.ng-buzzer').value || null,
        /* a head start not shown (a game with no race, a league) is none */
        handicap_ms: handicapsShown() ? Math.round(Number(r.querySelector('.ng-handicap').value)) || 0 : 0,
      }));
      const empty = players.findIndex((p) => !p.name);
      if (empty >= 0) return { error: TC.t('player {n} needs a name', { n: empty + 1 }), field: `players.${empty}.name` };
      if (players.length < g.min_players || players.length > g.max_players) {
        return { error: TC.t('{game} is for {min} to {max} players, not {n}', { game: g.title, min: g.min_players, max: g.max_players, n: players.length }), field: 'players' };
      }
      const options = TC.map();
      const byName = Object.fromEntries((g.settings || []).map((s) => [s.name, s]));
      for (const c of $('ng-options').querySelectorAll('[data-option]')) {
        const s = TC.own(byName, c.dataset.option);
        const field = c.dataset.field;
        if (s.kind === 'bool') options[s.name] = c.checked;
        else if (s.kind === 'choice') options[s.name] = s.choices[Number(chosen(c))].value;
        else if (s.kind === 'player') options[s.name] = c.value || null;
        else if (s.kind === 'int') {
          if (c.value === '' || !Number.isInteger(Number(c.value))) return { error: TC.t('{label}: a whole number, please', { label: TC.tx(s.label) }), field };
          options[s.name] = Number(c.value);
        } else {
          try { options[s.name] = JSON.parse(c.value); } catch (e) { return { error: TC.t('{label}: not valid JSON ({why})', { label: TC.tx(s.label), why: e.message }), field }; }
        }
      }
      return { body: { game: g.name, players, options } };
    }

    async function start() {
      clearErrors();
      const got = read();
      if (got.error) { showError(got.error, got.field); return; }
      const res = await act('/api/host/new-game', got.body, (d) => showError(TC.refusal(d), d.field));
      if (res) {
        toast(TC.t('New game started'), true);
        $('ng-details').open = false;
        window.scrollTo({ top: 0 });
      }
    }

    function askOrStart() {
      if (hs && hs.game && !hs.finished && !confirming) {
        confirming = true;
        const running = hs.game_title || hs.title || hs.game;
        $('ng-confirm-text').textContent = TC.t('A game of {game} is still running. Start a new one? The running game stays in the history.', { game: running });
        $('ng-confirm').hidden = false;
        $('ng-start').hidden = true;
        $('ng-confirm').scrollIntoView({ block: 'center' });
        $('ng-confirm-no').focus({ preventScroll: true });   /* the keyboard's next step: the safe answer */
        return;
      }
      endConfirm();
      start();
    }
    function endConfirm() {
      confirming = false;
      $('ng-confirm').hidden = true;
      $('ng-start').hidden = false;
    }

    /* "Suggest from their reaction times": each head start from the
     * statistics (GET /api/stats: every player's median less the fastest
     * median), taken again from the fastest of the players in the form;
     * a player with no reaction time gets none. Off in a league. */
    const handicapsOff = () => !!(hs && hs.handicaps === false);
    /* head starts (and their suggestion) where they mean something: a game
     * with races (Chopote and Tropichaos have none), away from a league */
    const handicapsShown = () => !handicapsOff() && TC.racesIn(info());
    function showHandicaps() {
      const on = handicapsShown();
      for (const f of rows.querySelectorAll('.pr-handicap')) f.hidden = !on;
      $('ng-suggest').hidden = !on;
      if (!on) $('ng-suggest-note').hidden = true;
    }
    async function suggestHandicaps() {
      const note = $('ng-suggest-note');
      let known = {};
      try {
        const res = await fetch('/api/stats', { credentials: 'same-origin' });
        known = ((await res.json()) || {}).suggested_handicap_ms || {};
      } catch (e) { known = {}; }
      const seated = [...rows.children].map((r) => [r, r.querySelector('.ng-name').value.trim()]);
      const timed = seated.filter(([, n]) => Number.isInteger(TC.own(known, n)));
      note.hidden = false;
      if (timed.length < 2) {
        note.textContent = TC.t('Not enough reaction times yet: at least two of these players need some (they come from announced races).');
        return;
      }
      const fastest = Math.min(...timed.map(([, n]) => TC.own(known, n)));
      for (const [r, n] of seated) {
        const v = TC.own(known, n);
        r.querySelector('.ng-handicap').value = Number.isInteger(v) ? v - fastest : 0;
      }
      note.textContent = TC.t('Head starts from their median reactions: {list}', {
        list: seated.map(([r, n]) => `${n || '?'} ${r.querySelector('.ng-handicap').value} ms`).join(', ') });
    }

    function setup() {
      fillPlayers();
      showHandicaps();
      $('ng-suggest').onclick = suggestHandicaps;
      $('ng-add').onclick = () => {
        const taken = new Set([...rows.querySelectorAll('.ng-colour')].map((s) => s.value));
        const colour = colourChoices().find((c) => !taken.has(c));
        rows.append(playerRow('', colour, (cfg.buzzers || [])[rows.children.length]));
        renumber();
        rows.lastElementChild.querySelector('.ng-name').focus();
      };
      /* the page gives these disabled: a tap before their handlers are
       * here would be lost (and Start would submit the form as a GET) */
      $('ng-add').disabled = false;
      $('ng-suggest').disabled = false;
      fetch('/api/games', { credentials: 'same-origin' }).then((r) => r.json()).then((list) => {
        for (const g of list) { games[g.name] = g; TC.games[g.name] = TC.own(TC.games, g.name) || g; }
        gameSel.replaceChildren(...list.map((g) => el('option', { value: g.name, text: g.title, selected: hs && hs.game === g.name })));
        renderOptions();
        $('ng-start').disabled = false;
      });
      gameSel.onchange = () => { endConfirm(); renderOptions(); };
      form.addEventListener('submit', (ev) => { ev.preventDefault(); askOrStart(); });
      $('ng-confirm-yes').onclick = () => { endConfirm(); start(); };
      $('ng-confirm-no').onclick = endConfirm;
      form.addEventListener('input', (ev) => {
        const t = ev.target;
        if (t.getAttribute && t.getAttribute('aria-invalid')) {
          t.removeAttribute('aria-invalid');
          const anchor = t.closest('.opt, .player-row, fieldset');
          const note = anchor && anchor.nextElementSibling;
          if (note && note.classList.contains('field-error')) note.remove();
        }
      });
    }
    return { setup, onState() {
      if (confirming && (!hs.game || hs.finished)) endConfirm();
      showHandicaps();
    } };
  }());

  /* --- wiring ------------------------------------------------------------ */
  $('undo').onclick = async () => {
    const what = hs.undo;
    if (await act('/api/host/undo', { expected_version: hs.version })) showLogged(TC.t('Undone: {what}', { what: TC.tx(what) }));
  };
  $('redo').onclick = async () => {
    const what = hs.redo;
    if (await act('/api/host/redo', { expected_version: hs.version })) showLogged(TC.t('Logged again: {what}', { what: TC.tx(what) }));
  };
  $('start-race').onclick = () => act('/api/host/race', { countdown_ms: Number($('countdown-ms').value) });
  $('cancel-race').onclick = () => act('/api/host/race/cancel', {});
  $('custom-log').onclick = () => {
    let e;
    try { e = JSON.parse($('custom-event').value); } catch (err) { toast(TC.t('Not JSON')); return; }
    logEvent(e);
  };

  TC.live({
    heartbeatS: Number(document.body.dataset.heartbeat) || 15,
    badge: $('conn'),
    saving: $('saving'),
    onMessage(type, msg) {
      /* before the first fetch's answer: it may predate this news */
      if (!hs) { refresh(); return; }
      if (type === 'state' || type === 'snapshot') { refresh(); return; }
      if (refresh.busy()) refresh();
      const next = TC.applyUpdate(hs, type, msg);
      if (next) { hs = next; render(); }
      if (type === 'race' && msg.data && msg.data.phase === 'decided') refresh();
      if (type === 'queued') refresh();
    },
  });
  /* (the burst card is above the buttons: a change of its size is held by
   * the ResizeObserver of keepGridPlace's) */
  setInterval(() => { if (hs && ((hs.presses && hs.presses.length) || (hs.strays && hs.strays.length))) TC.renderBurst(hs, $('burst-card'), $('burst'), canUse() ? usePresses : null); }, 1000);
  refresh().then(newGame.setup);
}());
