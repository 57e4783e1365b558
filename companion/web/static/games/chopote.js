/* Chopote's panel (the panel API is described at the top of js/render.js):
 * the board drawn as SVG from the board data in the view (no image files):
 * the circular track (squares numbered anticlockwise), each colour's start
 * zone outside its start square, its home corridor from the square before
 * it to the central finish, its casier with the bottles still waiting
 * (upright) and the ones home (upside down); every bottle in its player's
 * colour, a stack with its count, the last move traced. After a roll the
 * legal moves are outlined; on the host console a tap on a bottle plays it
 * (through TC.logEvent, the console's own path), and a tap on one that
 * cannot move, or a move the table refuses, says why in the rulebook's
 * words under the board. On a phone a tap only says what the bottle may do. */
(function () {
  'use strict';
  const TC = window.TC;
  const el = TC.el;
  const NS = 'http://www.w3.org/2000/svg';

  /* svg('circle', {cx: 1, style: 'fill: red'}, child...) */
  function svg(tag, attrs, ...kids) {
    const e = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v == null || v === false) continue;
      if (k === 'text') e.textContent = v;
      else if (k === 'style') setStyle(e, v);
      else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, String(v));
    }
    for (const kid of kids.flat()) if (kid) e.append(kid);
    return e;
  }

  /* "fill: red; stroke: var(--fg)" set through the CSSOM: the page's
   * Content-Security-Policy (style-src 'self') blocks style attributes */
  function setStyle(e, text) {
    for (const decl of String(text).split(';')) {
      const i = decl.indexOf(':');
      if (i > 0) e.style.setProperty(decl.slice(0, i).trim(), decl.slice(i + 1).trim());
    }
  }

  /* black or white text on a colour given as #rrggbb */
  function inkOn(hex) {
    const m = /^#?([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(hex || '');
    if (!m) return '#fff';
    const [r, g, b] = m.slice(1).map((x) => parseInt(x, 16));
    return (0.299 * r + 0.587 * g + 0.114 * b) / 255 > 0.6 ? '#000' : '#fff';
  }

  const R = 160;                      /* the track's radius, in board units */
  const SIZE = 404;                   /* the view box: -SIZE/2 .. SIZE/2 (room for the start zones and their rings) */

  /* Where everything is drawn, from the board data of the view. */
  function geometry(v) {
    const b = v.board || {};
    const L = Math.max(1, b.track_length || 56);
    const C = Math.max(1, b.corridor_length || 6);
    const colours = b.colours || [];
    const ang = (sq) => -Math.PI / 2 + 2 * Math.PI * sq / L;     /* anticlockwise on screen */
    const at = (a, rad) => [rad * Math.cos(a), -rad * Math.sin(a)];
    const r = Math.max(4, Math.min(11, 0.43 * 2 * Math.PI * R / L));
    const step = (R - 30) / (C + 1);
    const byColour = Object.create(null);    /* no prototype: keyed by the table's words */
    for (const c of colours) byColour[c.name] = c;
    return {
      L, C, r, colours, byColour,
      track: (sq) => at(ang(sq), R),
      corridor: (c, k) => at(ang(c.mouth), R - k * step),
      finish: (c) => at(ang(c.mouth), R - (C + 1) * step),
      start: (c) => at(ang(c.start), R + 2.6 * r),
      casier: (c) => at(ang(c.start + L / (2 * Math.max(4, colours.length))), R * 0.56),
      step,
    };
  }

  /* The board point of a position word for a player's colour; on a traced
   * path `home` is the finish the bottle reached (or bounced off). */
  function point(g, c, label, onPath) {
    if (!c) return null;
    if (label === 'home' && onPath) return g.finish(c);
    if (label === 'casier' || label === 'home') return g.casier(c);
    if (label === 'start') return g.start(c);
    const [zone, num] = String(label).split(':');
    if (zone === 'track') return g.track(Number(num));
    if (zone === 'corridor') return g.corridor(c, Number(num));
    return null;
  }

  /* A position word as a player reads it: "track:12" -> "square 12". */
  function where(label) {
    const fixed = { casier: 'casier', start: TC.t('start zone'), home: TC.t('home') };
    if (Object.prototype.hasOwnProperty.call(fixed, label)) return fixed[label];
    const [zone, num] = String(label).split(':');
    if (zone === 'track') return TC.t('square {n}', { n: num });
    if (zone === 'corridor') return TC.t('corridor {n}', { n: num });
    return String(label);
  }

  /* A small bottle, upright or upside down (a bottle home). */
  function bottle(x, y, h, fill, upsideDown) {
    const w = h * 0.5;
    const body = `M${-w / 2},${-h * 0.15} q0,${-h * 0.15} ${w * 0.3},${-h * 0.2} v${-h * 0.2}`
      + ` h${w * 0.4} v${h * 0.2} q${w * 0.3},${h * 0.05} ${w * 0.3},${h * 0.2}`
      + ` v${h * 0.6} h${-w} z`;
    return svg('path', {
      d: body, transform: `translate(${x.toFixed(1)},${y.toFixed(1)})${upsideDown ? ' rotate(180)' : ''}`,
      style: `fill: ${fill}; stroke: var(--fg); stroke-opacity: .6; stroke-width: .8`,
    });
  }

  /* What the last tap said, kept while the table stays at that version:
   * the panel is redrawn on every update, and a refusal must stay readable. */
  let note = null;
  let statusNode = null;
  function show() {
    if (!statusNode) return;
    statusNode.textContent = note ? note.text : statusNode.dataset.hint || '';
    statusNode.classList.toggle('refused', !!(note && note.bad));
    statusNode.style.setProperty('color', note && note.bad ? 'var(--bad)' : '');
    statusNode.setAttribute('role', note && note.bad ? 'alert' : 'status');
  }
  function say(s, text, bad) {
    note = { game: s.game_id, version: s.version, text, bad: !!bad };
    show();
  }
  /* a refusal in the rule's words: "why — « rule »" */
  const because = (why, rule) => (rule && !/^[a-z-]+$/.test(rule) ? `${TC.tx(why)} — « ${rule} »` : TC.tx(why));

  function draw(v, s) {
    const g = geometry(v);
    const col = TC.colours(s);
    const shade = (p) => TC.shade(col[p]) || '#888';
    const colourOf = Object.create(null);    /* player -> the board colour entry (a player may be called "__proto__") */
    for (const p of v.players || []) colourOf[p.name] = g.byColour[p.colour];
    const root = svg('svg', {
      viewBox: `${-SIZE / 2} ${-SIZE / 2} ${SIZE} ${SIZE}`, role: 'img',
      'aria-label': TC.t('Chopote board: {players}', { players: (v.players || []).map((p) =>
        `${p.name} ${p.counts ? TC.t('{home} home, {out} out', { home: p.counts.home, out: p.counts.track + p.counts.corridor + p.counts.start }) : ''}`).join('; ') }),
      style: 'display: block; width: 100%; max-width: 560px; height: auto; margin: 0 auto; touch-action: manipulation',
    });
    const line = 'stroke: var(--muted); stroke-opacity: .55; stroke-width: 1.2';
    root.append(svg('circle', { cx: 0, cy: 0, r: R, style: 'fill: none; stroke: var(--muted); stroke-opacity: .25; stroke-width: 1' }));

    /* the track, start squares in their colour */
    const starts = Object.create(null);
    for (const c of g.colours) starts[c.start] = c;
    for (let sq = 0; sq < g.L; sq++) {
      const [x, y] = g.track(sq);
      const c = starts[sq];
      root.append(svg('circle', {
        cx: x.toFixed(1), cy: y.toFixed(1), r: g.r,
        style: c ? `fill: var(--panel-2); stroke: ${TC.shade(c.name)}; stroke-width: ${Math.max(2, g.r / 3)}`
          : `fill: var(--panel-2); ${line}`,
      }));
    }
    /* corridors, finishes, start zones, casiers */
    for (const c of g.colours) {
      const tint = TC.shade(c.name);
      const [mx, my] = g.track(c.mouth);
      const [fx, fy] = g.finish(c);
      root.append(svg('line', { x1: mx.toFixed(1), y1: my.toFixed(1), x2: fx.toFixed(1), y2: fy.toFixed(1),
        style: `stroke: ${tint}; stroke-width: ${g.r * 0.6}; stroke-opacity: .35; stroke-linecap: round` }));
      for (let k = 1; k <= g.C; k++) {
        const [x, y] = g.corridor(c, k);
        root.append(svg('circle', { cx: x.toFixed(1), cy: y.toFixed(1), r: Math.min(g.r, g.step * 0.45),
          style: `fill: var(--panel-2); stroke: ${tint}; stroke-width: 1.5` }));
      }
      root.append(svg('circle', { cx: fx.toFixed(1), cy: fy.toFixed(1), r: Math.min(g.r * 1.3, 14),
        style: `fill: ${tint}; fill-opacity: .45; stroke: ${tint}; stroke-width: 2` }));
      const [sx, sy] = g.start(c);
      root.append(svg('rect', { x: (sx - g.r * 1.2).toFixed(1), y: (sy - g.r * 1.2).toFixed(1),
        width: (g.r * 2.4).toFixed(1), height: (g.r * 2.4).toFixed(1), rx: 3,
        style: `fill: ${tint}; fill-opacity: .3; stroke: ${tint}; stroke-width: 1.5` }));
    }
    const casierNodes = [];
    for (const p of v.players || []) {
      const c = colourOf[p.name];
      if (!c) continue;
      const [cx, cy] = g.casier(c);
      const tint = shade(p.name);
      const counts = p.counts || {};
      const box = svg('g', { 'data-where': 'casier', 'data-player': p.name });
      box.append(svg('rect', { x: cx - 30, y: cy - 17, width: 60, height: 34, rx: 6,
        style: `fill: var(--panel); stroke: ${tint}; stroke-width: 2` }));
      const slots = [...Array(counts.casier || 0).fill('up'), ...Array(counts.home || 0).fill('home')];
      while (slots.length < 4) slots.push('out');
      slots.slice(0, 4).forEach((kind, i) => {
        const x = cx - 21 + i * 14;
        if (kind === 'out') {
          box.append(svg('circle', { cx: x, cy, r: 2, style: 'fill: var(--muted)' }));
        } else {
          box.append(bottle(x, cy, 24, tint, kind === 'home'));
        }
      });
      const mark = TC.marks ? TC.own(TC.marks(s), p.name) : null;
      if (mark) {
        box.append(svg('text', { x: cx - 36, y: cy + 5, 'text-anchor': 'end', 'font-size': 14, 'font-weight': 800,
          'class': 'casier-mark', style: 'fill: var(--fg)', text: mark }));
      }
      box.append(svg('title', { text: TC.t('{name}’s casier: {waiting} waiting, {home} home (upside down)', { name: p.name, waiting: counts.casier || 0, home: counts.home || 0 }) }));
      casierNodes.push([p, box]);
      root.append(box);
    }

    /* the last move, traced under the bottles */
    const last = v.last_move;
    if (last && last.player && !last.passed && colourOf[last.player]) {
      const c = colourOf[last.player];
      const pts = [last.from, ...(last.path && last.path.length ? last.path : [last.to])]
        .map((lab, i) => point(g, c, lab, i > 0)).filter(Boolean);
      if (pts.length > 1) {
        root.append(svg('polyline', {
          points: pts.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(' '),
          style: `fill: none; stroke: var(--accent); stroke-width: 2.5; stroke-dasharray: 5 4; stroke-linejoin: round; stroke-linecap: round`,
        }));
        const [ex, ey] = pts[pts.length - 1];
        root.append(svg('circle', { cx: ex.toFixed(1), cy: ey.toFixed(1), r: g.r + 4,
          style: 'fill: none; stroke: var(--accent); stroke-width: 2' }));
        if (last.captures && Object.keys(last.captures).length) {
          const d = g.r + 6;
          root.append(svg('path', { d: `M${ex + d - 5},${ey - d - 5} l8,8 m0,-8 l-8,8`,
            style: 'stroke: var(--bad); stroke-width: 3; stroke-linecap: round' }));
        }
      }
    }

    /* the legal moves: outline where each can go */
    const moves = (v.moves || []).filter((m) => m.type === 'move');
    for (const m of moves) {
      const pt = point(g, colourOf[m.player], m.to);
      if (!pt || m.to === 'home') continue;
      root.append(svg('circle', { cx: pt[0].toFixed(1), cy: pt[1].toFixed(1), r: g.r + 2,
        style: 'fill: none; stroke: var(--good); stroke-width: 2; stroke-dasharray: 3 3' }));
    }

    /* the bottles: one disc per square and player, a count on a stack */
    const refusals = Object.create(null);
    for (const u of v.unplayable || []) refusals[u.from] = u;
    /* a tap on a bottle: on the host console a legal move is logged (the
     * console's own path, TC.logEvent) and a refusal says why; on a phone
     * the tap only says what the bottle may do */
    function tap(p, label) {
      if (v.finished) { say(s, TC.t('The game is over.'), true); return; }
      if (v.current_player && p.name !== v.current_player) {
        say(s, TC.t('{name} cannot move now: it is {current}’s turn', { name: p.name, current: v.current_player }) + ' — « Les joueurs lancent à tour de rôle leur dé. »', true);
        return;
      }
      if (v.roll == null) {
        say(s, v.phase === 'opening' ? TC.t('First the roll for who starts: {name} rolls.', { name: v.current_player })
          : TC.t('{name} rolls the die first.', { name: p.name }), true);
        return;
      }
      const m = moves.find((mv) => mv.player === p.name && mv.from === label);
      if (!m) {
        const u = refusals[label];
        say(s, u ? `${p.name}, ${where(label)}: ${because(u.why, u.rule)}` : TC.t('No move from {where}.', { where: where(label) }), true);
        return;
      }
      const caught = Object.entries(m.captures || {}).map(([q, n]) => `${q} ×${n}`).join(', ');
      const text = `${p.name}: ${where(label)} → ${where(m.to)}${caught ? ' ' + TC.t('(takes {what})', { what: caught }) : ''}`;
      if (!TC.canLog()) { say(s, TC.t('{move}: a legal move (the host plays it)', { move: text }), false); return; }
      say(s, `${text}…`, false);
      TC.logEvent(m).then((res) => {
        const st = res && res.state;
        if (st) note = { game: st.game_id, version: st.version, text: TC.t('Played: {move}', { move: text }), bad: false };
        show();
      }, (err) => {
        /* the state may have moved on (409): the note stays on the version
           it was about, the console reloads the table */
        note = { game: s.game_id, version: s.version, text: TC.t('Not played: {why}', { why: because(err.error, err.rule) }), bad: true,
          until: err.status === 409 ? Date.now() + 8000 : 0 };
        show();
      });
    }
    const stacks = new Map();      /* "x,y" -> {p, label, n, pt} */
    for (const p of v.players || []) {
      const c = colourOf[p.name];
      for (const b of p.bottles || []) {
        if (b.where === 'casier' || b.where === 'home') continue;
        const pt = point(g, c, b.label);
        if (!pt) continue;
        const key = `${p.name}|${b.label}`;
        if (!stacks.has(key)) stacks.set(key, { p, label: b.label, n: 0, pt });
        stacks.get(key).n += 1;
      }
    }
    const movable = new Set(moves.map((m) => `${m.player}|${m.from}`));
    for (const { p, label, n, pt } of stacks.values()) {
      const tint = shade(p.name);
      const rad = label.startsWith('corridor') ? Math.min(g.r, g.step * 0.45) : g.r;
      const grp = svg('g', { 'data-player': p.name, 'data-where': label, 'data-count': n,
        'data-movable': movable.has(`${p.name}|${label}`) ? 'yes' : null, style: 'cursor: pointer',
        onclick: () => tap(p, label) });
      /* a finger is bigger than a square: an invisible disc to tap */
      grp.append(svg('circle', { cx: pt[0].toFixed(1), cy: pt[1].toFixed(1), r: rad + 7,
        style: 'fill: transparent; stroke: none' }));
      if (movable.has(`${p.name}|${label}`)) {
        grp.append(svg('circle', { cx: pt[0].toFixed(1), cy: pt[1].toFixed(1), r: rad * 1.15 + 3.5,
          style: 'fill: none; stroke: var(--good); stroke-width: 3' }));
      }
      /* a bottle a little bigger than its square, so a glance finds it */
      grp.append(svg('circle', { cx: pt[0].toFixed(1), cy: pt[1].toFixed(1), r: rad * 1.15,
        style: `fill: ${tint}; stroke: var(--fg); stroke-width: 1.5` }));
      /* the player's letter (never the colour alone), and the count on a stack */
      const mark = (TC.marks ? TC.own(TC.marks(s), p.name) : null) || '';
      const tag = n > 1 ? `${mark}${n}` : mark;
      if (tag) {
        grp.append(svg('text', { x: pt[0].toFixed(1), y: (pt[1] + rad * 0.45).toFixed(1), 'text-anchor': 'middle',
          'font-size': (rad * (tag.length > 1 ? 1.1 : 1.4)).toFixed(1), 'font-weight': 800,
          'class': 'bottle-mark', style: `fill: ${inkOn(tint)}`, text: tag }));
      }
      grp.append(svg('title', { text: `${p.name}: ${n > 1 ? TC.t('{n} bottles on {where}', { n, where: where(label) }) : TC.t('a bottle on {where}', { where: where(label) })}` }));
      root.append(grp);
    }
    /* a tap on the casier: take a bottle out (on a 1 or a 6) */
    for (const [p, box] of casierNodes) {
      if (movable.has(`${p.name}|casier`)) {
        box.prepend(svg('rect', { x: g.casier(colourOf[p.name])[0] - 34, y: g.casier(colourOf[p.name])[1] - 21,
          width: 68, height: 42, rx: 8, style: 'fill: none; stroke: var(--good); stroke-width: 3' }));
        box.setAttribute('data-movable', 'yes');
      }
      box.style.cursor = 'pointer';
      box.addEventListener('click', () => tap(p, 'casier'));
    }
    return root;
  }

  function rollLine(v) {
    if (v.phase === 'opening') {
      const op = v.opening || {};
      const rolls = Object.entries(op.rolls || {}).map(([p, n]) => `${p} ${n}`).join(', ');
      return (op.round > 1 ? TC.t('Who starts (tie, round {n}): {rolls}', { n: op.round, rolls: rolls || TC.t('nobody has rolled yet') })
        : TC.t('Who starts: {rolls}', { rolls: rolls || TC.t('nobody has rolled yet') }))
        + (op.rolling && op.rolling.length ? ' · ' + TC.t('{name} rolls', { name: op.rolling[0] }) : '');
    }
    if (v.finished) return TC.t('{name} has all 4 bottles home', { name: v.winner });
    if (v.roll != null) {
      const moves = (v.moves || []).filter((m) => m.type === 'move');
      return TC.t('{name} rolled {n}: ', { name: v.turn, n: v.roll }) + (moves.length ? TC.plural(moves.length, 'legal move')
        : TC.t('blocked, passes')) + (v.must_enter ? ' · ' + TC.t('the new bottle moves onto the track') : '');
    }
    const lr = v.last_roll;
    const again = lr && !lr.opening && lr.player === v.turn && (lr.value === 1 || lr.value === 6);
    return again ? TC.t('{name} to roll again (rolled {n})', { name: v.turn, n: lr.value }) : TC.t('{name} to roll', { name: v.turn });
  }

  TC.panels.chopote = {
    render(container, v, s) {
      const status = el('p', { class: 'status small tap-note', 'aria-live': 'polite' });
      container.append(el('h2', { text: TC.t('The board') }),
        el('p', { class: 'status roll-line', text: rollLine(v) }));
      container.append(draw(v, s), status);
      if (!(note && note.game === s.game_id && (note.version === s.version || note.until > Date.now()))) note = null;
      const mine = v.current_player && v.roll != null && !v.finished;
      status.dataset.hint = !mine ? ''
        : TC.canLog() ? TC.t('Tap a bottle of {name}’s to play it (outlined in green: the legal moves).', { name: v.current_player })
          : TC.t('Tap a bottle to see where it can go.');
      statusNode = status;
      show();
      const last = v.last_move;
      if (last && last.player) {
        const caught = Object.entries(last.captures || {}).map(([q, n]) => TC.t('{n} × {name}', { n, name: q })).join(', ');
        /* a blocked roll: the tracker passed by itself */
        const only = last.forced ? ' ' + TC.t('by itself (no move)') : '';
        container.append(el('p', { class: 'muted small last-move', text: (last.passed
          ? TC.t('Last: {name} rolled {n}, blocked, passed', { name: last.player, n: last.roll })
          : TC.t('Last: {name} rolled {n}, {from} → {to}', { name: last.player, n: last.roll, from: where(last.from), to: where(last.to) })
            + (last.bounce ? ' ' + TC.t('(bounced off the finish)') : '') + (caught ? ', ' + TC.t('took {what}', { what: caught }) : '')) + only }));
      }
    },

    extras(vp) {
      const c = vp.counts || {};
      return [`casier ${c.casier ?? 0}`, TC.t('start {n}', { n: c.start ?? 0 }), TC.t('track {n}', { n: c.track ?? 0 }),
        TC.t('corridor {n}', { n: c.corridor ?? 0 }), TC.t('{n} to go', { n: vp.distance_left ?? '–' })];
    },

    /* a move button wears the mover's colour (the default does this by player) */
    eventColour() { return null; },
  };
}());
