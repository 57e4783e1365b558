/* The host console: the table as the scoreboard shows it, plus big buttons
 * for the legal next events only, undo/redo, races, virtual buzzers and a
 * new-game form. Every change goes through /api/host/... with the CSRF token;
 * the rules' refusals are shown as they come back. */
(function () {
  'use strict';
  const TC = window.TC;
  const el = TC.el;
  const $ = (id) => document.getElementById(id);
  const cfg = JSON.parse($('host-config').textContent);
  const raceEls = TC.raceEls(document);
  let hs = null;            // the host snapshot
  let games = null;         // /api/host/games

  /* --- talking to the server ------------------------------------------- */
  let toastTimer = null;
  function toast(text, ok) {
    const t = $('toast');
    t.replaceChildren(el('p', { class: ok ? 'ok' : 'error', role: 'alert', text }));
    t.hidden = false;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { t.hidden = true; }, ok ? 2000 : 6000);
  }

  async function act(url, body) {
    const res = await TC.post(url, body);
    if (res.status === 401) { location.reload(); return null; }
    if (!res.ok) {
      const d = res.data || {};
      toast((d.error || `error ${res.status}`) + (d.rule ? ` [${d.rule}]` : ''));
      if (res.status === 409) refresh();
      return null;
    }
    if (res.data && res.data.state) { hs = keep(res.data.state); render(); }
    return res.data;
  }

  function keep(next) { return Object.assign(next, { presses: (hs && hs.presses) || [] }); }

  let pending = null;
  function refresh() {
    if (pending) return pending;
    pending = fetch('/api/host/state', { credentials: 'same-origin' }).then((r) => {
      if (r.status === 401) { location.reload(); return null; }
      return r.json();
    }).then((s) => {
      if (!s) return;
      TC.syncClock(s.now_ns);
      hs = keep(s);
      render();
    }).catch(() => {}).finally(() => { pending = null; });
    return pending;
  }

  /* --- labels for events ------------------------------------------------ */
  function cap(s) { return s.charAt(0).toUpperCase() + s.slice(1); }
  function label(e, fallback) {
    if (e.type === 'race') {
      const r = TC.reasonName(e.reason);
      if (e.winner) return `${r} ${e.winner} wins`;
      if (e.loser) return `${r} ${e.loser} loses`;
      if (e.tied && e.tied.length) return `${r} tie: ${e.tied.join(', ')}`;
      return `${r} nobody`;
    }
    if (typeof e.card === 'string') {      // under a heading that names the type
      return `${e.player ? `${e.player}: ` : ''}${TC.cardName(hs, e.card)}`;
    }
    return fallback || e.type;
  }
  function colourOf(e) {
    const col = TC.colours(hs);
    if (e.player && col[e.player]) return col[e.player];
    if (e.winner && col[e.winner]) return col[e.winner];
    if (e.loser && col[e.loser]) return col[e.loser];
    if (typeof e.card === 'string' && e.card.startsWith('table:')) return e.card.slice(6);
    return null;
  }

  /* --- the legal next events -------------------------------------------- */
  const MAX_BUTTONS = 30;
  function logEvent(event) {
    return act('/api/host/event', { event, expected_version: hs.version });
  }

  function renderLegal() {
    const box = $('legal');
    const legal = hs.legal_events || [];
    const labels = hs.legal_labels || [];
    if (!hs.game) { box.replaceChildren(el('p', { class: 'muted', text: 'No game yet: start one below.' })); return; }
    if (!legal.length) {
      box.replaceChildren(el('p', { class: 'muted', text: hs.finished ? 'The game is over.' : 'Nothing to log now.' }));
      return;
    }
    const groups = new Map();
    legal.forEach((e, i) => {
      if (!groups.has(e.type)) groups.set(e.type, []);
      groups.get(e.type).push([e, labels[i]]);
    });
    const out = [];
    for (const [type, items] of groups) {
      out.push(el('h3', { class: 'group', text: cap(type) }));
      if (items.length <= MAX_BUTTONS) {
        const texts = items.map(([e, l]) => label(e, l));
        const dup = (t) => texts.filter((x) => x === t).length > 1;
        out.push(el('div', { class: 'grid-buttons' }, items.map(([e], i) => {
          /* two buttons saying the same: add what tells them apart */
          const extra = dup(texts[i]) ? Object.entries(e).filter(([k, v]) => k !== 'type' && typeof v !== 'object'
            && !texts[i].includes(String(v))).map(([, v]) => TC.cardName(hs, v)).join(' · ') : '';
          return TC.paint(el('button', {
            type: 'button', class: 'event', 'data-event': JSON.stringify(e), onclick: () => logEvent(e),
          }, extra ? `${texts[i]} · ${extra}` : texts[i]), colourOf(e));
        })));
      } else {
        out.push(builder(type, items.map(([e]) => e)));
      }
    }
    box.replaceChildren(...out);
  }

  /* Too many combinations for buttons (e.g. a Chomp! reveal: one card per
   * player): a select per field, offering only values some legal event has. */
  function builder(type, events) {
    const fields = new Map();     // "key" or "key.sub" -> Set of JSON values
    const add = (k, v) => { if (!fields.has(k)) fields.set(k, new Set()); fields.get(k).add(JSON.stringify(v)); };
    for (const e of events) {
      for (const [k, v] of Object.entries(e)) {
        if (k === 'type') continue;
        if (v && typeof v === 'object' && !Array.isArray(v)) for (const [k2, v2] of Object.entries(v)) add(`${k}.${k2}`, v2);
        else add(k, v);
      }
    }
    const selects = [];
    const form = el('form', { class: 'builder' });
    for (const [k, values] of fields) {
      const id = `b-${type}-${k}`.replace(/[^\w-]/g, '_');
      const sel = el('select', { id, 'data-field': k }, [...values].sort().map((j) => {
        const v = JSON.parse(j);
        return el('option', { value: j, text: typeof v === 'string' ? TC.cardName(hs, v) : j });
      }));
      selects.push(sel);
      const name = k.includes('.') ? k.split('.').slice(1).join('.') : k;
      form.append(el('label', { for: id, text: name }), sel);
    }
    form.append(el('p', {}, el('button', { type: 'submit', class: 'primary', text: `Log ${type}` })));
    form.addEventListener('submit', (ev) => {
      ev.preventDefault();
      const e = { type };
      for (const sel of selects) {
        const k = sel.dataset.field;
        const v = JSON.parse(sel.value);
        if (k.includes('.')) {
          const [a, ...rest] = k.split('.');
          e[a] = e[a] || {};
          e[a][rest.join('.')] = v;
        } else e[k] = v;
      }
      logEvent(e);
    });
    return form;
  }

  /* --- the rest of the console ----------------------------------------- */
  function renderRaceControls() {
    const req = hs.race_request;
    const race = hs.race;
    const phase = race ? race.phase : null;
    const canStart = !!req && (req.announced ? phase !== 'countdown' && phase !== 'live' : phase === 'interrupted');
    $('race-controls').hidden = !req;
    $('start-race').hidden = !canStart;
    $('start-race').textContent = req && !req.announced ? 'Re-run race' : 'Start race';
    $('cancel-race').hidden = !(phase === 'countdown' || phase === 'live' || phase === 'interrupted');
  }

  let buzzersFor = null;
  function renderBuzzers() {
    const key = JSON.stringify(TC.colours(hs));
    if (key === buzzersFor) return;
    buzzersFor = key;
    $('buzzers').replaceChildren(...TC.buzzers(hs.players, TC.colours(hs), '/api/host/press'));
  }

  function render() {
    if (!hs) return;
    document.body.dataset.version = String(hs.version ?? 0);
    $('title').textContent = hs.title ? `Host · ${hs.title}` : 'Host console';
    TC.renderBanner(hs, $('banner'));
    TC.renderRace(hs, hs.race, raceEls);
    raceEls.section.hidden = !hs.race && !hs.race_request;
    renderRaceControls();
    TC.renderBurst(hs, $('burst-card'), $('burst'));
    TC.renderFaults(hs, $('faults'));
    renderLegal();
    const undo = $('undo'), redo = $('redo');
    undo.disabled = !hs.undo;
    undo.textContent = hs.undo ? `Undo: ${hs.undo}` : 'Undo';
    redo.disabled = !hs.redo;
    redo.textContent = hs.redo ? `Redo: ${hs.redo}` : 'Redo';
    TC.renderPlayers(hs, $('players'));
    renderBuzzers();
    TC.renderPanel(hs, $('panel'));
    $('log').replaceChildren(...(hs.log || []).slice(-15).reverse().map((l) => el('li', { text: l.line })));
    TC.renderKV(hs.host_view || hs.view, $('kv'));
    $('export-game').href = hs.game_id ? `/api/host/export/${hs.game_id}` : '#';
  }

  /* --- new game --------------------------------------------------------- */
  const PALETTE = ['#e53935', '#1e88e5', '#43a047', '#fdd835', '#8e24aa', '#fb8c00'];
  function playerRow(i, name, colour, buzzer) {
    const buzzers = cfg.buzzers || [];
    const sel = el('select', { 'aria-label': `buzzer of player ${i + 1}`, class: 'ng-buzzer' },
      el('option', { value: '', text: 'no buzzer' }),
      buzzers.map((b) => el('option', { value: b, text: `buzzer ${b}`, selected: b === buzzer })));
    return el('div', { class: 'player-row' },
      el('input', { class: 'ng-name', 'aria-label': `player ${i + 1}`, value: name || '', maxlength: 40, required: true }),
      el('input', { class: 'ng-colour', type: 'color', 'aria-label': `colour of player ${i + 1}`, value: colour || PALETTE[i % PALETTE.length] }),
      sel);
  }
  function setupNewGame() {
    const rows = $('ng-players');
    const names = cfg.players && cfg.players.length ? cfg.players : ['Ana', 'Bo', 'Cy'];
    names.forEach((n, i) => rows.append(playerRow(i, n, null, (cfg.buzzers || [])[i])));
    $('ng-add').onclick = () => {
      const i = rows.children.length;
      rows.append(playerRow(i, '', null, (cfg.buzzers || [])[i]));
    };
    $('ng-remove').onclick = () => { if (rows.lastElementChild) rows.lastElementChild.remove(); };
    fetch('/api/host/games', { credentials: 'same-origin' }).then((r) => r.json()).then((g) => {
      games = g;
      $('ng-game').replaceChildren(...Object.entries(g).map(([name, info]) =>
        el('option', { value: name, text: info.title, selected: hs && hs.game === name })));
      renderOptions();
    });
    $('ng-game').onchange = renderOptions;
    $('new-game').addEventListener('submit', async (ev) => {
      ev.preventDefault();
      const players = [...rows.children].map((r) => ({
        name: r.querySelector('.ng-name').value.trim(),
        colour: r.querySelector('.ng-colour').value,
        buzzer: r.querySelector('.ng-buzzer').value || null,
      }));
      const options = {};
      for (const inp of $('ng-options').querySelectorAll('[data-option]')) {
        const k = inp.dataset.option;
        if (inp.type === 'checkbox') options[k] = inp.checked;
        else if (inp.dataset.kind === 'number') options[k] = inp.value === '' ? null : Number(inp.value);
        else options[k] = inp.value === '' ? null : inp.value;
      }
      const raw = $('ng-json').value.trim();
      if (raw) {
        try { Object.assign(options, JSON.parse(raw)); } catch (e) { toast('Advanced options: not JSON'); return; }
      }
      const res = await act('/api/host/new-game', { game: $('ng-game').value, players, options });
      if (res) toast('New game started', true);
    });
  }
  function renderOptions() {
    const info = games && games[$('ng-game').value];
    const box = $('ng-options');
    if (!info) { box.replaceChildren(); return; }
    $('ng-players-hint').textContent = `${info.min_players} to ${info.max_players} players, in seating order`;
    const out = [];
    for (const [k, v] of Object.entries(info.options)) {
      if (v !== null && typeof v === 'object') continue;          // JSON box
      const id = `opt-${k}`;
      const nice = k.replace(/_/g, ' ');
      if (typeof v === 'boolean') {
        out.push(el('label', { for: id }, el('input', { id, type: 'checkbox', 'data-option': k, checked: v }), ' ', nice));
      } else {
        out.push(el('label', { for: id, text: nice }), el('input', {
          id, 'data-option': k, 'data-kind': typeof v === 'number' ? 'number' : 'text',
          type: typeof v === 'number' ? 'number' : 'text', value: v == null ? '' : String(v),
          placeholder: v == null ? 'default' : null,
        }));
      }
    }
    box.replaceChildren(...out);
    const complex = Object.fromEntries(Object.entries(info.options).filter(([, v]) => v !== null && typeof v === 'object'));
    $('ng-json').placeholder = JSON.stringify(complex, null, 1).slice(0, 2000);
  }

  /* --- wiring ------------------------------------------------------------ */
  $('undo').onclick = () => act('/api/host/undo', { expected_version: hs.version });
  $('redo').onclick = () => act('/api/host/redo', { expected_version: hs.version });
  $('start-race').onclick = () => act('/api/host/race', { countdown_ms: Number($('countdown-ms').value) });
  $('cancel-race').onclick = () => act('/api/host/race/cancel', {});
  $('custom-log').onclick = () => {
    let e;
    try { e = JSON.parse($('custom-event').value); } catch (err) { toast('Not JSON'); return; }
    logEvent(e);
  };

  TC.live({
    heartbeatS: Number(document.body.dataset.heartbeat) || 15,
    badge: $('conn'),
    onMessage(type, msg) {
      if (!hs) return;
      if (type === 'state' || type === 'snapshot') { refresh(); return; }
      const next = TC.applyUpdate(hs, type, msg);
      if (next) { hs = next; render(); }
      if (type === 'race' && msg.data && msg.data.phase === 'decided') refresh();
    },
  });
  setInterval(() => { if (hs && hs.presses && hs.presses.length) TC.renderBurst(hs, $('burst-card'), $('burst')); }, 1000);
  refresh().then(setupNewGame);
}());
