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

  /* --- a player's own page ----------------------------------------------- */
  const cardsOf = (s, n, pile) => (pile === 'ingredient' ? TC.plural(n, 'Ingredient card')
    : pile === 'action' ? TC.plural(n, 'Action card') : TC.plural(n, 'card'));

  /* the hand as chips, then what is due from this player in words */
  function privatePanel(box, pv, s) {
    const unknown = Object.values(pv.unknown || {}).reduce((a, n) => a + n, 0);
    const chips = (pv.hand || []).map((id) => TC.cardName(s, id)).concat(Array(unknown).fill('?'));
    box.append(el('h3', { class: 'hand-title', text: TC.t('Your hand · {cards}', { cards: TC.plural(chips.length, 'card') }) }),
      chips.length ? TC.chips(chips, 'card-chip') : el('p', { class: 'muted', text: TC.t('empty') }));
    if (unknown) box.append(el('p', { class: 'muted small', text: TC.t('? = {cards} you did not log', { cards: TC.plural(unknown, 'card') }) }));
    const rows = [];
    const row = (k, v) => rows.push(el('dt', { text: k }), el('dd', { text: v }));
    if (pv.stall) row(TC.t('Your stall'), TC.cardName(s, pv.stall));
    if (pv.draw_due) row(TC.t('Draw now'), cardsOf(s, pv.draw_due.count, pv.draw_due.pile));
    if (pv.inflation) row(TC.t('Price Inflation'), TC.t('your next dish takes {n}', { n: TC.plural(pv.inflation, 'extra ingredient') }));
    row(TC.t('You can cook'), (pv.cookable || []).length ? pv.cookable.map((d) => TC.cardName(s, d)).join(', ') : TC.t('nothing yet'));
    box.append(el('dl', { class: 'kv facts' }, rows));
  }

  /* The move composer: the action first (one button each), then only the
   * cards it needs, each card offered only while some legal move still
   * takes it; every picker says what it is for. The moves are the page's
   * own list (private_events), sent exactly as listed. */
  const pick = { key: null, cards: [], dismissed: null };
  const SECTIONS = ['Your draw', 'Your stall', 'Food Poisoning', 'Stop it', 'Hand limit', 'Cook', 'Action cards', 'Trade', 'End of turn'];
  /* each section's heading in the page's language (the keys stay English) */
  const SECTION_WORDS = {
    'Your draw': TC.t('Your draw'), 'Your stall': TC.t('Your stall'), 'Food Poisoning': 'Food Poisoning',
    'Stop it': TC.t('Stop it'), 'Hand limit': TC.t('Hand limit'), Cook: TC.t('Cook'), 'Action cards': TC.t('Action cards'),
    Trade: TC.t('Trade'), 'End of turn': TC.t('End of turn'),
  };

  function describeMove(e, s, view) {
    const nm = (c) => TC.cardName(s, c);
    const n = (e.cards || e.give || []).length;
    if (e.type === 'draw') return { key: `draw:${e.pile}`, section: 'Your draw', title: TC.t('Your draw: the {cards} you got', { cards: cardsOf(s, n, e.pile) }), open: true };
    if (e.type === 'choose_stall') return { key: `stall:${e.stall}`, section: 'Your stall', title: TC.t('Run the {stall}', { stall: nm(e.stall) }) };
    if (e.type === 'lose') return { key: 'lose', section: 'Food Poisoning', title: TC.t('Food Poisoning: the {cards} you give up', { cards: cardsOf(s, n) }), open: true };
    if (e.type === 'discard') return { key: 'discard', section: 'Hand limit', title: TC.t('Down to 10 cards: the {cards} you discard', { cards: cardsOf(s, n) }), open: true };
    if (e.type === 'stop') {
      const c = (s.view || {}).chain;
      return { key: 'stop', section: 'Stop it', title: c ? TC.t('Licence Suspended: stop “{what}”', { what: TC.tx(c.text) }) : TC.t('Play Licence Suspended') };
    }
    if (e.type === 'cook') {
      /* a fixed recipe has likely cards; "any 5" (Rojak) is the player's pick */
      const open = ((s.view || {}).open_dishes || []).find((d) => d && d.dish === e.dish);
      return { key: `cook:${e.dish}`, section: 'Cook', title: TC.t('Cook {dish}: the {cards} you cook it with', { dish: nm(e.dish), cards: cardsOf(s, n) }), verb: TC.t('Cook {dish}', { dish: nm(e.dish) }), recipe: !(open && open.any) };
    }
    if (e.type === 'play' && e.card === 'family-recipe') {
      return { key: `family:${e.dish}`, section: 'Action cards', title: TC.t('Family Recipe: the {cards} you cook {dish} with', { cards: cardsOf(s, n), dish: nm(e.dish) }), verb: TC.t('Family Recipe: cook {dish}', { dish: nm(e.dish) }) };
    }
    if (e.type === 'play' && e.card === 'copycat-stall') return { key: `copycat:${e.target}`, section: 'Action cards', title: TC.t('Copycat Stall: swap stalls with {name}', { name: e.target }) };
    if (e.type === 'play') return { key: `${e.card}:${e.target}`, section: 'Action cards', title: TC.t('{card} on {name}', { card: nm(e.card), name: e.target }) };
    if (e.type === 'trade') return { key: `trade:${e.take}`, section: 'Trade', title: TC.t('Trade for {card}: the 2 Ingredients you give', { card: nm(e.take) }), verb: TC.t('Trade for {card}', { card: nm(e.take) }) };
    if (e.type === 'end_turn') return { key: 'end', section: 'End of turn', title: TC.t('End my turn') };
    return { key: `other:${JSON.stringify(e)}`, section: 'End of turn', title: e.type };
  }

  const cardsIn = (e) => e.cards || e.give || [];
  const countOf = (list) => list.reduce((m, c) => m.set(c, (m.get(c) || 0) + 1), new Map());
  function covers(cards, chosen) {
    const have = countOf(cards);
    for (const [c, n] of countOf(chosen)) if ((have.get(c) || 0) < n) return false;
    return true;
  }
  const sameCards = (a, b) => a.length === b.length && covers(a, b);
  const wilds = (e) => cardsIn(e).filter((c) => c === 'wildcard').length;

  function compose(box, events, labels, api) {
    const s = api.snap;
    const groups = new Map();
    for (const e of events) {
      const d = describeMove(e, s, api.view);
      if (!groups.has(d.key)) groups.set(d.key, Object.assign(d, { events: [] }));
      groups.get(d.key).events.push(e);
    }
    /* a picker stays open while its move is still there; the cards chosen
     * stay while some move still takes them */
    if (pick.key && !groups.has(pick.key)) { pick.key = null; pick.cards = []; }
    /* a draw, a loss, a discard of several cards opens its picker at once
     * (one card: a button per card instead, one tap) */
    if (!groups.has(pick.dismissed)) pick.dismissed = null;
    const auto = [...groups.values()].find((g) => g.open && g.key !== pick.dismissed && g.events.length > 1 && cardsIn(g.events[0]).length > 1);
    if (!pick.key && auto) pick.key = auto.key;
    const g = pick.key && groups.get(pick.key);
    if (g && !g.events.some((e) => covers(cardsIn(e), pick.cards))) pick.cards = [];
    box.replaceChildren(g ? picker(g, s, api, groups.size > 1) : actionList(groups, s, api));
  }

  function moveButton(e, text, api, cls) {
    return el('button', { type: 'button', class: 'event' + (cls ? ' ' + cls : ''), 'data-event': JSON.stringify(e),
      onclick: () => api.send(e, () => { pick.key = null; pick.cards = []; }) }, text);
  }

  function actionList(groups, s, api) {
    const nm = (c) => TC.cardName(s, c);
    const by = new Map(SECTIONS.map((k) => [k, []]));
    for (const g of groups.values()) {
      const list = by.get(g.section) || by.get('End of turn');
      const open = () => { pick.key = g.key; pick.cards = []; api.redraw(); };
      if (g.open && cardsIn(g.events[0]).length === 1) {
        /* one card to name: a button per card, under what it is for */
        list.push(el('p', { class: 'muted small pick-for', text: g.title }),
          ...g.events.map((e) => moveButton(e, nm(cardsIn(e)[0]), api)));
      } else if (g.events.length === 1) {
        const e = g.events[0];
        const cards = cardsIn(e).map(nm).join(', ');
        const text = g.verb ? (e.type === 'trade' ? TC.t('{verb}: give {cards}', { verb: g.verb, cards })
          : cards ? TC.t('{verb} with {cards}', { verb: g.verb, cards }) : g.verb) : g.title;
        list.push(moveButton(e, text, api));
      } else if (g.recipe) {
        /* a fixed recipe: the likely cards (fewest Wildcards) in one tap, or others */
        const best = g.events.slice().sort((a, b) => wilds(a) - wilds(b))[0];
        list.push(moveButton(best, TC.t('{verb} with {cards}', { verb: g.verb, cards: cardsIn(best).map(nm).join(', ') }), api),
          el('button', { type: 'button', class: 'event other-cards', 'data-key': g.key, onclick: open }, TC.t('{verb} with other cards…', { verb: g.verb })));
      } else {
        list.push(el('button', { type: 'button', class: 'event open-pick', 'data-key': g.key, onclick: open }, `${g.verb || g.title}…`));
      }
    }
    const out = [];
    for (const [name, buttons] of by) {
      if (!buttons.length) continue;
      out.push(el('h3', { class: 'group', text: SECTION_WORDS[name] || name }), el('div', { class: 'grid-buttons mine-buttons' }, buttons));
    }
    return el('div', { class: 'composer' }, out);
  }

  function picker(g, s, api, back) {
    const order = Object.keys((s.view && s.view.cards) || {});
    const want = cardsIn(g.events[0]).length;
    const ids = [...new Set(g.events.flatMap(cardsIn))].sort((a, b) => order.indexOf(a) - order.indexOf(b));
    const chosen = pick.cards;
    const match = g.events.find((e) => sameCards(cardsIn(e), chosen));
    const set = (list) => { pick.cards = list; api.redraw(); };
    const buttons = ids.map((c) => {
      const next = chosen.concat([c]);
      const ok = chosen.length < want && g.events.some((e) => covers(cardsIn(e), next));
      const n = chosen.filter((x) => x === c).length;
      return el('button', { type: 'button', class: 'card-pick' + (n ? ' on' : ''), 'data-card': c, disabled: !ok,
        onclick: () => set(next) }, TC.cardName(s, c), n ? el('span', { class: 'n', text: `×${n}` }) : null);
    });
    const names = chosen.map((c) => TC.cardName(s, c));
    return el('div', { class: 'picker', 'data-group': g.key, 'data-want': String(want) },
      el('h3', { text: g.title }),
      el('p', { class: 'muted small', text: want === 1 ? TC.t('Tap the card, then log.') : TC.t('Tap the {n} cards, then log.', { n: want }) }),
      el('div', { class: 'card-grid' }, buttons),
      el('div', { class: 'row pick-row' },
        el('button', { type: 'button', class: 'primary log-pick', disabled: !match,
          onclick: () => { if (match) api.send(match, () => { pick.key = null; pick.cards = []; }); } },
        match ? TC.t('Log: {cards}', { cards: names.join(', ') }) : TC.t('{n} of {want} chosen', { n: chosen.length, want })),
        el('button', { type: 'button', class: 'clear-pick', disabled: !chosen.length, onclick: () => set([]) }, TC.t('Clear')),
        back ? el('button', { type: 'button', class: 'back-pick', onclick: () => { pick.dismissed = pick.key; pick.key = null; pick.cards = []; api.redraw(); } }, TC.t('Back')) : null));
  }

  TC.panels.hawker = {
    /* the console's headings over its groups of buttons, in the table's words */
    groupTitles: {
      choose_stall: TC.t('Stalls'), event_check: TC.t('Event on top of the Action pile?'),
      dish: TC.t('Dish turned up'), market: TC.t('Black Market card turned up'), draw: TC.t('Draws'),
      cook: TC.t('Cook'), play: TC.t('Action cards'), trade: TC.t('Trades'), stop: TC.t('Stop it'),
      resolve: TC.t('Nobody stops it'), reshuffle: TC.t('Reshuffle'), end_turn: TC.t('End of turn'),
      discard: TC.t('Hand limit: discard'), race: 'Food Poisoning', lose: TC.t('Food Poisoning: who loses'),
    },
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
      out.push(TC.t('{cards} in hand ({ingredients}, {actions})', { cards: TC.plural(vp.hand, 'card'), ingredients: TC.plural(vp.ingredients, 'Ingredient'), actions: TC.plural(vp.actions, 'Action card') }));
      if (vp.cooked && vp.cooked.length) {
        out.push(TC.t('cooked: ') + vp.cooked.map((d) => d.name + (d.bonus ? ' +1' : '')).join(', '));
      }
      if (vp.inflation) out.push(TC.t('Price Inflation: +{n} ingredient', { n: vp.inflation }));
      return out;
    },

    private: privatePanel,
    compose,

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
