/* Tabletop Companion page kit: draws the table from a snapshot, for the
 * scoreboard and the host console alike. It knows no game by name: what a
 * game says about itself comes as data (GET /api/games/<name>: title, score
 * unit, race reasons and their wording, settings), and each game's own panel
 * is one small script, static/games/<name>.js, loaded by the game's name.
 *
 * Data only ever goes into the page as text (textContent / text nodes),
 * never as HTML: a player called "<b>x</b>" is shown as typed. A player's
 * name is isolated wherever it is shown (<bdi class="tc-name">, done for
 * every page by one observer: see TC.isolate), so a right-to-left name or
 * a U+202E in it never reorders the words around it. Maps keyed by a
 * player's name (or any other string the table supplies) have no
 * prototype (TC.map(), TC.own()): a player called "__proto__" or
 * "constructor" is a player like any other.
 *
 * ---------------------------------------------------------------------
 * THE PANEL API (a new game's page is one file: static/games/<name>.js)
 * ---------------------------------------------------------------------
 *
 *   (function () {
 *     'use strict';
 *     const TC = window.TC, el = TC.el;
 *     TC.panels.coin = {
 *       // required: fill `container` (an empty <section class="card">) with
 *       // the game's own panel, from `view` (the game's public_view, or its
 *       // host_view on the host console) and the whole `snapshot`
 *       render(container, view, snapshot) {
 *         container.append(el('h2', { text: 'The coin' }),
 *           TC.stats([[view.heads, 'heads'], [view.tails, 'tails']]));
 *       },
 *       // optional: short facts under a player's name in the score list
 *       extras(vp, snapshot) { return [TC.plural(vp.wins, 'win')]; },
 *       // optional (host console): the heading over a group of buttons of
 *       // one event type, in the table's words (else the type, capitalised)
 *       groupTitles: { flip_coin: 'Flip the coin' },
 *       // optional: the colour of a host console button for `event`
 *       eventColour(event, snapshot) { return null; },
 *       // optional (games that hide scores): what the big number shows
 *       count(vp, snapshot) { return [vp.hand, 'cards']; },
 *       // optional (games with hidden information): a player's own page,
 *       // from `pv` (the game's private_view for that player; never empty)
 *       private(container, pv, snapshot) { container.append(TC.chips(pv.hand)); },
 *       // optional (host console): draw the "Log what happened" buttons
 *       // yourself from the offered events (Chomp!'s one-card grid); return
 *       // the nodes, or null for the generic groups. button(event, text,
 *       // logged) is the console's own button ("Logged: <logged>")
 *       legal(events, labels, snapshot, button) { return null; },
 *     };
 *   }());
 *
 * A panel that lets the host play on it (a tap on a bottle moves it) logs
 * through the console's own path, never by clicking its buttons:
 *   TC.canLog()                     true on the host console only
 *   TC.logEvent(event)              a Promise: logs `event` against the version
 *                                   the console shows (with its CSRF token);
 *                                   resolves with {ok, update, state} (the console
 *                                   redraws) or null (a double tap, logged once:
 *                                   TC.tapLine), rejects with {error, rule, status}
 *                                   when the rules or the table refuse it (the
 *                                   panel shows why in place; nothing was logged)
 *
 * The page loads the script when the game starts (the server checks that
 * the file exists; a game without one gets the generic panel: the simple
 * fields of its public view as a key/value list) and redraws. `vp` is the
 * player's entry in `view.players` (an object with `name`), or {}.
 *
 * Helpers a panel may use (all return DOM nodes or strings):
 *   TC.el(tag, props, ...children)  a node; props: class, text, style {}, on<event>, attributes
 *   TC.paint(node, colour)          sets --pc / --pc-fg (colour words or #rrggbb)
 *   TC.markNode(s, name, colour)    the player's letter on their colour (never
 *                                   the colour alone); TC.marks(s): {name: letter}
 *   TC.colours(snapshot)            {player: colour}, the game's colours first
 *                                   (no prototype: only players are in it)
 *   TC.map()                        an empty object without a prototype, for maps
 *                                   keyed by names or other table data
 *   TC.own(obj, key)                obj[key] if obj has it itself, else undefined
 *   TC.cardName(snapshot, id)       view.cards[id].name, else the id made readable
 *   TC.stat(value, label, extra)    one big number with its label;  TC.stats([[v, label], ...])
 *   TC.chips(texts)                 a row of rounded chips
 *   TC.meter(fraction)              a 0..1 bar
 *   TC.plural(n, 'card', 'cards')   "1 card", "3 cards"
 *   TC.pct(p)                       0.123 -> "12%", 0.0123 -> "1.2%"
 *   TC.ms(us)                       microseconds as a readable "12.3 ms"
 *   TC.viewPlayer(snapshot, name)   the player's entry in view.players or null
 * CSS classes ready for panels: stats/stat, chips/chip, meter, status,
 * reveal/slot (who/what/piles), muted, small (see static/css/app.css).
 */
(function () {
  'use strict';
  const TC = window.TC = window.TC || {};

  /* Maps keyed by strings from the table (player names, card ids, game
   * names) are objects without a prototype: `m["__proto__"] = x` stores x,
   * and m["constructor"] is undefined unless someone is called that. */
  const map = () => Object.create(null);
  const own = (obj, key) => (obj != null && typeof obj === 'object'
    && Object.prototype.hasOwnProperty.call(obj, key) ? obj[key] : undefined);
  TC.map = map;
  TC.own = own;
  TC.panels = TC.panels || map();

  /* el('li', {class: 'x', text: 'hi', style: {'--pc': 'red'}}, child, 'text') */
  function el(tag, props, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (v == null || v === false) continue;
      if (k === 'class') e.className = v;
      else if (k === 'text') e.textContent = v;
      else if (k === 'style') for (const [sk, sv] of Object.entries(v)) { if (sv != null) e.style.setProperty(sk, sv); }
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? '' : v);
    }
    for (const kid of kids.flat()) {
      if (kid == null || kid === false) continue;
      e.append(kid instanceof Node ? kid : String(kid));
    }
    return e;
  }
  TC.el = el;

  /* Put `nodes` in `box` unless it already shows the same: an update that
   * changes nothing there (a press, the clock) must not replace a button
   * under a finger, or a tap whose touch began on the old one is lost.
   * When it does change, an event button that is still offered as it was
   * (the same event, text and colour) is the old element, moved to its new
   * place: a tap on it still lands. */
  function refill(box, nodes) {
    const html = nodes.map((n) => (n instanceof Node ? (n.outerHTML ?? n.textContent) : String(n))).join('');
    if (box.innerHTML === html) return false;
    const old = new Map();
    for (const b of box.querySelectorAll('button[data-event]')) old.set(b.outerHTML, b);
    const reuse = (b) => {
      const keep = old.get(b.outerHTML);
      if (keep) old.delete(b.outerHTML);
      return keep;
    };
    const out = nodes.map((n) => {
      if (!(n instanceof Element)) return n;
      if (n.matches('button[data-event]')) return reuse(n) || n;
      for (const b of n.querySelectorAll('button[data-event]')) {
        const keep = reuse(b);
        if (keep) b.replaceWith(keep);
      }
      return n;
    });
    box.replaceChildren(...out);
    return true;
  }
  TC.refill = refill;

  /* Black or white text on a player's colour (colour words or #rrggbb). */
  const fgCache = new Map();
  function textOn(colour) {
    if (!colour) return null;
    if (fgCache.has(colour)) return fgCache.get(colour);
    const probe = el('span');
    probe.style.color = colour;
    let fg = null;
    if (probe.style.color) {
      document.body.append(probe);
      const m = getComputedStyle(probe).color.match(/[\d.]+/g);
      probe.remove();
      if (m && m.length >= 3) {
        /* WCAG's relative luminance: black on it contrasts (L + .05) / .05,
           white 1.05 / (L + .05); the larger wins (at least 4.58:1) */
        const lin = (c) => { c /= 255; return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
        const [r, g, b] = m.slice(0, 3).map(Number).map(lin);
        const L = 0.2126 * r + 0.7152 * g + 0.0722 * b;
        fg = (L + 0.05) / 0.05 >= 1.05 / (L + 0.05) ? '#000' : '#fff';
      }
    }
    fgCache.set(colour, fg);
    return fg;
  }
  /* Colour words as softer shades that read on a phone (the new-game form
   * offers these words; a game's own colours are words too). */
  const SHADES = {
    red: '#e53935', orange: '#fb8c00', yellow: '#fdd835', green: '#43a047', blue: '#1e88e5',
    purple: '#8e24aa', pink: '#d81b60', teal: '#00897b', cyan: '#00acc1', brown: '#6d4c41',
    grey: '#757575', gray: '#757575', black: '#212121', white: '#fafafa',
  };
  TC.SHADES = SHADES;
  TC.shade = (colour) => (typeof colour === 'string' && colour ? own(SHADES, colour.toLowerCase()) || colour : null);
  function paint(node, colour) {
    colour = TC.shade(colour);
    if (colour) {
      node.style.setProperty('--pc', colour);
      const fg = textOn(colour);
      if (fg) node.style.setProperty('--pc-fg', fg);
    } else {
      node.style.removeProperty('--pc');
      node.style.removeProperty('--pc-fg');
    }
    return node;
  }
  TC.paint = paint;

  /* --- names never reorder the text around them ------------------------ */
  /* A name is shown in its own bidirectional isolate (<bdi>): Arabic or
   * Hebrew names read right to left without dragging "’s turn" along, and
   * a U+202E (RIGHT-TO-LEFT OVERRIDE) typed into a name reverses only the
   * name. The isolate controls U+2066-U+2069 are left out of what is shown:
   * a U+2069 (POP DIRECTIONAL ISOLATE) in a name would close the isolate
   * early and let an override after it loose on the rest of the line. */
  const ISOLATE_CONTROLS = /[\u2066-\u2069]/g;
  const BIDI_CONTROLS = /[\u202A-\u202E\u2066-\u2069]/;
  const shown = (text) => String(text).replace(ISOLATE_CONTROLS, '');
  /* A name as a node: <bdi class="tc-name">name</bdi>. */
  TC.nameNode = (name) => el('bdi', { class: 'tc-name', text: shown(name) });
  /* A name where only plain text can go (a page title, an <option>):
   * without any direction controls, so it cannot reorder what follows. */
  TC.plainName = (name) => String(name).replace(/[\u202A-\u202E\u2066-\u2069]/g, '');

  let namesKey = null;
  let namesRe = null;
  const escapeRe = (t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const SKIP = 'bdi.tc-name, script, style, textarea, option, select, title, [contenteditable]';
  const HTML_NS = 'http://www.w3.org/1999/xhtml';
  /* Split one text node at the names it contains (and any other stretch
   * with direction controls in it), each in its own <bdi>. */
  function isolateText(t) {
    const parent = t.parentNode;
    if (!parent || parent.nodeType !== 1 || parent.namespaceURI !== HTML_NS || parent.closest(SKIP)) return;
    const text = t.data;
    const hasControls = BIDI_CONTROLS.test(text);
    if (!hasControls && !(namesRe && (namesRe.lastIndex = 0, namesRe.test(text)))) return;
    const parts = [];
    const plain = (seg) => {
      if (!seg) return;
      parts.push(BIDI_CONTROLS.test(seg) ? el('bdi', { class: 'tc-name', text: shown(seg) }) : seg);
    };
    let at = 0;
    if (namesRe) {
      namesRe.lastIndex = 0;
      for (let m = namesRe.exec(text); m; m = namesRe.exec(text)) {
        plain(text.slice(at, m.index));
        parts.push(TC.nameNode(m[0]));
        at = m.index + m[0].length;
      }
    }
    plain(text.slice(at));
    t.replaceWith(...parts);
  }
  function isolateIn(root) {
    if (root.nodeType === 3) { isolateText(root); return; }
    if (root.nodeType !== 1 && root.nodeType !== 11) return;
    if (root.nodeType === 1 && root.closest(SKIP)) return;
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    const texts = [];
    for (let n = walker.nextNode(); n; n = walker.nextNode()) texts.push(n);
    texts.forEach(isolateText);
  }
  /* The players whose names the page isolates: the snapshot's (called by
   * the renderers; a change re-reads the whole page, the server-drawn
   * part too). Every node added later is isolated as it comes, whoever
   * adds it (a game's panel, a toast), by one MutationObserver. */
  TC.isolate = function (s) {
    const names = new Set();
    for (const p of (s && s.players) || []) if (p && typeof p.name === 'string' && p.name) names.add(p.name);
    const key = [...names].sort().join('\u0000');
    if (key === namesKey) return;
    namesKey = key;
    namesRe = names.size ? new RegExp([...names].sort((a, b) => b.length - a.length).map(escapeRe).join('|'), 'gu') : null;
    if (document.body) isolateIn(document.body);
  };
  if (typeof MutationObserver === 'function' && document.body) {
    new MutationObserver((records) => {
      for (const r of records) {
        if (r.type === 'characterData') isolateText(r.target);
        else for (const n of r.addedNodes) if (n.isConnected) isolateIn(n);
      }
    }).observe(document.body, { childList: true, subtree: true, characterData: true });
  }

  function viewPlayer(s, name) {
    const ps = s.view && Array.isArray(s.view.players) ? s.view.players : [];
    return ps.find((p) => p && p.name === name) || null;
  }
  TC.viewPlayer = viewPlayer;

  /* Each player's colour: the one the game itself gives (when its rules use
   * colours), else the one chosen at setup. */
  function colours(s) {
    const out = map();
    for (const p of s.players || []) out[p.name] = p.colour;
    const vps = s.view && Array.isArray(s.view.players) ? s.view.players : [];
    for (const vp of vps) if (vp && typeof vp.colour === 'string' && vp.name in out) out[vp.name] = vp.colour;
    return out;
  }
  TC.colours = colours;

  /* Each player's letter, shown with their colour wherever it is shown
   * (a player is never told apart by colour alone): the first letter of the
   * name, two when another player's starts the same, or the first and the
   * seat number. {name: letter}, without a prototype. */
  TC.marks = function (s) {
    const out = map();
    const used = new Set();
    const players = ((s && s.players) || []).filter((p) => p && typeof p.name === 'string');
    const firsts = players.map((p) => Array.from(TC.plainName(p.name).trim() || '?'));
    const initial = (chars) => chars[0].toLocaleUpperCase();
    players.forEach((p, i) => {
      const chars = firsts[i];
      const clash = firsts.some((c, j) => j !== i && initial(c) === initial(chars));
      let mark = clash && chars.length > 1 ? initial(chars) + chars[1].toLocaleLowerCase() : initial(chars);
      if (used.has(mark)) mark = initial(chars) + String(i + 1);
      used.add(mark);
      out[p.name] = mark;
    });
    return out;
  };
  /* A player's letter on their colour (decorative: the name is beside it). */
  TC.markNode = (s, name, colour) => paint(el('span', { class: 'pmark', 'aria-hidden': 'true',
    text: own(TC.marks(s), name) || '?' }), colour);

  /* --- small helpers for panels ---------------------------------------- */
  const cap = (t) => (t ? t.charAt(0).toUpperCase() + t.slice(1) : t);
  TC.cap = cap;
  /* TC.plural: /i18n.js (in the page's language) */
  TC.pct = (p) => {
    if (typeof p !== 'number') return '–';
    const v = p * 100;
    return TC.num(v, v > 0 && v < 10 ? 1 : 0) + (TC.lang === 'fr' ? '\u202f%' : '%');
  };
  TC.stat = (value, label, extra) => el('div', { class: 'stat' },
    el('div', { class: 'v', text: value == null ? '–' : String(value) }),
    el('div', { class: 'k', text: label }), extra || null);
  TC.stats = (pairs) => el('div', { class: 'stats' }, pairs.map(([v, k, x]) => TC.stat(v, k, x)));
  TC.chips = (texts, cls) => el('ul', { class: 'chips' }, texts.map((t) => el('li', { class: 'chip' + (cls ? ' ' + cls : ''), text: t })));
  TC.meter = (fraction) => el('div', { class: 'meter' },
    el('span', { style: { width: Math.max(0, Math.min(100, (fraction || 0) * 100)) + '%' } }));

  /* A card id as people say it: the game's own table of names (view.cards),
   * else the id made readable ("food:chicken-rice" -> "Chicken rice"). */
  function cardName(s, id) {
    if (id == null) return TC.t('face-down');
    for (const v of [s.view, s.host_view]) {
      const card = own(v && v.cards, id);
      if (card && card.name) return card.name;
    }
    return cap(String(id).replace(/^[a-z]+:/i, '').replace(/[-_]/g, ' '));
  }
  TC.cardName = cardName;

  /* The server's clock (for countdowns to a race's go_ns). */
  const clock = { offsetMs: null };
  TC.clock = clock;
  TC.syncClock = function (nowNs) {
    if (typeof nowNs === 'number') clock.offsetMs = nowNs / 1e6 - performance.now();
  };
  TC.serverNowMs = function () {
    return clock.offsetMs == null ? null : performance.now() + clock.offsetMs;
  };

  /* --- what each game says about itself (GET /api/games/<name>) --------- */
  TC.games = TC.games || map();
  let redraw = () => {};
  /* The page's redraw, called when a game's description or panel arrives. */
  TC.onGameReady = (fn) => { redraw = fn; };
  const asked = new Set();
  function loadScript(name, url) {
    if (own(TC.panels, name) || asked.has('js:' + name)) return;
    asked.add('js:' + name);
    const tag = el('script', { src: url });
    tag.addEventListener('load', () => redraw());
    document.head.append(tag);
  }
  /* The description of the snapshot's game, or null while it is fetched. */
  TC.gameInfo = function (s) {
    const name = s && s.game;
    if (!name) return null;
    const info = own(TC.games, name);
    if (info) {
      if (info.script) loadScript(name, info.script);
      return info;
    }
    if (!asked.has(name)) {
      asked.add(name);
      fetch('/api/games/' + encodeURIComponent(name), { credentials: 'same-origin' })
        .then((r) => (r.ok ? r.json() : null)).then((g) => {
          if (!g) return;
          TC.games[name] = g;
          if (g.script) loadScript(name, g.script);
          redraw();
        }).catch(() => { asked.delete(name); });
    }
    return null;
  };
  /* The game's description shipped inside the page (no round trip). */
  TC.seedGameInfo = function (node) {
    if (!node) return;
    try {
      const g = JSON.parse(node.textContent);
      if (g && g.name) TC.games[g.name] = g;
    } catch (e) { /* a bad seed: the page fetches it */ }
  };
  /* --- a page's own taps that log, in the order they were made ---------
   * TC.tapLine(version) -> log(key, send, double): `version()` is the
   * table's version the page shows; `send(expected)` logs against
   * `expected` and resolves to the version the table is at after it (null:
   * refused); `double()` is called instead for a double tap.
   * A tap made while the page's previous one is on its way waits for it,
   * then:
   *  - the same event (`key`) tapped on the same screen is a double tap:
   *    not sent, the first one is logged, and the page says so (the host
   *    who meant two taps it again: never a card dropped in silence);
   *  - another event tapped on that same screen (the host taps Ana's roll,
   *    then Bo's, before the first answer) is sent against the table the
   *    first one left, if nothing else changed it meanwhile;
   *  - else it is sent against the version it was tapped on: the table
   *    refuses it as stale if it moved on, and the page says so.
   * Before, the second tap was refused as stale (the console) or dropped
   * without a word (a player's page). */
  TC.tapLine = function (version) {
    let tail = Promise.resolve();
    let waiting = 0;
    /* the last tap sent: its event, the version it was tapped on and the
       version the table was at after it (null: refused or no answer) */
    let last = null;
    return function (key, send, double) {
      const seen = version();
      const queued = waiting > 0;
      waiting += 1;
      const go = async () => {
        try {
          let at = seen;
          if (queued && last && last.seen === seen) {
            if (last.key === key) { if (double) double(); return null; }
            if (last.after != null && version() === last.after) at = last.after;
          }
          const after = await send(at);
          last = { key, seen, after };
          return after;
        } finally {
          waiting -= 1;
        }
      };
      const run = tail.then(go);
      tail = run.catch(() => {});         /* the next tap waits for this one, answered or not */
      return run;
    };
  };

  /* --- a panel's way to log an event (the host console installs it) ---- */
  let logger = null;
  /* host.js: fn(event) -> Promise of the answer, rejecting with {error, rule, status} */
  TC.setLogger = (fn) => { logger = fn; };
  TC.canLog = () => logger !== null;
  TC.logEvent = function (event) {
    if (!logger) return Promise.reject({ error: TC.t('only the host console logs events'), rule: null, status: 0 });
    return logger(event);
  };

  const panelOf = (s) => (s && s.game && own(TC.panels, s.game)) || {};
  TC.panelOf = panelOf;

  /* --- the header: the buzzer box's state --------------------------------- */
  TC.renderBuzzerStatus = function (s, node) {
    if (!node) return;
    const b = s.buzzers;
    const down = !!(b && b.connected === false);
    node.hidden = !down;
    if (down) {
      node.textContent = b.away ? TC.t('buzzer box away for an update') : TC.t('buzzer box disconnected');
      node.title = b.detail || '';
    }
  };

  /* --- whose turn ------------------------------------------------------ */
  TC.renderBanner = function (s, banner) {
    TC.isolate(s);
    const view = s.view || {};
    let text, sub = null, colour = null;
    if (!s.game) {
      text = TC.t('Waiting for the host to start a game');
    } else if (s.finished) {
      const top = (s.ranking && s.ranking[0]) || [];
      text = TC.t('Game over');
      sub = TC.tx(view.status) || (top.length === 1 ? TC.t('{name} wins', { name: top[0] }) : top.length ? TC.t('Tie: {names}', { names: top.join(', ') }) : null);
      if (top.length === 1) colour = colours(s)[top[0]];
    } else if (s.current_player && typeof view.turn === 'string' && view.turn !== s.current_player) {
      /* a choice interrupts the turn (a Siam! loser picks a card to lose) */
      const pend = view.pending || {};
      text = pend.kind === 'keep' ? TC.t('{name} chooses a card to keep', { name: s.current_player })
        : pend.kind === 'lose' && pend.count > 1 ? TC.t('{name} chooses {cards} to lose', { name: s.current_player, cards: TC.plural(pend.count, 'card') })
        : pend.kind === 'lose' ? TC.t('{name} chooses a card to lose', { name: s.current_player })
          : pend.kind ? TC.t('{name} chooses a card to {kind}', { name: s.current_player, kind: TC.lang === 'en' ? pend.kind : TC.typeWord(pend.kind) })
            : TC.t('{name} must choose', { name: s.current_player });
      colour = colours(s)[s.current_player];
      sub = `${pend.rule ? cap(TC.tx(pend.rule)) + ' · ' : ''}${TC.t('still {name}’s turn', { name: view.turn })}`;
    } else if (s.current_player) {
      text = TC.t('{name}’s turn', { name: s.current_player });
      colour = colours(s)[s.current_player];
      sub = TC.tx(view.status) || null;
    } else {
      text = TC.tx(view.status) || TC.t('Everyone plays');
    }
    /* a live region: redrawn only when it says something new (a screen
       reader reads each change out) */
    const said = JSON.stringify([text, sub]);
    if (banner.dataset.said !== said) {
      banner.dataset.said = said;
      banner.replaceChildren(...[text, sub ? el('span', { class: 'sub', text: sub }) : null].filter(Boolean));
    }
    banner.classList.toggle('long', text.length > 26);
    paint(banner, colour);
  };

  /* --- players and scores ---------------------------------------------- */
  /* What a score counts ("points", "cards"): the snapshot's, else the game's. */
  TC.scoreUnit = function (s) {
    const info = TC.gameInfo(s);
    return TC.tx(s.score_unit || (info && info.score_unit) || 'points');
  };

  function extras(s, name) {
    const vp = viewPlayer(s, name);
    if (!vp) return [];
    const panel = panelOf(s);
    if (panel.extras) {
      try { return panel.extras(vp, s) || []; } catch (e) { console.error(e); return []; }
    }
    return Object.entries(vp).filter(([k, v]) => k !== 'name' && k !== 'score' && typeof v === 'number').slice(0, 3)
      .map(([k, v]) => `${k.replace(/_/g, ' ')} ${v}`);
  }

  function count(s, name) {
    const vp = viewPlayer(s, name) || {};
    const panel = panelOf(s);
    if (panel.count) {
      try { return panel.count(vp, s); } catch (e) { console.error(e); }
    }
    for (const k of ['count', 'cards', 'hand', 'hand_size', 'card_count']) {
      if (typeof vp[k] === 'number') return [vp[k], k === 'count' ? TC.t('count') : TC.t('cards')];
    }
    return ['?', TC.t('hidden')];
  }

  TC.renderPlayers = function (s, ul) {
    TC.isolate(s);
    const col = colours(s);
    const unit = TC.scoreUnit(s);
    const letters = TC.marks(s);
    const items = (s.players || []).map((p) => {
      const vp = viewPlayer(s, p.name) || {};
      const turn = s.current_player === p.name;
      let score, label;
      if (s.hides_scores) [score, label] = count(s, p.name);
      else { score = own(s.scores, p.name); label = unit; }
      const li = el('li', { class: 'player' + (turn ? ' turn' : '') + (vp.eliminated ? ' out' : ''), 'data-player': p.name },
        el('span', { class: 'swatch', 'aria-hidden': 'true', text: own(letters, p.name) }),
        el('div', {},
          el('div', { class: 'name' }, p.name, turn ? el('span', { class: 'tag', text: TC.t('turn') }) : null),
          el('div', { class: 'extra', text: extras(s, p.name).join(' · ') })),
        el('div', { class: 'score' }, String(score ?? 0), el('small', { text: label })));
      return paint(li, col[p.name]);
    });
    ul.replaceChildren(...items);
  };

  /* --- the race -------------------------------------------------------- */
  function ms(us) {
    const v = us / 1000;
    return TC.num(v, v >= 100 ? 0 : v >= 10 ? 1 : 3) + ' ms';
  }
  TC.ms = ms;

  /* The game's declared race reason (title, wording), or null. */
  function reasonInfo(s, reason) {
    const info = TC.gameInfo(s);
    return (info && own(info.race_reasons, reason)) || null;
  }
  TC.reasonInfo = reasonInfo;
  /* Does the snapshot's game ever race? False only for a game described
   * with no race reason (Chopote, Tropichaos): its pages offer no virtual
   * buzzers. True while the description is on its way. */
  /* whether a game races, from its description (``info``; none known yet:
   * it may) or from a snapshot's game */
  TC.racesIn = (info) => !info || Object.keys(info.race_reasons || {}).length > 0;
  TC.races = (s) => TC.racesIn(TC.gameInfo(s));
  TC.reasonTitle = function (s, reason) {
    const r = reasonInfo(s, reason);
    if (r && r.title) return TC.tx(r.title);
    return reason ? cap(String(reason).replace(/[-_]/g, ' ')) : TC.t('Race');
  };

  /* A wording template ("{winner} chopes it!") filled in; null if it asks
   * for something the page does not know (the server's `text` has it). */
  function fill(template, fields) {
    if (typeof template !== 'string') return null;
    let ok = true;
    const out = template.replace(/\{(\w+)\}/g, (m, k) => {
      const v = own(fields, k);
      if (v == null || v === '') { ok = false; return ''; }
      return v;
    });
    return ok ? out : null;
  }
  TC.fillWording = fill;

  function verdictLine(s, race, v) {
    const cls = v.winner ? 'win' : v.loser ? 'lose' : '';
    if (race.text) return [TC.tx(race.text), cls];
    const r = reasonInfo(s, race.reason) || {};
    const fields = Object.assign({}, race.info || {}, { winner: v.winner, loser: v.loser, tied: (v.tied || []).join(TC.t(' and ')) });
    const tpl = v.winner ? r.winner : v.loser ? r.loser : (v.tied && v.tied.length) ? r.tie : r.nobody;
    const worded = fill(typeof tpl === 'string' ? TC.t(tpl) : tpl, fields);
    if (worded) return [worded, cls];
    if (v.winner) return [TC.t('{name} wins', { name: v.winner }), cls];
    if (v.loser) return [TC.t('{name} loses', { name: v.loser }), cls];
    if (v.tied && v.tied.length) return [TC.t('Tie: {names}', { names: v.tied.join(', ') }), ''];
    return [TC.t('Nobody'), ''];
  }
  TC.verdictLine = verdictLine;

  /* Text into a live region only when it changes (each change is read out). */
  TC.say = (node, text) => { if (node.textContent !== text) node.textContent = text; };

  /* els: {section, reason, phase, countdown, presses, verdict, notes, stripWrap, strip, stripMax, accuracy} */
  /* a cue for the voice (voice.js, on the live pages) */
  const cue = (kind, text) => { if (TC.cue) TC.cue(kind, text); };
  TC.renderRace = function (s, race, els) {
    if (!race) {
      els.section.hidden = true;
      TC.countdown(null, els.countdown);
      for (const kind of ['countdown', 'question', 'verdict']) cue(kind, null);
      return;
    }
    els.section.hidden = false;
    TC.rememberRace(race);
    const col = colours(s);
    els.reason.textContent = race.title || TC.reasonTitle(s, race.reason);
    const phase = race.phase || (race.verdict ? 'decided' : 'live');
    els.phase.textContent = own({
      countdown: TC.t('get ready'), live: race.announced ? TC.t('go!') : TC.t('live'), decided: TC.t('verdict'),
      pending: race.announced ? TC.t('waiting for the start') : TC.t('waiting'), interrupted: TC.t('interrupted'),
    }, phase) || phase;
    els.section.dataset.phase = phase;
    const go = phase === 'live' && race.announced;
    els.countdown.hidden = !(phase === 'countdown' || go);
    if (els.countdown.hidden) cue('countdown', null);
    if (go) { TC.say(els.countdown, TC.t('GO!')); els.countdown.classList.add('go'); felt(els.countdown, 'go'); }
    TC.countdown(race, els.countdown);

    TC.windowBar(race, els);
    /* a doubtful race waits for the host: no winner (not even a "first")
     * until the answer; its presses on a timeline instead */
    const doubt = !!race.confirm;
    const v = doubt ? null : race.verdict || null;
    const order = (v && v.order && v.order.length ? v.order : race.order) || [];
    els.presses.replaceChildren(...(doubt ? [] : order).map((o, i) => paint(el('li', { 'data-player': o.player, class: o.after_verdict ? 'after' : null },
      el('span', {}, TC.markNode(s, o.player, col[o.player]), `${i + 1}. ${o.player}`),
      el('span', { class: 'off', text: i === 0 ? TC.t('first') : '+' + ms(o.offset_us) })), col[o.player])));
    TC.renderTimeline(s, doubt ? race : null, els);

    if (v) {
      const [line, cls] = verdictLine(s, race, v);
      TC.say(els.verdict, line);
      cue('verdict', line);
      cue('question', null);
      els.verdict.className = 'verdict ' + cls;
      const r = reasonInfo(s, race.reason) || {};
      const notes = [];
      const counted = order.filter((o) => !o.after_verdict);
      if (v.loser && counted.length > 1 && counted[counted.length - 1].player === v.loser) {
        /* last-press: the gap that decided the loser (last vs the one before) */
        const n = counted.length;
        notes.push(TC.t('margin {ms}', { ms: ms(counted[n - 1].offset_us - counted[n - 2].offset_us) }));
      } else if (!v.loser && counted.length > 1) notes.push(TC.t('margin {ms}', { ms: ms(counted[1].offset_us - counted[0].offset_us) }));
      if (order.length > counted.length) notes.push(TC.t('after the verdict: {names}', { names: order.filter((o) => o.after_verdict).map((o) => o.player).join(', ') }));
      for (const [who, ns] of Object.entries(v.handicap_ns || {})) notes.push(TC.t('{name}: {ms} head start', { name: who, ms: ms(ns / 1000) }));
      if (race.flipper) notes.push(TC.t('armed by {name}’s flip', { name: race.flipper }));
      if (race.confirm) notes.push(TC.t('waiting for the host: {why}', { why: TC.tx(race.confirm) }));
      if (v.false_starts && v.false_starts.length) notes.push(`${r.false_start ? TC.tx(r.false_start) : TC.t('false start')}: ${v.false_starts.join(', ')}`);
      if (v.ineligible && v.ineligible.length) notes.push(`${r.ineligible ? TC.tx(r.ineligible) : TC.t('not eligible')}: ${v.ineligible.join(', ')}`);
      if (v.no_edge && v.no_edge.length && race.kind !== 'first-press') notes.push(race.kind === 'first-release' ? TC.t('held on: {names}', { names: v.no_edge.join(', ') }) : TC.t('no press: {names}', { names: v.no_edge.join(', ') }));
      if (race.error) notes.push(TC.t('not logged: {why}', { why: TC.tx(race.error) }));
      els.notes.textContent = notes.join(' · ');
    } else if (doubt) {
      TC.say(els.verdict, TC.t('Waiting for the host'));
      cue('question', TC.t('Waiting for the host'));
      cue('verdict', null);
      els.verdict.className = 'verdict';
      els.notes.textContent = TC.t('{why}: no winner until the host answers', { why: TC.tx(race.confirm) });
    } else {
      const who = race.eligible && race.eligible.length ? race.eligible.join(', ') : TC.t('nobody');
      TC.say(els.verdict, phase === 'interrupted' ? TC.t('Interrupted: the host re-runs it')
        : race.kind === 'last-press' ? TC.t('Last to press loses: {names}', { names: who })
          : race.kind === 'first-release' ? TC.t('Hold on! First to let go loses: {names}', { names: who })
            : TC.t('May win: {names}', { names: who }));
      els.verdict.className = 'verdict';
      els.notes.textContent = '';
      cue('verdict', null);
      cue('question', null);
    }
    /* photo finish: every counted press on one time line */
    els.stripWrap.hidden = !(v && order.length > 1);     /* a photo finish needs two */
    if (v && order.length > 1) {
      const max = Math.max(...order.map((o) => o.offset_us), 1);
      els.strip.replaceChildren(...order.map((o, i) => {
        const left = (o.offset_us / max) * 100;
        return paint(el('div', { class: 'mark', style: { left: left + '%' }, title: o.player },
          TC.markNode(s, o.player, col[o.player]), el('span', { class: 'lbl', style: { top: i % 2 ? '-18px' : null }, text: o.player })), col[o.player]);
      }));
      els.stripMax.textContent = ms(max);
    }
    els.accuracy.hidden = !race.virtual;
  };

  /* The presses a doubtful race asks about, on one horizontal line: a mark
   * per press, labelled with the player and the seconds from the first
   * (the previous race's first press when the page saw it: `TC.lastFirst`).
   * The race's choices stand out; the default (the likeliest, else the last) is
   * outlined. Presses the page saw live (s.presses) are drawn too. */
  TC.lastFirst = null;
  TC.rememberRace = function (race) {
    const v = race && !race.confirm && race.phase === 'decided' ? race.verdict : null;
    const o = v && v.order && v.order[0];
    if (o && typeof o.t_ns === 'number') TC.lastFirst = { t_ns: o.t_ns, player: o.player };
  };
  TC.secs = (ns) => `+${TC.num(Math.max(0, ns) / 1e9, 2)} s`;
  /* a choice that is a press: not "nobody slammed it" (no player) nor "Cy
   * never slapped" (no press), whose t_ns is only the answer's key (the
   * moment the judge asked), never a press to draw as "null +2.68 s" */
  const aPress = (c) => !!c && typeof c.player === 'string' && !c.nobody && !c.never && typeof c.t_ns === 'number';
  /* where a doubtful race's offsets count from: the previous race's first
   * press (if the page saw it, and it came before every choice), else the
   * earliest choice that is a press */
  TC.choiceZero = function (race) {
    const ts = (race.choices || []).filter(aPress).map((c) => c.t_ns);
    const first = ts.length ? Math.min(...ts) : null;
    const prev = TC.lastFirst;
    if (prev && first != null && prev.t_ns < first && first - prev.t_ns < 10e9) return prev;
    return first == null ? null : { t_ns: first, player: null };
  };
  TC.renderTimeline = function (s, race, els) {
    let box = els.section.querySelector('.timeline-wrap');
    const all = (race && race.choices) || [];
    if (!all.some(aPress)) { if (box) box.remove(); return; }
    if (!box) {
      box = el('div', { class: 'timeline-wrap' });
      els.verdict.before(box);
    }
    const zero = TC.choiceZero(race);
    const choices = all.filter(aPress);
    const marks = [];
    const seen = new Set();
    const add = (player, t, cls) => {
      const key = `${player}@${t}`;
      if (seen.has(key) || typeof t !== 'number' || typeof player !== 'string' || !player) return;   /* a press of nobody: never a mark */
      seen.add(key);
      marks.push({ player, t, cls });
    };
    if (zero.player) add(zero.player, zero.t_ns, 'prior');
    /* the default (the likeliest, else the last) outlined when it is a press */
    const likely = all.findIndex((c) => c.likely);
    const dflt = all[likely >= 0 ? likely : all.length - 1];
    choices.forEach((c) => add(c.player, c.t_ns, 'choice' + (c === dflt ? ' default' : '')));
    for (const o of race.order || []) add(o.player, o.t_ns, '');
    const lo = zero.t_ns;
    const hiChoice = Math.max(...choices.map((c) => c.t_ns));
    for (const p of s.presses || []) if (p.t_ns >= lo && p.t_ns <= hiChoice + 1e9) add(p.player, p.t_ns, '');
    marks.sort((a, b) => a.t - b.t);
    const hi = Math.max(...marks.map((m) => m.t), lo + 1e8);
    const col = colours(s);
    /* labels take turns above and below the line, a new row when they would touch */
    const ends = [-1, -1, -1, -1];
    const LABEL = 27;                 /* a label's width, % of the line */
    const nodes = marks.map((m) => {
      const x = 4 + ((m.t - lo) / (hi - lo)) * 92;
      let row = ends.findIndex((e) => x - LABEL / 2 > e);
      if (row < 0) row = ends.indexOf(Math.min(...ends));
      ends[row] = x + LABEL / 2;
      const pos = ['up', 'down', 'up2', 'down2'][row];
      return paint(el('div', { class: `tl-mark ${m.cls} ${pos}`.trim(), style: { left: x + '%' }, 'data-player': m.player, 'data-t': String(m.t) },
        el('span', { class: 'tl-lbl' }, el('b', { text: m.player }), ' ', m.cls === 'prior' ? TC.t('last card') : TC.secs(m.t - lo))), col[m.player]);
    });
    box.replaceChildren(el('div', { class: 'timeline', role: 'img',
      'aria-label': TC.t('the presses: ') + marks.map((m) => `${m.player} ${TC.secs(m.t - lo)}`).join(', ') }, el('div', { class: 'tl-axis' }), ...nodes));
  };

  /* A draining bar: how much of a window (start_ns..end_ns on the server
   * clock) is left, with the seconds; it drains on its own. */
  const bars = new Set();
  TC.drainBar = function (startNs, endNs, label) {
    const fill = el('span');
    const text = el('span', { class: 'drain-text' });
    const bar = el('div', { class: 'drain', role: 'progressbar', 'aria-label': label || TC.t('window'),
      'aria-valuemin': '0', 'aria-valuemax': '100' }, fill, text);
    bar.update = () => {
      const now = TC.serverNowMs();
      const total = (endNs - startNs) / 1e6;
      const left = now == null ? total : Math.max(0, endNs / 1e6 - now);
      const pc = total > 0 ? Math.min(100, (left / total) * 100) : 0;
      fill.style.width = pc + '%';
      text.textContent = `${label ? label + ' · ' : ''}${TC.t('{s} s left', { s: TC.num(left / 1000, 1) })}`;
      bar.setAttribute('aria-valuenow', String(Math.round(pc)));
      bar.setAttribute('aria-valuetext', text.textContent);
      bar.classList.toggle('closed', left <= 0);
      return left > 0;
    };
    bar.update();
    bars.add(bar);
    return bar;
  };
  setInterval(() => { for (const b of bars) { if (!b.isConnected || !b.update()) bars.delete(b); } }, 100);

  /* The race's window, draining, while it is live (every phone and the console). */
  TC.windowBar = function (race, els) {
    let box = els.section.querySelector('.race-window');
    if (!box) {
      box = el('div', { class: 'race-window' });
      els.section.querySelector('.head').after(box);
    }
    const live = race.phase === 'live' && typeof race.deadline_ns === 'number';
    const start = race.announced ? race.go_ns : race.window_start_ns;
    if (!live || typeof start !== 'number') { box.replaceChildren(); box.hidden = true; return; }
    const key = `${start}-${race.deadline_ns}`;
    if (box.dataset.key === key && box.childNodes.length) return;
    box.dataset.key = key;
    box.hidden = false;
    box.replaceChildren(TC.drainBar(start, race.deadline_ns, TC.t('race window')));
  };

  /* A countdown that ticks on its own until GO (go_ns on the server clock). */
  let cdTimer = null;
  /* The phone buzzes with the countdown where it can (navigator.vibrate:
   * Android's browsers, after the first tap on the page): a short buzz
   * for each second, a long one at GO; never on the host console. */
  TC.feel = function (pattern) {
    if (typeof navigator.vibrate !== 'function' || document.body.classList.contains('host')) return false;
    try { return navigator.vibrate(pattern); } catch (e) { return false; }
  };
  /* each second once (the countdown redraws every 50 ms), GO once */
  function felt(node, shown) {
    if (node.dataset.felt === shown) return;
    node.dataset.felt = shown;
    TC.feel(shown === 'go' ? [400] : [80]);
    if (TC.cue) TC.cue('countdown', shown === 'go' ? TC.t('GO!') : shown);
  }
  TC.countdown = function (race, node) {
    if (cdTimer) { clearInterval(cdTimer); cdTimer = null; }
    if (!race || race.phase !== 'countdown' || typeof race.go_ns !== 'number') return;
    const tick = () => {
      const now = TC.serverNowMs();
      const left = now == null ? null : race.go_ns / 1e6 - now;
      if (left == null) TC.say(node, '…');
      else if (left > 0) { TC.say(node, String(Math.ceil(left / 1000))); node.classList.remove('go'); }
      else { TC.say(node, TC.t('GO!')); node.classList.add('go'); clearInterval(cdTimer); cdTimer = null; }
      if (left != null) felt(node, left > 0 ? String(Math.ceil(left / 1000)) : 'go');
    };
    tick();
    cdTimer = setInterval(tick, 50);
  };

  /* --- the game's own panel (static/games/<name>.js), or the generic one --- */
  function readable(v) {
    if (v == null) return null;
    if (typeof v === 'boolean') return v ? TC.t('yes') : TC.t('no');
    if (typeof v === 'number' || typeof v === 'string') return String(v);
    if (Array.isArray(v) && v.length <= 12 && v.every((x) => x == null || typeof x !== 'object')) {
      return v.length ? v.map((x) => String(x)).join(', ') : TC.t('none');
    }
    return null;
  }
  /* The generic panel: the view's simple fields, readable. */
  TC.genericPanel = function (container, view, s) {
    const info = TC.gameInfo(s);
    const rows = [];
    for (const [k, v] of Object.entries(view || {})) {
      const text = readable(v);
      if (text == null || k === 'game' || k === 'status') continue;   /* the status is the line above */
      rows.push(el('dt', { text: cap(k.replace(/_/g, ' ')) }), el('dd', { text }));
    }
    container.append(el('h2', { text: (info && info.title) || s.title || TC.t('The game') }));
    if (view && typeof view.status === 'string') container.append(el('p', { class: 'status', text: TC.tx(view.status) }));
    container.append(rows.length ? el('dl', { class: 'kv facts' }, rows) : el('p', { class: 'muted', text: TC.t('Nothing to show yet.') }));
  };

  /* view: the public view (scoreboard) or the host view (console). */
  TC.renderPanel = function (s, section, view) {
    view = view || s.view;
    if (!s.game || !view) { section.hidden = true; section.replaceChildren(); return; }
    section.hidden = false;
    section.replaceChildren();
    const panel = own(TC.panels, s.game);
    const info = TC.gameInfo(s);
    const waiting = !panel && info && info.script;       /* its script is on its way */
    try {
      if (panel && panel.render) panel.render(section, view, s);
      else if (!waiting) TC.genericPanel(section, view, s);
    } catch (e) {
      console.error(e);
      section.replaceChildren();
      TC.genericPanel(section, view, s);
    }
    section.hidden = !section.childNodes.length;
  };

  /* --- every key of the game's view, generically (the details) --------- */
  function short(v) {
    if (v == null) return '–';
    if (typeof v !== 'object') return String(v);
    const j = JSON.stringify(v);
    return j.length > 140 ? j.slice(0, 137) + '…' : j;
  }
  TC.renderKV = function (view, dl) {
    const rows = [];
    const add = (k, v) => rows.push(el('dt', { text: k }), el('dd', { text: short(v) }));
    for (const [k, v] of Object.entries(view || {})) {
      if (v && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length <= 12) {
        for (const [k2, v2] of Object.entries(v)) add(`${k}.${k2}`, v2);
      } else add(k, v);
    }
    dl.replaceChildren(...rows);
  };

  /* --- live updates ---------------------------------------------------- */
  /* The snapshot after one SSE message, or null when the page should fetch
   * a fresh one. Presses are kept client-side as the current burst. */
  const BURST_GAP_NS = 1.5e9;
  /* The presses the page saw before a snapshot: the snapshot's `waiting`
   * says which of them a card may still claim (none, once a card took them). */
  TC.settled = (presses) => (presses || []).map((p) => (p.settled ? p : Object.assign({}, p, { settled: true })));
  TC.applyUpdate = function (current, type, msg) {
    const data = msg.data;
    if (type === 'snapshot') return Object.assign({}, data, { presses: TC.settled(current.presses) });
    if (type === 'state') return data && Array.isArray(data.players)
      ? Object.assign({}, data, { presses: TC.settled(current.presses) }) : null;
    const s = Object.assign({}, current);
    if (type === 'race') s.race = data || null;
    else if (type === 'queued') s.queued = (data && Array.isArray(data.queued)) ? data.queued : [];
    else if (type === 'press') {
      if (data && data.pressed) {
        const list = (current.presses || []).slice();
        const last = list[list.length - 1];
        if (last && data.t_ns - last.t_ns > BURST_GAP_NS) list.length = 0;
        list.push({ player: data.player, t_ns: data.t_ns, virtual: !!data.virtual, at: performance.now(),
          window: data.window || 'open', closes_ns: data.closes_ns });
        s.presses = list.slice(-12);
      }
    } else if (type === 'fault') {
      /* one line per buzzer: its latest news; a cleared buzzer has none */
      if (data && data.fault === 'stray') return s;
      const key = (f) => f.buzzer || f.player || null;
      const k = data && key(data);
      const rest = (current.faults || []).filter((f) => k == null || key(f) !== k);
      s.faults = (data && data.fault === 'cleared' ? rest : rest.concat([data])).slice(-20);
    }
    else if (type === 'buzzers') s.buzzers = data || null;
    return s;
  };

  /* Presses outside a race: those waiting for the host to log their card
   * (with the claim window draining), the flipper's mark, and strays (a
   * press no race window held), shown briefly. Presses in a race's window
   * are the race card's, never shown twice. Host only: a "use" tap per
   * stray when a card waits for its race (``onUse``). */
  TC.renderBurst = function (s, section, list, onUse) {
    const now = performance.now();
    const serverNow = TC.serverNowMs();
    /* a card has the presses (its race runs, asks the host, or waits for
     * the host's answer): nothing waits for a log */
    const racing = s.race && (s.race.phase === 'live' || s.race.phase === 'countdown' || !!s.race.confirm);
    const col = colours(s);
    const rows = [];
    const open = (closes) => typeof closes === 'number' && (serverNow == null || closes / 1e6 > serverNow);
    const presses = (s.presses || []).filter((p) => p.window === 'open' || p.window === 'mark');
    /* presses seen before the last snapshot are the snapshot's to tell
     * (`waiting`: empty the moment a card took them); only newer ones
     * are added here, until the next snapshot */
    const waitingPress = presses.filter((p) => !racing && !p.settled && open(p.closes_ns));
    const waiting = (s.waiting || []).filter((w) => open(w.closes_ns));
    if (waitingPress.length) {
      const known = new Set(waiting.flatMap((w) => w.players));
      const fresh = waitingPress.filter((p) => !waiting.some((w) => p.t_ns >= w.start_ns && known.has(p.player)));
      if (fresh.length) waiting.push({ start_ns: fresh[0].t_ns, closes_ns: fresh[0].closes_ns,
        players: [...new Set(fresh.map((p) => p.player))] });
    }
    for (const w of racing ? [] : waiting) {
      const mark = presses.find((p) => p.window === 'mark' && p.t_ns >= w.start_ns);
      rows.push(el('li', { class: 'waiting' },
        el('div', { class: 'line' }, mark ? TC.t('{name} flipped: race open · ', { name: mark.player }) : TC.t('Pressed: '),
          ...w.players.map((p) => paint(el('span', { class: 'who', text: p }), col[p]))),
        el('div', { class: 'muted small', text: TC.t('waiting for the host to log the card') }),
        TC.drainBar(w.start_ns, w.closes_ns, TC.t('claim window'))));
    }
    const shown = (s.strays || []).filter((x) => {
      const seen = s.presses && s.presses.find((p) => p.t_ns === x.t_ns && p.player === x.player);
      if (seen) return now - seen.at < 12000 || !!onUse;
      return serverNow == null || serverNow - x.t_ns / 1e6 < 15000;     /* shown briefly */
    });
    for (const x of shown.slice(-4)) {
      const why = own({ unclaimed: TC.t('no card claimed it'), rejected: TC.t('rejected by the host') }, x.why) || TC.tx(x.why);
      rows.push(paint(el('li', { class: 'stray', 'data-player': x.player },
        el('span', {}, TC.t('Stray: {name}', { name: x.player })), el('span', { class: 'off', text: why }),
        onUse ? el('button', { type: 'button', class: 'use small', onclick: () => onUse(x) }, TC.t('Use for this card')) : null), col[x.player]));
    }
    section.hidden = !rows.length;
    list.replaceChildren(...rows);
  };

  /* What the last event changed at the table, in the game's words (its
   * panel's news(previous, snapshot)), else the event's own line: shown
   * under the banner until the next event. */
  TC.renderNews = function (prev, s, node) {
    if (!node) return;
    let text = null;
    const panel = panelOf(s);
    if (panel.news && prev && prev.game === s.game && prev.game_id === s.game_id && prev.version !== s.version) {
      try { text = panel.news(prev, s); } catch (e) { console.error(e); }
    }
    if (prev && prev.version === s.version) return;          /* nothing new: keep the line */
    node.textContent = text || '';
    node.hidden = !text;
  };

  /* The end of the game: places (a shared place says so), each player's
   * score as the rulebook counts it (the game's panel: breakdown(vp, s)),
   * the tie-break that decided a place (panel: tiebreak(tb, s)). */
  TC.renderResult = function (s, section) {
    const res = s.result;
    if (!s.finished || !res || !res.places) { section.hidden = true; section.replaceChildren(); return; }
    section.hidden = false;
    const col = colours(s);
    const panel = panelOf(s);
    const unit = TC.scoreUnit(s);
    const ord = TC.ordinal;
    const out = [el('h2', { text: TC.t('Final result') })];
    for (const pl of res.places) {
      for (const name of pl.players) {
        let parts = [];
        if (panel.breakdown) {
          try { parts = panel.breakdown(viewPlayer(s, name) || {}, s) || []; } catch (e) { console.error(e); }
        }
        out.push(paint(el('div', { class: 'place' + (pl.place === 1 ? ' first' : ''), 'data-player': name },
          el('div', { class: 'pos', text: pl.shared ? `= ${ord(pl.place)}` : ord(pl.place) }),
          el('div', { class: 'who' }, el('div', { class: 'name', text: name }),
            pl.shared ? el('div', { class: 'muted small', text: TC.t('shares {place} place with {names}', { place: ord(pl.place), names: pl.players.filter((p) => p !== name).join(', ') }) }) : null,
            parts.length ? el('ul', { class: 'breakdown' }, parts.map((t) => el('li', { text: t }))) : null),
          el('div', { class: 'pts' }, String(own(pl.scores, name) ?? ''), el('small', { text: unit }))), col[name]));
      }
    }
    for (const tb of res.tiebreak || []) {
      let text = null;
      if (panel.tiebreak) { try { text = panel.tiebreak(tb, s); } catch (e) { console.error(e); } }
      out.push(el('p', { class: 'tiebreak', text: text || TC.t('{names} both have {score} {unit}: the rules’ tie-break put them {first} and {second}', { names: tb.players.join(TC.t(' and ')), score: tb.score, unit, first: ord(tb.places[0]), second: ord(tb.places[1]) }) }));
    }
    /* the rule that would part a tie, named even when nobody tied (panel: tiebreakRule(s)) */
    if (!(res.tiebreak || []).length && panel.tiebreakRule) {
      let rule = null;
      try { rule = panel.tiebreakRule(s); } catch (e) { console.error(e); }
      if (rule) out.push(el('p', { class: 'tiebreak-rule muted small', text: rule }));
    }
    section.replaceChildren(...out);
  };

  TC.renderFaults = function (s, node) {
    const faults = (s.faults || []).slice(-3).reverse();
    node.hidden = !faults.length;
    node.replaceChildren(...faults.map((f) => el('li', {
      text: TC.tx(f.message) || `${f.player || TC.t('buzzer')}: ${f.fault === 'stuck' ? TC.t('stuck (ignored until released)') : f.fault}`,
    })));
  };

  TC.raceEls = function (root) {
    const q = (id) => root.querySelector('#' + id);
    return {
      section: q('race'), reason: q('race-reason'), phase: q('race-phase'), countdown: q('countdown'),
      presses: q('presses'), verdict: q('verdict'), notes: q('verdict-notes'), stripWrap: q('strip-wrap'),
      strip: q('strip'), stripMax: q('strip-max'), accuracy: q('race-accuracy'),
    };
  };

  /* This page's own id for its presses' numbers, drawn when it loads: the
     server keeps each page's numbers apart, so no page (nor a phone whose
     clock runs ahead) can make another page's presses look old. */
  TC.PAGE = TC.PAGE || Array.from(crypto.getRandomValues(new Uint8Array(16)),
    (b) => 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_'[b & 63]).join('');

  /* Virtual buzzers (millisecond accuracy): one button per player that
     posts {player, pressed} to ``url`` on press and release. */
  TC.buzzers = function (players, colours, url) {
    return (players || []).map((p) => {
      const b = TC.paint(el('button', { class: 'buzzer', type: 'button', 'data-player': p.name, text: p.name }), colours[p.name]);
      let down = false;
      let seq = 0;   /* per change: the time in µs, so that it also increases across reloads */
      const send = (pressed) => {
        if (down === pressed) return;
        down = pressed;
        b.classList.toggle('down', pressed);
        /* numbered, so the server puts a press and its release back in
           order if the two requests overtake each other */
        TC.post(url, { player: p.name, pressed, seq: (seq = Math.max(seq + 1, Date.now() * 1000)),
                       page: TC.PAGE });
      };
      b.addEventListener('pointerdown', (e) => {
        e.preventDefault();
        try { b.setPointerCapture(e.pointerId); } catch (err) { /* synthetic or ended pointer */ }
        send(true);
      });
      b.addEventListener('pointerup', () => send(false));
      b.addEventListener('pointercancel', () => send(false));
      b.addEventListener('contextmenu', (e) => e.preventDefault());
      b.addEventListener('keydown', (e) => { if (e.key === ' ' || e.key === 'Enter') { e.preventDefault(); send(true); } });
      b.addEventListener('keyup', (e) => { if (e.key === ' ' || e.key === 'Enter') send(false); });
      return b;
    });
  };
}());
