/* Chope!'s panel (the panel API is described at the top of js/render.js):
 * the Hawker centre (cards left, the odds that the next flip busts, what is
 * face up, what is up for grabs) and each player's tables and food. */
(function () {
  'use strict';
  const TC = window.TC;
  const el = TC.el;

  TC.panels.chope = {
    render(container, v, s) {
      const odds = v.bust_odds;
      const left = v.deck_left ? v.deck_left.count : null;
      container.append(el('h2', { text: 'Hawker centre' }), TC.stats([
        [left, 'cards left in the deck'],
        [odds ? TC.pct(odds.probability) : null, 'odds the next flip busts', odds ? TC.meter(odds.probability) : null],
        [v.flips_this_turn ?? 0, 'flips this turn'],
      ]));
      if (odds) {
        container.append(el('p', { class: 'muted small',
          text: `${TC.plural(odds.cards, 'card')} of the ${odds.of} left would bust` }));
      }
      const faceUp = v.face_up || [];
      container.append(el('h2', { text: 'Face up' }), faceUp.length
        ? TC.chips(faceUp.map((c) => TC.cardName(s, c)))
        : el('p', { class: 'muted', text: 'nothing face up' }));
      if (v.contested) container.append(el('p', { class: 'status', text: `Up for grabs: ${TC.cardName(s, v.contested)}` }));
      const pend = v.pending;
      if (pend && pend.kind !== 'race') {
        container.append(el('p', { class: 'status', text: (pend.player ? `${pend.player}: ` : '') + (pend.why || pend.kind) }));
      }
      if (v.discard) container.append(el('p', { class: 'muted small', text: `discarded: ${v.discard.count}` }));
    },

    extras(vp, s) {
      const out = [TC.plural(vp.table_count, 'table'), `${vp.food_count} food (${vp.mains} main, ${vp.sides} side)`];
      if (vp.mynah_debt) out.push(`owes ${vp.mynah_debt}`);
      if (vp.favourite_dealt) out.push('★ favourite dealt');
      if (vp.favourite) out.push(`★ ${TC.cardName(s, 'food:' + vp.favourite)}`);
      return out;
    },

    /* a Table card's button wears the Table's colour */
    eventColour(e) {
      return typeof e.card === 'string' && e.card.startsWith('table:') ? e.card.slice(6) : null;
    },
  };
}());
