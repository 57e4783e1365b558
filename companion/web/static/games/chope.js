/* Chope!'s panel (the panel API is described at the top of js/render.js):
 * the Hawker centre (cards left, the odds that the next flip busts, what is
 * face up, what is up for grabs) and each player's tables and food. */
(function () {
  'use strict';
  const TC = window.TC;
  const el = TC.el;

  /* the food no Table seats (a Table holds one Main and at most one Side) */
  function unseated(vp) {
    const left = [...(vp.food || [])];
    for (const p of (vp.score_detail && vp.score_detail.plates) || []) {
      for (const c of [p.main, p.side]) {
        const i = c ? left.indexOf(c) : -1;
        if (i >= 0) left.splice(i, 1);
      }
    }
    return left;
  }
  /* "2 food not at a Table: 0 points for it" beside the score, with why */
  function unseatedWhy(vp, s) {
    const rules = (s.view && s.view.rules) || {};
    const n = unseated(vp).length;
    if (!n || rules.unmatched_food_scores) return null;
    return TC.t('{n} food scores 0 ({why})', { n, why: seatWhy(vp) });
  }
  function seatWhy(vp) {
    return !vp.table_count ? TC.t('not seated: no Table')
      : !vp.mains ? TC.t('not seated: a Table needs a Main') : TC.t('not seated: a Table seats one Main and one Side');
  }

  TC.panels.chope = {
    render(container, v, s) {
      const odds = v.bust_odds;
      const left = v.deck_left ? v.deck_left.count : null;
      container.append(el('h2', { text: TC.t('Hawker centre') }), TC.stats([
        [left, TC.t('cards left in the deck')],
        [odds ? TC.pct(odds.probability) : null, TC.t('odds the next flip busts'), odds ? TC.meter(odds.probability) : null],
        [v.flips_this_turn ?? 0, TC.t('flips this turn')],
      ]));
      if (odds) {
        container.append(el('p', { class: 'muted small',
          text: TC.t('{cards} of the {of} left would bust', { cards: TC.plural(odds.cards, 'card'), of: odds.of }) }));
      }
      const faceUp = v.face_up || [];
      container.append(el('h2', { text: TC.t('Face up') }), faceUp.length
        ? TC.chips(faceUp.map((c) => TC.cardName(s, c)))
        : el('p', { class: 'muted', text: TC.t('nothing face up') }));
      if (v.contested) container.append(el('p', { class: 'status', text: TC.t('Up for grabs: {card}', { card: TC.cardName(s, v.contested) }) }));
      const pend = v.pending;
      if (pend && pend.kind !== 'race') {
        container.append(el('p', { class: 'status', text: (pend.player ? `${pend.player}: ` : '') + TC.tx(pend.why || pend.kind) }));
      }
      if (v.discard) container.append(el('p', { class: 'muted small', text: TC.t('discarded: {n}', { n: v.discard.count }) }));
    },

    extras(vp, s) {
      const out = [TC.plural(vp.table_count, 'table'), TC.t('{n} Food ({mains} Main, {sides} Side)', { n: vp.food_count, mains: vp.mains, sides: vp.sides })];
      const why = unseatedWhy(vp, s);
      if (why) out.push(why);
      if (vp.mynah_debt) out.push(TC.t('owes {n}', { n: vp.mynah_debt }));
      if (vp.favourite_dealt) out.push(TC.t('★ favourite dealt'));
      if (vp.favourite) out.push(`★ ${TC.cardName(s, 'food:' + vp.favourite)}`);
      return out;
    },

    /* the end: each score as the rulebook counts it (the view's score_detail) */
    breakdown(vp, s) {
      const d = vp.score_detail;
      if (!d) return [];
      const name = (c) => TC.cardName(s, c);
      const out = (d.plates || []).map((p) => `${name(p.table)}: ${name(p.main)}${p.side ? ' + ' + name(p.side) : ''} (+${p.side ? 2 : 1})`);
      const rules = (s.view && s.view.rules) || {};
      if (rules.unmatched_food_scores && d.food > d.food_seated) out.push(TC.t('+{n} unmatched Food', { n: d.food - d.food_seated }));
      const loose = unseated(vp);
      if (loose.length && !rules.unmatched_food_scores) {
        const counts = new Map();
        for (const c of loose) counts.set(c, (counts.get(c) || 0) + 1);
        const cards = [...counts].map(([c, n]) => name(c) + (n > 1 ? ` ×${n}` : ''));
        out.push(`${cards.join(', ')}: +0 (${seatWhy(vp)})`);
      } else if ((!d.plates || !d.plates.length) && vp.food_count) out.push(TC.t('Food: +{n} (no Main on a Table)', { n: d.food }));
      if (!vp.food_count && !vp.table_count) out.push(TC.t('no cards'));
      if (d.own_colour) out.push(`+${TC.plural(d.own_colour, 'own-colour Table')}`);
      if (d.leftover_tables) out.push(TC.t('{n} for {tables}', { n: d.leftover_tables, tables: TC.plural(-d.leftover_tables, 'unused Table') }));
      if (d.favourite != null) out.push(`+${d.favourite} ${TC.t('Favourite')}${vp.favourite ? ' (' + TC.cardName(s, 'food:' + vp.favourite) + ')' : ''}`);
      return out;
    },

    /* named on the end screen even when nobody tied */
    tiebreakRule() {
      return TC.t('Ties go to the player with the most Table cards; still tied: a shared place.');
    },

    /* "Most points; ties go to the most Table cards" */
    tiebreak(tb, s) {
      const vps = tb.players.map((n) => TC.viewPlayer(s, n) || { name: n, table_count: 0 });
      const counts = vps.map((v) => `${v.name} ${v.table_count}`).join(', ');
      return TC.t('{names} tie on {score} points: the most Table cards wins the tie ({counts})', { names: tb.players.join(TC.t(' and ')), score: tb.score, counts });
    },

    /* what the last event changed at the table */
    news(prev, s) {
      const a = prev.view || {}, b = s.view || {};
      const name = (c) => TC.cardName(s, c);
      const was = (a.discard && a.discard.cards) || {}, now = (b.discard && b.discard.cards) || {};
      const gone = [];
      for (const [c, n] of Object.entries(now)) for (let i = (was[c] || 0); i < n; i++) gone.push(c);
      const pend = b.pending;
      if (pend && pend.kind === 'keep' && !(a.pending && a.pending.kind === 'keep')) {
        return TC.t('Bust! {name} turned a second {card}: keep one face-up Food, the rest are lost', { name: pend.player, card: name((b.face_up || []).slice(-1)[0]) });
      }
      const food = gone.filter((c) => c.startsWith('food:'));
      const tables = gone.filter((c) => c.startsWith('table:'));
      if (a.pending && a.pending.kind === 'keep' && !(pend && pend.kind === 'keep')) {
        return TC.t('Bust! {name} keeps one; {cards} lost', { name: a.pending.player, cards: TC.plural(food.length, 'card') }) + (food.length ? ': ' + food.map(name).join(', ') : '');
      }
      for (const vp of b.players || []) {
        const old = (a.players || []).find((p) => p.name === vp.name) || {};
        if ((vp.mynah_debt || 0) > (old.mynah_debt || 0)) return TC.t('Siam! {name} has nothing to lose: the Mynah waits in their scoring area', { name: vp.name });
        if ((vp.mynah_debt || 0) < (old.mynah_debt || 0)) return TC.t('{name} pays the Mynah: {cards} lost', { name: vp.name, cards: food.concat(tables).map(name).join(', ') || TC.t('a card') });
      }
      if (a.pending && a.pending.kind === 'lose' && food.concat(tables).length) {
        return TC.t('Siam! {name} loses {cards}', { name: a.pending.player, cards: food.concat(tables).map(name).join(', ') });
      }
      /* a card lost with no choice asked (a forced Siam! loss: one card
       * to lose) is that player's loss, not a Table nobody choped */
      const losses = [];
      for (const vp of b.players || []) {
        const old = (a.players || []).find((p) => p.name === vp.name);
        if (!old) continue;
        const left = [...(vp.tables || []), ...(vp.food || [])];
        const lost = [];
        for (const c of [...(old.tables || []), ...(old.food || [])]) {
          const i = left.indexOf(c);
          if (i >= 0) left.splice(i, 1); else lost.push(c);
        }
        if (lost.length) losses.push(TC.t('{name} loses {cards}', { name: vp.name, cards: lost.map(name).join(', ') }));
      }
      if (losses.length) return `Siam! ${losses.join('; ')}`;
      const race = s.race && s.race.verdict;
      if (tables.length && a.contested === tables[0]) {
        return race && (race.tied || []).length ? TC.t('{card} discarded: a tie nobody can tell apart', { card: name(tables[0]) })
          : TC.t('{card} discarded: nobody choped it', { card: name(tables[0]) });
      }
      return null;
    },

    /* A player's own page (the private panel): their My Favourite card in
     * the Favourite Food variant, and what it is worth now (`pv` is the
     * game's private_view: favourite, favourite_name, favourite_points). */
    private(container, pv, s) {
      if (!('favourite' in pv)) return;
      const name = pv.favourite_name || (pv.favourite ? TC.cardName(s, 'food:' + pv.favourite) : TC.t('not logged yet'));
      container.append(el('div', { class: 'favourite' },
        el('div', { class: 'k', text: TC.t('Your My Favourite card') }),
        el('div', { class: 'v', text: name }),
        pv.favourite ? el('div', { class: 'k', text: TC.t('worth {points} now', { points: TC.plural(pv.favourite_points || 0, 'point') }) }) : null));
    },

    /* a Table card's button wears the Table's colour */
    eventColour(e) {
      return typeof e.card === 'string' && e.card.startsWith('table:') ? e.card.slice(6) : null;
    },
  };
}());
