/* Hawker Wars' panel (the panel API is described at the top of js/render.js):
 * the open Dishes, the Black Market, the piles and the odds that the next
 * Action card is an Event, what is in play, and under each player their
 * stall, points to the target and hand size. A hand is never in the public
 * view: only its size is shown. Text only, through textContent. */
(function () {
  'use strict';
  const TC = window.TC;
  const el = TC.el;

  const STALL_COLOUR = { chinese: 'red', indian: 'orange', malay: 'green', international: 'blue' };

  function names(s, ids) {
    return (ids || []).map((c) => TC.cardName(s, c));
  }

  function countsText(s, counts) {
    return Object.entries(counts || {}).map(([c, n]) => (n > 1 ? `${n} × ${TC.cardName(s, c)}` : TC.cardName(s, c)));
  }

  function dishCard(s, d) {
    if (!d) return el('div', { class: 'slot muted', text: 'empty' });
    const recipe = d.any ? `any ${d.any} ingredients` : names(s, d.ingredients).join(' · ');
    const stall = d.stall ? `${TC.cardName(s, d.stall)}` : 'no stall';
    return TC.paint(el('div', { class: 'slot' },
      el('strong', { text: d.name }),
      el('div', { class: 'small', text: `${TC.plural(d.points, 'point')} · ${stall}` }),
      el('div', { class: 'small muted', text: recipe })), STALL_COLOUR[d.stall] || null);
  }

  /* a section heading with room above it (h2 has no top margin in a card;
   * set through the CSSOM: the page's CSP refuses style attributes) */
  const head = (text, first) => el('h2', { text, style: first ? null : { 'margin-top': '18px' } });

  TC.panels.hawker = {
    render(container, v, s) {
      const odds = v.event_odds;
      const piles = v.piles || {};
      container.append(head('On the table', true));
      if (v.pending && v.pending.text) container.append(el('p', { class: 'status', text: TC.cap(v.pending.text) }));
      if (v.chain) {
        const c = v.chain;
        const stops = c.stops && c.stops.length ? ` · Licence Suspended by ${c.stops.join(', ')}` : '';
        const cards = c.cards && c.cards.length ? ` (${names(s, c.cards).join(', ')})` : '';
        container.append(el('p', { class: 'status', text: `In play: ${c.text}${cards}${stops}` }));
      }
      if (v.loss) {
        container.append(el('p', { class: 'status', text: `${v.loss.player} let go first: gives up ${TC.plural(v.loss.count, 'card')}` }));
      }
      container.append(head('Open dishes'),
        el('div', { class: 'reveal' }, (v.open_dishes || []).map((d) => dishCard(s, d))));
      const market = v.black_market || { count: 0, cards: {} };
      container.append(head(`Black Market (${market.count})`), market.count
        ? TC.chips(countsText(s, market.cards))
        : el('p', { class: 'muted', text: 'empty' }));
      container.append(head('Piles'), TC.stats([
        [piles.ingredient, 'Ingredients'],
        [piles.action, 'Action cards'],
        [odds ? TC.pct(odds.chance) : '–', 'odds the next Action card is an Event', odds ? TC.meter(odds.chance) : null],
        [piles.dish, 'Dishes'],
      ]));
      const small = [];
      if (odds) small.push(`${TC.plural(odds.events_left, 'Event')} in ${TC.plural(odds.cards_left, 'card')}`);
      small.push(`Action discard: ${piles.action_discard ?? 0}`);
      if (piles.out_of_play) small.push(`out of the game: ${piles.out_of_play}`);
      container.append(el('p', { class: 'muted small', text: small.join(' · ') }));
      if (v.last_action && v.last_action.stopped) {
        container.append(el('p', { class: 'muted small', text: `${v.last_action.player}'s last action was stopped` }));
      }
      if (v.finished) {
        container.append(el('p', { class: 'status', text: v.winner
          ? `${v.winner} reaches ${v.target} points and wins`
          : 'No dish left to cook: most points wins' }));
      }
    },

    extras(vp, s) {
      const out = [];
      if (vp.stall_name) out.push(vp.stall_name);
      out.push(`${vp.score}/${vp.target} (${vp.to_target} to go)`);
      out.push(`${TC.plural(vp.hand, 'card')} in hand (${vp.ingredients} ingr., ${vp.actions} action)`);
      if (vp.cooked && vp.cooked.length) {
        out.push('cooked: ' + vp.cooked.map((d) => d.name + (d.bonus ? ' +1' : '')).join(', '));
      }
      if (vp.inflation) out.push(`Price Inflation: +${vp.inflation} ingredient`);
      return out;
    },

    eventColour(e, s) {
      if (e.type === 'choose_stall') return STALL_COLOUR[e.stall] || null;
      if ((e.type === 'cook' || e.type === 'dish') && (e.dish || e.card)) {
        const stall = { 'you-tiao': 'chinese', 'fish-head-curry': 'indian', 'nasi-lemak': 'malay', 'ma-la-xiang-guo': 'international' }[e.dish || e.card];
        return STALL_COLOUR[stall] || null;
      }
      return null;
    },
  };
}());
