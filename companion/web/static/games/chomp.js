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

  /* The host console's buttons while cards are turned over: one player's
   * card at a time (seating order, or another waiting player's on a tap
   * of their name), every creature in one place in food-chain order (the
   * ones that cannot be on top of that pile greyed), so a round costs one
   * tap a card; the race starts by itself after the last. After an Ink Out,
   * a Bad Chomp for a player who slapped in it. */
  const CHAIN = ['shark', 'seal', 'big-fish', 'little-fish', 'shrimp', 'plankton', 'octopus', 'eel'];
  let picked = null;          /* the player whose card the grid logs, if not the first */

  function turnGrid(events, s, button) {
    const turns = events.filter((e) => e.type === 'turn');
    const waiting = [...new Set(turns.map((e) => e.player))];
    const v = s.host_view || s.view || {};
    const box = el('div', { class: 'chomp-turns' });
    const draw = () => {
      const who = waiting.includes(picked) ? picked : waiting[0];
      const mine = TC.map();
      for (const e of turns) if (e.player === who) mine[e.card] = e;
      const n = (v.players || []).filter((p) => !p.eliminated).length;
      const done = Object.keys(v.revealed || {}).length;
      const col = TC.colours(s)[who];
      const head = TC.paint(el('h3', { class: 'group whose', id: 'chomp-whose' },
        TC.t('{name}’s card', { name: who }), el('span', { class: 'muted small', text: ' · ' + TC.t('{n} of {total}', { n: done + 1, total: n }) })), col);
      const grid = el('div', { class: 'grid-buttons cards', id: 'chomp-cards' }, CHAIN.map((k) => {
        const name = TC.cardName(s, k);
        const e = TC.own(mine, k);
        if (e) return button(e, name, `${who}: ${name}`);
        return TC.paint(el('button', { type: 'button', class: 'event', disabled: true,
          title: TC.t('{card} cannot be on top of {name}’s pile', { card: name, name: who }), text: name }), col);
      }));
      const others = waiting.filter((p) => p !== who);
      const pick = others.length ? el('p', { class: 'row chomp-who' },
        el('span', { class: 'muted small', text: TC.t('Another player’s card first:') }),
        others.map((p) => TC.paint(el('button', { type: 'button', class: 'small', 'data-player': p,
          onclick: () => { picked = p; draw(); } }, p), TC.colours(s)[p]))) : null;
      box.replaceChildren(head, grid, ...(pick ? [pick] : []));
    };
    draw();
    return box;
  }

  /* "Did anyone slap in the Ink Out?": the Ink Out's race, logged only if so */
  function inkOutSlaps(events, button) {
    const slaps = events.filter((e) => e.type === 'race' && e.reason === 'ink-out');
    if (!slaps.length) return [];
    return [el('h3', { class: 'group', text: TC.t('Who slapped in the Ink Out? (a Bad Chomp)') }),
      el('div', { class: 'grid-buttons cards', id: 'chomp-slaps' }, slaps.map((e) => {
        const p = (e.ineligible || [])[0];
        return button(e, p, TC.t('Bad Chomp: {name} slapped in the Ink Out', { name: p }));
      }))];
  }

  TC.panels.chomp = {
    /* the console's own buttons (see above); null: the generic ones (races) */
    legal(events, labels, s, button) {
      if (!events.some((e) => e.type === 'turn')) return null;
      return [turnGrid(events, s, button), ...inkOutSlaps(events, button)];
    },

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
