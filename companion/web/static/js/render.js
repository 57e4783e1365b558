/* Drawing the table from a snapshot (shared by the scoreboard and the host
 * console). Data only ever goes into the page as text (textContent / text
 * nodes), never as HTML: a player called "<b>x</b>" is shown as typed. */
(function () {
  'use strict';
  const TC = window.TC = window.TC || {};

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
        const [r, g, b] = m.map(Number);
        fg = (0.299 * r + 0.587 * g + 0.114 * b) / 255 > 0.6 ? '#000' : '#fff';
      }
    }
    fgCache.set(colour, fg);
    return fg;
  }
  /* Colour words (Chope!'s table colours) as softer shades that read on a phone. */
  const SHADES = {
    red: '#e53935', orange: '#fb8c00', yellow: '#fdd835', green: '#43a047', blue: '#1e88e5',
    purple: '#8e24aa', pink: '#d81b60', teal: '#00897b', cyan: '#00acc1', brown: '#6d4c41',
    grey: '#757575', gray: '#757575', black: '#212121', white: '#fafafa',
  };
  function paint(node, colour) {
    if (colour) colour = SHADES[String(colour).toLowerCase()] || colour;
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

  /* Each player's colour: the one the game itself gives (a Chope! player's
   * table colour matters for scoring), else the one chosen at setup. */
  function colours(s) {
    const out = {};
    for (const p of s.players || []) out[p.name] = p.colour;
    const vps = s.view && Array.isArray(s.view.players) ? s.view.players : [];
    for (const vp of vps) if (vp && typeof vp.colour === 'string' && vp.name in out) out[vp.name] = vp.colour;
    return out;
  }
  TC.colours = colours;

  /* The server's clock (for countdowns to a race's go_ns). */
  const clock = { offsetMs: null };
  TC.clock = clock;
  TC.syncClock = function (nowNs) {
    if (typeof nowNs === 'number') clock.offsetMs = nowNs / 1e6 - performance.now();
  };
  TC.serverNowMs = function () {
    return clock.offsetMs == null ? null : performance.now() + clock.offsetMs;
  };

  /* Card names: Chope! gives its own table of names; others are ids. */
  function cardName(s, id) {
    if (id == null) return 'face-down';
    const cards = s.view && s.view.cards;
    if (cards && cards[id] && cards[id].name) return cards[id].name;
    const base = String(id).replace(/^food:/, '').replace(/^table:(.*)$/, '$1 table');
    const named = base.replace(/[-_]/g, ' ');
    if (named === 'eel') return 'Electric Eel';
    return named.charAt(0).toUpperCase() + named.slice(1);
  }
  TC.cardName = cardName;

  const REASONS = {
    chope: 'Chope!', siam: 'Siam!', chomp: 'Chomp!', 'feeding-frenzy': 'Feeding Frenzy!',
    'ink-out': 'Ink Out!', 'food-poisoning': 'Food Poisoning!', free: 'Buzzers', burst: 'Buzzers',
  };
  TC.reasonName = (r) => REASONS[r] || (r ? String(r) : 'Race');

  function viewPlayer(s, name) {
    const ps = s.view && Array.isArray(s.view.players) ? s.view.players : [];
    return ps.find((p) => p && p.name === name) || null;
  }

  /* --- whose turn ------------------------------------------------------ */
  TC.renderBanner = function (s, banner) {
    const view = s.view || {};
    let text, sub = null, colour = null;
    if (!s.game) {
      text = 'Waiting for the host to start a game';
    } else if (s.finished) {
      const top = (s.ranking && s.ranking[0]) || [];
      text = 'Game over';
      sub = view.status || (top.length === 1 ? `${top[0]} wins` : top.length ? `Tie: ${top.join(', ')}` : null);
      if (top.length === 1) colour = colours(s)[top[0]];
    } else if (s.current_player) {
      text = `${s.current_player}’s turn`;
      colour = colours(s)[s.current_player];
      sub = view.status || null;
    } else {
      text = view.status || 'Everyone plays';
    }
    banner.replaceChildren(...[text, sub ? el('span', { class: 'sub', text: sub }) : null].filter(Boolean));
    banner.classList.toggle('long', text.length > 26);
    paint(banner, colour);
  };

  /* --- players and scores ---------------------------------------------- */
  function extras(s, name) {
    const vp = viewPlayer(s, name);
    if (!vp) return [];
    if (s.game === 'chope') {
      const out = [`${vp.table_count} table${vp.table_count === 1 ? '' : 's'}`,
        `${vp.food_count} food (${vp.mains} main, ${vp.sides} side)`];
      if (vp.mynah_debt) out.push(`owes ${vp.mynah_debt}`);
      if (vp.favourite_dealt) out.push('★ favourite dealt');
      if (vp.favourite) out.push(`★ ${cardName(s, 'food:' + vp.favourite)}`);
      return out;
    }
    if (s.game === 'chomp') {
      const out = [`pile ${vp.pile}`, `discard ${vp.discard}`];
      if (vp.card) out.push(`shows ${cardName(s, vp.card)}`);
      if (vp.eliminated) out.push('washed up');
      return out;
    }
    return Object.entries(vp).filter(([k, v]) => k !== 'name' && typeof v === 'number').slice(0, 3)
      .map(([k, v]) => `${k.replace(/_/g, ' ')} ${v}`);
  }

  function count(s, name) {
    const vp = viewPlayer(s, name) || {};
    for (const k of ['count', 'cards', 'hand', 'hand_size', 'card_count']) {
      if (typeof vp[k] === 'number') return [vp[k], k === 'count' ? 'count' : 'cards'];
    }
    return ['?', 'hidden'];
  }

  TC.renderPlayers = function (s, ul) {
    const col = colours(s);
    const items = (s.players || []).map((p) => {
      const vp = viewPlayer(s, p.name) || {};
      const turn = s.current_player === p.name;
      let score, label;
      if (s.hides_scores) [score, label] = count(s, p.name);
      else { score = (s.scores || {})[p.name]; label = s.game === 'chomp' ? 'cards' : 'points'; }
      const li = el('li', { class: 'player' + (turn ? ' turn' : '') + (vp.eliminated ? ' out' : ''), 'data-player': p.name },
        el('span', { class: 'swatch' }),
        el('div', {},
          el('div', { class: 'name' }, p.name, turn ? el('span', { class: 'tag', text: 'turn' }) : null),
          el('div', { class: 'extra', text: extras(s, p.name).join(' · ') })),
        el('div', { class: 'score' }, String(score ?? 0), el('small', { text: label })));
      return paint(li, col[p.name]);
    });
    ul.replaceChildren(...items);
  };

  /* --- the race -------------------------------------------------------- */
  function ms(us) {
    const v = us / 1000;
    return (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(3)) + ' ms';
  }
  TC.ms = ms;

  function verdictLine(race, v) {
    const r = race.reason;
    if (v.winner) {
      if (r === 'chope') return [`${v.winner} chopes it!`, 'win'];
      if (r === 'chomp' || r === 'feeding-frenzy') return [`${v.winner} chomps!`, 'win'];
      return [`${v.winner} wins`, 'win'];
    }
    if (v.loser) {
      if (r === 'siam') return [`${v.loser} was last: Siam!`, 'lose'];
      if (r === 'food-poisoning') return [`${v.loser} let go first`, 'lose'];
      return [`${v.loser} loses`, 'lose'];
    }
    if (v.tied && v.tied.length) return [`Tie: ${v.tied.join(', ')}`, ''];
    return ['Nobody', ''];
  }

  /* els: {section, reason, phase, countdown, presses, verdict, notes, stripWrap, strip, stripMax, accuracy} */
  TC.renderRace = function (s, race, els) {
    if (!race) { els.section.hidden = true; return; }
    els.section.hidden = false;
    const col = colours(s);
    els.reason.textContent = TC.reasonName(race.reason);
    const phase = race.phase || (race.verdict ? 'decided' : 'live');
    els.phase.textContent = {
      countdown: 'get ready', live: race.announced ? 'go!' : 'live', decided: 'verdict',
      pending: race.announced ? 'waiting for the start' : 'waiting', interrupted: 'interrupted',
    }[phase] || phase;
    els.section.dataset.phase = phase;
    const go = phase === 'live' && race.announced;
    els.countdown.hidden = !(phase === 'countdown' || go);
    if (go) { els.countdown.textContent = 'GO!'; els.countdown.classList.add('go'); }
    TC.countdown(race, els.countdown);

    const v = race.verdict || null;
    const order = (v && v.order && v.order.length ? v.order : race.order) || [];
    els.presses.replaceChildren(...order.map((o, i) => paint(el('li', { 'data-player': o.player },
      el('span', {}, `${i + 1}. ${o.player}`),
      el('span', { class: 'off', text: i === 0 ? 'first' : '+' + ms(o.offset_us) })), col[o.player])));

    if (v) {
      const [line, cls] = verdictLine(race, v);
      els.verdict.textContent = line;
      els.verdict.className = 'verdict ' + cls;
      const notes = [];
      if (order.length > 1) notes.push(`margin ${ms(order[1].offset_us - order[0].offset_us)}`);
      if (v.false_starts && v.false_starts.length) notes.push(`false start: ${v.false_starts.join(', ')}`);
      if (v.ineligible && v.ineligible.length) notes.push(`not eligible: ${v.ineligible.join(', ')}`);
      if (v.no_edge && v.no_edge.length && race.kind !== 'first-press') notes.push(`no press: ${v.no_edge.join(', ')}`);
      if (race.error) notes.push(`not logged: ${race.error}`);
      els.notes.textContent = notes.join(' · ');
    } else {
      const who = race.eligible && race.eligible.length ? race.eligible.join(', ') : 'nobody';
      els.verdict.textContent = phase === 'interrupted' ? 'Interrupted: the host re-runs it'
        : race.kind === 'last-press' ? `Last to press loses: ${who}`
          : race.kind === 'first-release' ? `Hold on! First to let go loses: ${who}`
            : `May win: ${who}`;
      els.verdict.className = 'verdict';
      els.notes.textContent = '';
    }
    /* photo finish: every counted press on one time line */
    els.stripWrap.hidden = !(v && order.length > 1);     /* a photo finish needs two */
    if (v && order.length > 1) {
      const max = Math.max(...order.map((o) => o.offset_us), 1);
      els.strip.replaceChildren(...order.map((o, i) => {
        const left = (o.offset_us / max) * 100;
        return paint(el('div', { class: 'mark', style: { left: left + '%' }, title: o.player },
          el('span', { class: 'lbl', style: { top: i % 2 ? '-18px' : null }, text: o.player })), col[o.player]);
      }));
      els.stripMax.textContent = ms(max);
    }
    els.accuracy.hidden = !race.virtual;
  };

  /* A countdown that ticks on its own until GO (go_ns on the server clock). */
  let cdTimer = null;
  TC.countdown = function (race, node) {
    if (cdTimer) { clearInterval(cdTimer); cdTimer = null; }
    if (!race || race.phase !== 'countdown' || typeof race.go_ns !== 'number') return;
    const tick = () => {
      const now = TC.serverNowMs();
      const left = now == null ? null : race.go_ns / 1e6 - now;
      if (left == null) node.textContent = '…';
      else if (left > 0) { node.textContent = String(Math.ceil(left / 1000)); node.classList.remove('go'); }
      else { node.textContent = 'GO!'; node.classList.add('go'); clearInterval(cdTimer); cdTimer = null; }
    };
    tick();
    cdTimer = setInterval(tick, 50);
  };

  /* --- each game's own panel ------------------------------------------- */
  function stat(value, label, extra) {
    return el('div', { class: 'stat' }, el('div', { class: 'v', text: String(value) }),
      el('div', { class: 'k', text: label }), extra || null);
  }

  const PANELS = {
    chope(s, v) {
      const out = [el('h2', { text: 'Hawker centre' })];
      const left = v.deck_left ? v.deck_left.count : null;
      const odds = v.bust_odds;
      const pct = odds ? (odds.probability * 100) : null;
      out.push(el('div', { class: 'stats' },
        stat(left ?? '–', 'cards left in the deck'),
        stat(pct == null ? '–' : (pct < 10 ? pct.toFixed(1) : pct.toFixed(0)) + '%', 'odds the next flip busts',
          odds ? el('div', { class: 'meter' }, el('span', { style: { width: Math.min(100, pct) + '%' } })) : null),
        stat(v.flips_this_turn ?? 0, 'flips this turn')));
      if (odds) out.push(el('p', { class: 'muted small', text: `${odds.cards} of the ${odds.of} cards left would bust` }));
      const faceUp = v.face_up || [];
      out.push(el('h2', { text: 'Face up' }),
        faceUp.length ? el('ul', { class: 'chips' }, faceUp.map((c) => el('li', { class: 'chip', text: cardName(s, c) })))
          : el('p', { class: 'muted', text: 'nothing face up' }));
      if (v.contested) out.push(el('p', { class: 'status', text: `Up for grabs: ${cardName(s, v.contested)}` }));
      const pend = v.pending;
      if (pend && pend.kind !== 'race') {
        const who = pend.player ? `${pend.player}: ` : '';
        out.push(el('p', { class: 'status', text: who + (pend.why || pend.kind) }));
      }
      if (v.discard) out.push(el('p', { class: 'muted small', text: `discarded: ${v.discard.count}` }));
      return out;
    },
    chomp(s, v) {
      const col = colours(s);
      const out = [el('h2', { text: v.round ? `Round ${v.round}` : 'Chomp!' })];
      const may = new Set(v.may_chomp || []);   /* (the banner shows v.status) */
      const revealed = v.revealed || {};
      const last = !Object.keys(revealed).length && v.last_round && v.last_round.cards ? v.last_round : null;
      const shown = last ? last.cards : revealed;
      if (last) {
        const bad = (last.bad_chomps || []).length ? ` · Bad Chomp: ${last.bad_chomps.join(', ')}` : '';
        const how = last.winner ? `${last.winner} took ${last.took || 'the'} card${last.took === 1 ? '' : 's'}`
          : (last.tied || []).length ? `tie: ${last.tied.join(', ')}` : String(last.result || '').replace(/-/g, ' ');
        out.push(el('p', { class: 'muted small', text: `Last round (${last.round}): ${how}${bad}` }));
      }
      out.push(el('div', { class: 'reveal' + (last ? ' last' : '') }, (v.players || []).map((p) => paint(el('div', {
        class: 'slot' + (may.has(p.name) || (last && last.winner === p.name) ? ' may' : ''), 'data-player': p.name,
      }, el('div', { class: 'who', text: p.name }),
        el('div', { class: 'what', text: shown[p.name] ? cardName(s, shown[p.name]) : (p.eliminated ? 'washed up' : '—') }),
        el('div', { class: 'piles', text: `pile ${p.pile} · discard ${p.discard}` })), col[p.name]))));
      if (v.set_aside_count) out.push(el('p', { class: 'muted small', text: `set aside: ${v.set_aside_count} card${v.set_aside_count === 1 ? '' : 's'}` }));
      return out;
    },
  };

  TC.renderPanel = function (s, section) {
    const fn = s.game && PANELS[s.game];
    if (!fn || !s.view) { section.hidden = true; section.replaceChildren(); return; }
    section.hidden = false;
    section.replaceChildren(...fn(s, s.view));
  };

  /* --- every key of the game's view, generically ----------------------- */
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
  TC.applyUpdate = function (current, type, msg) {
    const data = msg.data;
    if (type === 'snapshot') return Object.assign({}, data, { presses: current.presses || [] });
    if (type === 'state') return data && Array.isArray(data.players)
      ? Object.assign({}, data, { presses: current.presses || [] }) : null;
    const s = Object.assign({}, current);
    if (type === 'race') s.race = data || null;
    else if (type === 'press') {
      if (data && data.pressed) {
        const list = (current.presses || []).slice();
        const last = list[list.length - 1];
        if (last && data.t_ns - last.t_ns > BURST_GAP_NS) list.length = 0;
        list.push({ player: data.player, t_ns: data.t_ns, virtual: !!data.virtual, at: performance.now() });
        s.presses = list.slice(-12);
      }
    } else if (type === 'fault') s.faults = (current.faults || []).concat([data]).slice(-20);
    return s;
  };

  /* Presses as they arrive, outside a running race (e.g. the burst before
   * the host logs a Chope! card): shown for a while after the last one. */
  TC.renderBurst = function (s, section, list) {
    /* presses the race already shows are not shown twice */
    const order = (s.race && ((s.race.verdict && s.race.verdict.order) || s.race.order)) || [];
    const raced = Math.max(-Infinity, ...order.map((o) => o.t_ns).filter((t) => typeof t === 'number'));
    const presses = (s.presses || []).filter((p) => p.t_ns > raced);
    const racing = s.race && (s.race.phase === 'live' || s.race.phase === 'countdown');
    const last = presses[presses.length - 1];
    const fresh = last && performance.now() - last.at < 8000;
    if (!presses.length || racing || !fresh) { section.hidden = true; return; }
    section.hidden = false;
    const col = colours(s);
    const seen = new Set();
    const t0 = presses[0].t_ns;
    list.replaceChildren(...presses.filter((p) => !seen.has(p.player) && seen.add(p.player)).map((p, i) =>
      paint(el('li', { 'data-player': p.player },
        el('span', {}, `${i + 1}. ${p.player}${p.virtual ? ' (virtual)' : ''}`),
        el('span', { class: 'off', text: i === 0 ? 'first' : '+' + ms((p.t_ns - t0) / 1000) })), col[p.player])));
  };

  TC.renderFaults = function (s, node) {
    const faults = (s.faults || []).slice(-3).reverse();
    node.hidden = !faults.length;
    node.replaceChildren(...faults.map((f) => el('li', {
      text: f.message || `${f.player || 'buzzer'}: ${f.fault === 'stuck' ? 'stuck (ignored until released)' : f.fault}`,
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

  /* Virtual buzzers (millisecond accuracy): one button per player that
     posts {player, pressed} to ``url`` on press and release. */
  TC.buzzers = function (players, colours, url) {
    return (players || []).map((p) => {
      const b = TC.paint(el('button', { class: 'buzzer', type: 'button', 'data-player': p.name, text: p.name }), colours[p.name]);
      let down = false;
      const send = (pressed) => {
        if (down === pressed) return;
        down = pressed;
        b.classList.toggle('down', pressed);
        TC.post(url, { player: p.name, pressed });
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
