/* The scoreboard: draw the snapshot, keep it live, and in demo mode offer
 * on-screen virtual buzzers. Game-specific drawing is in static/games/. */
(function () {
  'use strict';
  const TC = window.TC;
  const $ = (id) => document.getElementById(id);
  const body = document.body;
  let snap = JSON.parse($('initial-state').textContent);
  const raceEls = TC.raceEls(document);
  TC.seedGameInfo($('game-info'));

  let shownVersion = null;
  function render() {
    if (shownVersion !== null && shownVersion.version !== snap.version) TC.renderNews(shownVersion, snap, $('news'));
    shownVersion = snap;
    const title = snap.game_title || snap.title || 'Tabletop Companion';
    document.title = title;
    $('title').textContent = title;
    TC.renderBuzzerStatus(snap, $('buzzer-status'));
    TC.renderBanner(snap, $('banner'));
    TC.renderResult(snap, $('result'));
    TC.renderPlayers(snap, $('players'));
    TC.renderRace(snap, snap.race, raceEls);
    if (snap.finished) raceEls.section.hidden = true;      /* the result takes its place */
    if ($('buzzers-card')) $('buzzers-card').hidden = !!snap.finished || !TC.races(snap);
    TC.renderBurst(snap, $('burst-card'), $('burst'));
    TC.renderFaults(snap, $('faults'));
    TC.renderPanel(snap, $('panel'));
    TC.renderKV(snap.view, $('kv'));
    $('last-event').textContent = TC.tx(snap.last_event || '');
    if (body.dataset.demo === '1') renderBuzzers();
    body.dataset.version = String(snap.version ?? 0);
  }
  TC.onGameReady(render);

  const refetch = TC.refetcher(() => fetch('/api/state', { credentials: 'same-origin' })
    .then((r) => r.json()).then((s) => {
      TC.syncClock(s.now_ns);
      snap = Object.assign(s, { presses: snap.presses || [] });
      render();
    }));

  function onMessage(type, msg) {
    if (refetch.busy()) refetch();       /* the fetch on its way may predate this */
    const next = TC.applyUpdate(snap, type, msg);
    if (next == null) { refetch(); return; }
    snap = next;
    render();
  }

  /* --- virtual buzzers (demo mode) ------------------------------------ */
  let buzzersFor = null;
  function renderBuzzers() {
    const box = $('buzzers');
    if (!box) return;
    const key = JSON.stringify(TC.colours(snap));
    if (key === buzzersFor) return;
    buzzersFor = key;
    box.replaceChildren(...TC.buzzers(snap.players, TC.colours(snap), '/api/press'));
  }

  /* the burst of presses fades out on its own */
  setInterval(() => { if ((snap.presses && snap.presses.length) || (snap.strays && snap.strays.length)) TC.renderBurst(snap, $('burst-card'), $('burst')); }, 1000);

  render();
  TC.syncClock(snap.now_ns);
  TC.conn = TC.live({ heartbeatS: Number(body.dataset.heartbeat) || 15, badge: $('conn'), saving: $('saving'), onMessage });
  TC.keepAwake();
}());
