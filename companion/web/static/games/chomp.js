/* Chomp!'s panel (the panel API is described at the top of js/render.js):
 * the round, every player's turned-over card (who may chomp is outlined),
 * the last round's outcome, piles and discards. */
(function () {
  'use strict';
  const TC = window.TC;
  const el = TC.el;

  function lastRound(last) {
    const bad = (last.bad_chomps || []).length ? ` · Bad Chomp: ${last.bad_chomps.join(', ')}` : '';
    const how = last.winner ? `${last.winner} took ${last.took ? TC.plural(last.took, 'card') : 'the cards'}`
      : (last.tied || []).length ? `tie: ${last.tied.join(', ')}` : String(last.result || '').replace(/-/g, ' ');
    return `Last round (${last.round}): ${how}${bad}`;
  }

  TC.panels.chomp = {
    render(container, v, s) {
      const col = TC.colours(s);
      const may = new Set(v.may_chomp || []);          /* (the banner shows v.status) */
      const revealed = v.revealed || {};
      const last = !Object.keys(revealed).length && v.last_round && v.last_round.cards ? v.last_round : null;
      const shown = last ? last.cards : revealed;
      container.append(el('h2', { text: v.round ? `Round ${v.round}` : 'Chomp!' }));
      if (last) container.append(el('p', { class: 'muted small', text: lastRound(last) }));
      container.append(el('div', { class: 'reveal' + (last ? ' last' : '') }, (v.players || []).map((p) => TC.paint(el('div', {
        class: 'slot' + (may.has(p.name) || (last && last.winner === p.name) ? ' may' : ''), 'data-player': p.name,
      }, el('div', { class: 'who', text: p.name }),
        el('div', { class: 'what', text: TC.own(shown, p.name) ? TC.cardName(s, TC.own(shown, p.name)) : (p.eliminated ? 'washed up' : '—') }),
        el('div', { class: 'piles', text: `pile ${p.pile} · discard ${p.discard}` })), col[p.name]))));
      if (v.set_aside_count) container.append(el('p', { class: 'muted small', text: `set aside: ${TC.plural(v.set_aside_count, 'card')}` }));
    },

    /* the end: the cards counted (pile, discard pile, the card on the table) */
    breakdown(vp, s) {
      if (vp.eliminated) return [`washed up in round ${vp.eliminated_round}`];
      const out = [`pile ${vp.pile}`, `discard pile ${vp.discard}`];
      if (vp.card) out.push(`on the table: ${TC.cardName(s, vp.card)}`);
      out.push(`= ${TC.plural(vp.cards, 'card')}`);
      return out;
    },

    tiebreak(tb, s) {
      return `${tb.players.join(' and ')} hold ${TC.plural(tb.score, 'card')} each: the player washed up later places higher`;
    },

    extras(vp, s) {
      const out = [`pile ${vp.pile}`, `discard ${vp.discard}`];
      if (vp.card) out.push(`shows ${TC.cardName(s, vp.card)}`);
      if (vp.eliminated) out.push('washed up');
      return out;
    },
  };
}());
