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

  /* --- a player's own page ----------------------------------------------- */
  const PILE = { ingredient: 'Ingredient', action: 'Action' };
  const cardsOf = (s, n, pile) => `${n} ${pile ? PILE[pile] + ' ' : ''}card${n === 1 ? '' : 's'}`;

  /* the hand as chips, then what is due from this player in words */
  function privatePanel(box, pv, s) {
    const unknown = Object.values(pv.unknown || {}).reduce((a, n) => a + n, 0);
    const chips = (pv.hand || []).map((id) => TC.cardName(s, id)).concat(Array(unknown).fill('?'));
    box.append(el('h3', { class: 'hand-title', text: `Your hand · ${TC.plural(chips.length, 'card')}` }),
      chips.length ? TC.chips(chips, 'card-chip') : el('p', { class: 'muted', text: 'empty' }));
    if (unknown) box.append(el('p', { class: 'muted small', text: `? = ${TC.plural(unknown, 'card')} you did not log` }));
    const rows = [];
    const row = (k, v) => rows.push(el('dt', { text: k }), el('dd', { text: v }));
    if (pv.stall) row('Your stall', TC.cardName(s, pv.stall));
    if (pv.draw_due) row('Draw now', cardsOf(s, pv.draw_due.count, pv.draw_due.pile));
    if (pv.inflation) row('Price Inflation', `your next dish takes ${TC.plural(pv.inflation, 'extra ingredient')}`);
    row('You can cook', (pv.cookable || []).length ? pv.cookable.map((d) => TC.cardName(s, d)).join(', ') : 'nothing yet');
    box.append(el('dl', { class: 'kv facts' }, rows));
  }

  /* The move composer: the action first (one button each), then only the
   * cards it needs, each card offered only while some legal move still
   * takes it; every picker says what it is for. The moves are the page's
   * own list (private_events), sent exactly as listed. */
  const pick = { key: null, cards: [], dismissed: null };
  const SECTIONS = ['Your draw', 'Your stall', 'Food Poisoning', 'Stop it', 'Hand limit', 'Cook', 'Action cards', 'Trade', 'End of turn'];

  function describeMove(e, s, view) {
    const nm = (c) => TC.cardName(s, c);
    const n = (e.cards || e.give || []).length;
    if (e.type === 'draw') return { key: `draw:${e.pile}`, section: 'Your draw', title: `Your draw: the ${cardsOf(s, n, e.pile)} you got`, open: true };
    if (e.type === 'choose_stall') return { key: `stall:${e.stall}`, section: 'Your stall', title: `Run the ${nm(e.stall)}` };
    if (e.type === 'lose') return { key: 'lose', section: 'Food Poisoning', title: `Food Poisoning: the ${cardsOf(s, n)} you give up`, open: true };
    if (e.type === 'discard') return { key: 'discard', section: 'Hand limit', title: `Down to 10 cards: the ${cardsOf(s, n)} you discard`, open: true };
    if (e.type === 'stop') {
      const c = (s.view || {}).chain;
      return { key: 'stop', section: 'Stop it', title: c ? `Licence Suspended: stop “${c.text}”` : 'Play Licence Suspended' };
    }
    if (e.type === 'cook') {
      /* a fixed recipe has likely cards; "any 5" (Rojak) is the player's pick */
      const open = ((s.view || {}).open_dishes || []).find((d) => d && d.dish === e.dish);
      return { key: `cook:${e.dish}`, section: 'Cook', title: `Cook ${nm(e.dish)}: the ${cardsOf(s, n)} you cook it with`, verb: `Cook ${nm(e.dish)}`, recipe: !(open && open.any) };
    }
    if (e.type === 'play' && e.card === 'family-recipe') {
      return { key: `family:${e.dish}`, section: 'Action cards', title: `Family Recipe: the ${cardsOf(s, n)} you cook ${nm(e.dish)} with`, verb: `Family Recipe: cook ${nm(e.dish)}` };
    }
    if (e.type === 'play' && e.card === 'copycat-stall') return { key: `copycat:${e.target}`, section: 'Action cards', title: `Copycat Stall: swap stalls with ${e.target}` };
    if (e.type === 'play') return { key: `${e.card}:${e.target}`, section: 'Action cards', title: `${nm(e.card)} on ${e.target}` };
    if (e.type === 'trade') return { key: `trade:${e.take}`, section: 'Trade', title: `Trade for ${nm(e.take)}: the 2 Ingredients you give`, verb: `Trade for ${nm(e.take)}` };
    if (e.type === 'end_turn') return { key: 'end', section: 'End of turn', title: 'End my turn' };
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
        const with_ = cardsIn(e).length ? ` with ${cardsIn(e).map(nm).join(', ')}` : '';
        const text = g.verb ? (e.type === 'trade' ? `${g.verb}: give ${cardsIn(e).map(nm).join(', ')}` : `${g.verb}${with_}`) : g.title;
        list.push(moveButton(e, text, api));
      } else if (g.recipe) {
        /* a fixed recipe: the likely cards (fewest Wildcards) in one tap, or others */
        const best = g.events.slice().sort((a, b) => wilds(a) - wilds(b))[0];
        list.push(moveButton(best, `${g.verb} with ${cardsIn(best).map(nm).join(', ')}`, api),
          el('button', { type: 'button', class: 'event other-cards', 'data-key': g.key, onclick: open }, `${g.verb} with other cards…`));
      } else {
        list.push(el('button', { type: 'button', class: 'event open-pick', 'data-key': g.key, onclick: open }, `${g.verb || g.title}…`));
      }
    }
    const out = [];
    for (const [name, buttons] of by) {
      if (!buttons.length) continue;
      out.push(el('h3', { class: 'group', text: name }), el('div', { class: 'grid-buttons mine-buttons' }, buttons));
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
      el('p', { class: 'muted small', text: `Tap ${want === 1 ? 'the card' : `the ${want} cards`}, then log.` }),
      el('div', { class: 'card-grid' }, buttons),
      el('div', { class: 'row pick-row' },
        el('button', { type: 'button', class: 'primary log-pick', disabled: !match,
          onclick: () => { if (match) api.send(match, () => { pick.key = null; pick.cards = []; }); } },
        match ? `Log: ${names.join(', ')}` : `${chosen.length} of ${want} chosen`),
        el('button', { type: 'button', class: 'clear-pick', disabled: !chosen.length, onclick: () => set([]) }, 'Clear'),
        back ? el('button', { type: 'button', class: 'back-pick', onclick: () => { pick.dismissed = pick.key; pick.key = null; pick.cards = []; api.redraw(); } }, 'Back') : null));
  }

  TC.panels.hawker = {
    /* the console's headings over its groups of buttons, in the table's words */
    groupTitles: {
      choose_stall: 'Stalls', event_check: 'Event on top of the Action pile?',
      dish: 'Dish turned up', market: 'Black Market card turned up', draw: 'Draws',
      cook: 'Cook', play: 'Action cards', trade: 'Trades', stop: 'Stop it',
      resolve: 'Nobody stops it', reshuffle: 'Reshuffle', end_turn: 'End of turn',
      discard: 'Hand limit: discard', race: 'Food Poisoning', lose: 'Food Poisoning: who loses'
    },
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
      out.push(`${TC.plural(vp.hand, 'card')} in hand (${TC.plural(vp.ingredients, 'Ingredient')}, ${TC.plural(vp.actions, 'Action card')})`);
      if (vp.cooked && vp.cooked.length) {
        out.push('cooked: ' + vp.cooked.map((d) => d.name + (d.bonus ? ' +1' : '')).join(', '));
      }
      if (vp.inflation) out.push(`Price Inflation: +${vp.inflation} ingredient`);
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
