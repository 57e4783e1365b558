/* Chomp!'s panel (the panel API is described at the top of js/render.js):
 * the round, every player's turned-over card (who may chomp is outlined),
 * the last round's outcome, piles and discards. */
(function () {
  'use strict';
  const TC = window.TC;
  const el = TC.el;

  function lastRound(last) {
    const bad = (last.bad_chomps || []).length ? ` · ${TC.t('Bad Chomp: {names}', { names: last.bad_chomps.join(', ') })}` : '';
    const how = last.winner ? TC.t('{name} took {cards}', { name: last.winner, cards: last.took ? TC.plural(last.took, 'card') : TC.t('the cards') })
      : (last.tied || []).length ? TC.t('tie: {names}', { names: last.tied.join(', ') }) : TC.tx(String(last.result || '').replace(/-/g, ' '));
    return TC.t('Last round ({round}): {how}', { round: last.round, how }) + bad;
  }

  TC.panels.chomp = {
    render(container, v, s) {
      const col = TC.colours(s);
      const may = new Set(v.may_chomp || []);          /* (the banner shows v.status) */
      const revealed = v.revealed || {};
      const last = !Object.keys(revealed).length && v.last_round && v.last_round.cards ? v.last_round : null;
      const shown = last ? last.cards : revealed;
      container.append(el('h2', { text: v.round ? TC.t('Round {n}', { n: v.round }) : 'Chomp!' }));
      if (last) container.append(el('p', { class: 'muted small', text: lastRound(last) }));
      container.append(el('div', { class: 'reveal' + (last ? ' last' : '') }, (v.players || []).map((p) => TC.paint(el('div', {
        class: 'slot' + (may.has(p.name) || (last && last.winner === p.name) ? ' may' : ''), 'data-player': p.name,
      }, el('div', { class: 'who', text: p.name }),
        el('div', { class: 'what', text: TC.own(shown, p.name) ? TC.cardName(s, TC.own(shown, p.name)) : (p.eliminated ? TC.t('washed up') : '—') }),
        el('div', { class: 'piles', text: TC.t('pile {pile} · discard {discard}', { pile: p.pile, discard: p.discard }) })), col[p.name]))));
      if (v.set_aside_count) container.append(el('p', { class: 'muted small', text: TC.t('set aside: {cards}', { cards: TC.plural(v.set_aside_count, 'card') }) }));
    },

    /* the end: the cards counted (pile, discard pile, the card on the table) */
    breakdown(vp, s) {
      if (vp.eliminated) return [TC.t('washed up in round {n}', { n: vp.eliminated_round })];
      const out = [TC.t('pile {n}', { n: vp.pile }), TC.t('discard pile {n}', { n: vp.discard })];
      if (vp.card) out.push(TC.t('on the table: {card}', { card: TC.cardName(s, vp.card) }));
      out.push(`= ${TC.plural(vp.cards, 'card')}`);
      return out;
    },

    tiebreak(tb, s) {
      return TC.t('{names} hold {cards} each: the player washed up later places higher', { names: tb.players.join(TC.t(' and ')), cards: TC.plural(tb.score, 'card') });
    },

    extras(vp, s) {
      const out = [TC.t('pile {n}', { n: vp.pile }), TC.t('discard {n}', { n: vp.discard })];
      if (vp.card) out.push(TC.t('shows {card}', { card: TC.cardName(s, vp.card) }));
      if (vp.eliminated) out.push(TC.t('washed up'));
      return out;
    },
  };
}());
