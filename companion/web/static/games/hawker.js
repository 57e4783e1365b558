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
    if (!d) return el('div', { class: 'slot muted', text: TC.t('empty') });
    const recipe = d.any ? TC.t('any {n} ingredients', { n: d.any }) : names(s, d.ingredients).join(' · ');
    const stall = d.stall ? `${TC.cardName(s, d.stall)}` : TC.t('no stall');
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
      container.append(head(TC.t('On the table'), true));
      if (v.pending && v.pending.text) container.append(el('p', { class: 'status', text: TC.cap(TC.tx(v.pending.text)) }));
      if (v.chain) {
        const c = v.chain;
        const stops = c.stops && c.stops.length ? ` · ${TC.t('Licence Suspended by {names}', { names: c.stops.join(', ') })}` : '';
        const cards = c.cards && c.cards.length ? ` (${names(s, c.cards).join(', ')})` : '';
        container.append(el('p', { class: 'status', text: TC.t('In play: {what}', { what: TC.tx(c.text) }) + cards + stops }));
      }
      if (v.loss) {
        container.append(el('p', { class: 'status', text: TC.t('{name} let go first: gives up {cards}', { name: v.loss.player, cards: TC.plural(v.loss.count, 'card') }) }));
      }
      container.append(head(TC.t('Open dishes')),
        el('div', { class: 'reveal' }, (v.open_dishes || []).map((d) => dishCard(s, d))));
      const market = v.black_market || { count: 0, cards: {} };
      container.append(head(TC.t('Black Market ({n})', { n: market.count })), market.count
        ? TC.chips(countsText(s, market.cards))
        : el('p', { class: 'muted', text: TC.t('empty') }));
      container.append(head(TC.t('Piles')), TC.stats([
        [piles.ingredient, TC.t('Ingredients')],
        [piles.action, TC.t('Action cards')],
        [odds ? TC.pct(odds.chance) : '–', TC.t('odds the next Action card is an Event'), odds ? TC.meter(odds.chance) : null],
        [piles.dish, TC.t('Dishes')],
      ]));
      const small = [];
      if (odds) small.push(TC.t('{events} in {cards}', { events: TC.plural(odds.events_left, 'Event'), cards: TC.plural(odds.cards_left, 'card') }));
      small.push(TC.t('Action discard: {n}', { n: piles.action_discard ?? 0 }));
      if (piles.out_of_play) small.push(TC.t('out of the game: {n}', { n: piles.out_of_play }));
      container.append(el('p', { class: 'muted small', text: small.join(' · ') }));
      if (v.last_action && v.last_action.stopped) {
        container.append(el('p', { class: 'muted small', text: TC.t('{name}’s last action was stopped', { name: v.last_action.player }) }));
      }
      if (v.finished) {
        container.append(el('p', { class: 'status', text: v.winner
          ? TC.t('{name} reaches {target} points and wins', { name: v.winner, target: v.target })
          : TC.t('No dish left to cook: most points wins') }));
      }
    },

    extras(vp, s) {
      const out = [];
      if (vp.stall_name) out.push(vp.stall_name);
      out.push(TC.t('{score}/{target} ({n} to go)', { score: vp.score, target: vp.target, n: vp.to_target }));
      out.push(TC.t('{cards} in hand ({ingredients} ingr., {actions} action)', { cards: TC.plural(vp.hand, 'card'), ingredients: vp.ingredients, actions: vp.actions }));
      if (vp.cooked && vp.cooked.length) {
        out.push(TC.t('cooked: ') + vp.cooked.map((d) => d.name + (d.bonus ? ' +1' : '')).join(', '));
      }
      if (vp.inflation) out.push(TC.t('Price Inflation: +{n} ingredient', { n: vp.inflation }));
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
