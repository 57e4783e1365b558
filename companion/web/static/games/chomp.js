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
        `${who}’s card`, el('span', { class: 'muted small', text: ` · ${done + 1} of ${n}` })), col);
      const grid = el('div', { class: 'grid-buttons cards', id: 'chomp-cards' }, CHAIN.map((k) => {
        const name = TC.cardName(s, k);
        const e = TC.own(mine, k);
        if (e) return button(e, name, `${who}: ${name}`);
        return TC.paint(el('button', { type: 'button', class: 'event', disabled: true,
          title: `${name} cannot be on top of ${who}’s pile`, text: name }), col);
      }));
      const others = waiting.filter((p) => p !== who);
      const pick = others.length ? el('p', { class: 'row chomp-who' },
        el('span', { class: 'muted small', text: 'Another player’s card first:' }),
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
    return [el('h3', { class: 'group', text: 'Who slapped in the Ink Out? (a Bad Chomp)' }),
      el('div', { class: 'grid-buttons cards', id: 'chomp-slaps' }, slaps.map((e) => {
        const p = (e.ineligible || [])[0];
        return button(e, p, `Bad Chomp: ${p} slapped in the Ink Out`);
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
