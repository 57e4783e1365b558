/* Tropichaos' panel (the panel API is described at the top of js/render.js):
 * the season board with its marker, the Market, the bag and the odds of the
 * next draw, and under each player their hand size, chips sold per season,
 * deductions and the chance the season moves before their next turn. The
 * public view never holds a hidden fruit: piles show their fruits only once
 * turned over. Text only, through textContent. */
(function () {
  'use strict';
  const TC = window.TC;
  const el = TC.el;

  const SEASON_COLOUR = { spring: 'green', summer: 'orange', autumn: 'brown', end: 'grey' };
  const FRUIT_COLOUR = { kiwi: 'green', mango: 'orange', pomegranate: 'red' };
  const SEASONS = ['spring', 'summer', 'autumn'];

  function name(s, id) { return TC.cardName(s, id); }

  function fruitCounts(s, counts) {
    return Object.entries(counts || {}).filter(([, n]) => n)
      .map(([f, n]) => (n > 1 ? `${n} × ${name(s, f)}` : name(s, f)));
  }

  function odds(o) { return o ? TC.pct(o.value) : '–'; }

  /* a long name ("Pomegranate") in a smaller size, so it stays in its slot
   * on a 390 px phone (two slots a row) */
  const fit = (text) => (String(text).length > 9 ? { 'font-size': '1.05rem' } : null);

  function board(v, s) {
    const b = v.board || { spaces: [], marker: 0 };
    /* --spaces: a table TV lays the whole board out on one row */
    const row = el('div', { class: 'reveal seasons', style: { '--spaces': String(b.spaces.length) } });
    b.spaces.forEach((space, i) => {
      const here = i === b.marker;
      const label = space === 'end' ? 'Final space' : name(s, space);
      row.append(TC.paint(el('div', { class: 'slot' + (here ? ' may' : '') },
        el('div', { class: 'who', text: i === 0 ? 'S (start)' : `space ${i}` }),
        el('div', { class: 'what', text: label, style: fit(label) }),
        here ? el('div', { class: 'piles', text: 'season marker' }) : null),
      SEASON_COLOUR[space] || null));
    });
    return row;
  }

  function market(v, s) {
    const slots = v.market_slots || v.market || [];
    const drawing = v.phase === 'draw' || v.phase === 'market';
    return el('div', { class: 'reveal' }, slots.map((chip) => (chip
      ? TC.paint(el('div', { class: 'slot' }, el('div', { class: 'what', text: name(s, chip), style: fit(name(s, chip)) })),
        FRUIT_COLOUR[chip] || null)
      : el('div', { class: 'slot muted' }, el('div', { class: 'what', text: '–' }),
        drawing ? el('div', { class: 'piles', text: 'draw from the bag' }) : null))));
  }

  function results(v, s) {
    const rows = (v.players || []).map((p) => {
      const b = p.breakdown || {};
      const piles = SEASONS.filter((x) => b.piles && b.piles[x]).map((x) =>
        `${name(s, x)}: ${fruitCounts(s, b.piles[x].chips).join(', ')} = ${b.piles[x].points}`);
      return el('div', { class: 'slot' },
        el('div', { class: 'who', text: p.name }),
        el('div', { class: 'what', text: TC.plural(p.score ?? 0, 'point') }),
        el('div', { class: 'piles', text: piles.join(' · ') || 'sold nothing' }),
        el('div', { class: 'piles', text: `${TC.plural(b.sold ?? 0, 'chip')} sold · ${TC.plural(b.deductions ?? 0, 'deduction')}` }));
    });
    return el('div', { class: 'reveal' }, rows);
  }

  /* a section heading with room above it (h2 has no top margin in a card;
   * set through the CSSOM: the page's CSP refuses style attributes) */
  const head = (text, first) => el('h2', { text, style: first ? null : { 'margin-top': '18px' } });

  TC.panels.tropichaos = {
    render(container, v, s) {
      /* the view's status is the banner's second line: not repeated here */
      container.append(head(`Season board: ${name(s, v.season)}`, true));
      for (const line of v.news || []) container.append(el('p', { class: 'muted small', text: line }));
      container.append(board(v, s));
      if (v.board && v.board.moves_left) {
        container.append(el('p', { class: 'muted small',
          text: `${TC.plural(v.board.moves_left, 'move')} of the marker to the final space` }));
      }

      if (v.finished) {          /* the Market and the bag no longer matter: the scores */
        container.append(head('Final scores'), results(v, s));
        return;
      }
      container.append(head(v.overstocked ? `Market: overstocked with ${name(s, v.overstocked)}` : 'Market'),
        market(v, s));

      const bag = v.bag || {};
      const next = (v.odds || {}).next_draw || {};
      const season = (v.odds || {}).next_draw_season;
      const stats = [[bag.chips, 'chips in the bag'], [bag.seasons, 'Season chips left']];
      if (season) stats.push([odds(season), 'odds the next chip is a Season chip', TC.meter(season.value)]);
      container.append(head('The bag'), TC.stats(stats));
      const fruitOdds = ['kiwi', 'mango', 'pomegranate'].filter((f) => next[f])
        .map((f) => `${name(s, f)} ${odds(next[f])}`);
      if (fruitOdds.length) {
        container.append(el('p', { class: 'muted small', text: `next chip: ${fruitOdds.join(' · ')}` }));
      }
      const unseen = fruitCounts(s, bag.unseen_fruits);
      if (unseen.length && !v.finished && v.phase !== 'reveal') {
        const hidden = bag.hidden_in_hands ? ` (${bag.hidden_in_hands} of them may be a hidden starting chip)` : '';
        container.append(el('p', { class: 'muted small', text: `fruit not seen yet: ${unseen.join(', ')}${hidden}` }));
      }

      const down = v.face_down_piles || [];
      if (down.length) {
        container.append(head('Piles still face down'),
          TC.chips(down.map((p) => `${p.player}: ${name(s, p.season)}`)));
      }
    },

    extras(vp, s) {
      const out = [];
      const sold = SEASONS.filter((x) => vp.sold && vp.sold[x])
        .map((x) => `${vp.sold[x]} ${TC.cardName(s, x)}`);
      out.push(sold.length ? `sold ${sold.join(', ')}` : 'nothing sold');
      if (vp.deductions) out.push(TC.plural(vp.deductions, 'deduction'));
      if (vp.must_sell) out.push('must Sell');
      if (vp.starting_chip) out.push('starting chip');
      if (vp.season_moves_before_turn) {
        out.push(`season moves before their turn: ${TC.pct(vp.season_moves_before_turn.value)}`);
      }
      return out;
    },

    /* A player's own page (the private panel): `pv` is the game's
     * private_view for that player. */
    private(container, pv, s) {
      const hand = pv.exact ? (pv.chips || []).map((c) => name(s, c))
        : [...(pv.known_chips || []).map((c) => name(s, c)), ...Array(pv.unknown_chips || 0).fill('?')];
      container.append(el('h2', { text: 'Your chip stand' }),
        hand.length ? TC.chips(hand) : el('p', { class: 'muted', text: 'empty' }));
      /* the number alone in the big figure, the words under it: "0 points"
       * in three boxes a row overflowed a 390 px phone */
      const worth = (w) => (w.points != null ? String(w.points) : `${w.min}–${w.max}`);
      const pts = (w) => (w.points === 1 ? 'point' : 'points');
      const rows = [];
      if (pv.now) rows.push([worth(pv.now), `${pts(pv.now)} if sold now (${name(s, pv.now.season)})`]);
      for (const w of pv.coming || []) rows.push([worth(w), `${pts(w)} in ${name(s, w.season)}`]);
      if (rows.length) container.append(TC.stats(rows));
      const sales = (pv.sales || []).map((x) => `${name(s, x.season)}: ${x.chips
        ? x.chips.map((c) => name(s, c)).join(', ') + ` = ${x.points}` : TC.plural(x.count, 'chip')}`);
      if (sales.length) container.append(el('h2', { text: 'Your sales' }), TC.chips(sales));
      if (pv.deductions) container.append(el('p', { class: 'muted small', text: TC.plural(pv.deductions, 'deduction chip') }));
    },

    count(vp) {
      if (vp.score != null) return [vp.score, 'points'];
      return [vp.hand ?? 0, vp.hand === 1 ? 'chip in hand' : 'chips in hand'];
    },

    eventColour(e) {
      const chip = e.chip || (Array.isArray(e.give) ? e.give[0] : null);
      if (chip === 'season') return 'grey';
      return FRUIT_COLOUR[chip] || (e.type === 'reveal' ? SEASON_COLOUR[e.season] : null) || null;
    },
  };
}());
