/* The console's Camera panel (companion serve --camera; docs/web.md, "The
 * Camera panel"): every second the camera's state (GET /api/host/camera):
 * a question with the likeliest faces (one tap each, or "None of these"),
 * the cards it logged (Undo while one is still the last event), the game's
 * faces to teach (tap a name while the card is under the camera) and, in a
 * game where everyone turns a card at once, each player's spot (a card laid
 * on it, then her name); the last seconds kept as a clip on a tap (a
 * disputed race), looked at frame by frame, deleted; a few
 * times a second the small preview with the outline found (never stored:
 * the server makes it in memory for this logged-in host only). The camera
 * never blocks the game: the buttons under "Log what happened" stay. */
(function () {
  'use strict';
  const TC = window.TC, el = TC.el;
  const $ = (id) => document.getElementById(id);
  const card = $('camera-card');
  if (!card) return;
  const PREVIEW_MS = 250, STATUS_MS = 1000;
  let cam = null;
  let names = {};

  function nameOf(c) { return TC.tx(names[c] || c); }
  function pct(p) { return `${Math.round(100 * p)} %`; }

  async function tap(url, body, note) {
    const res = await TC.post(url, body);
    if (res.status === 401) { location.reload(); return null; }
    if (!res.ok) { say(note, TC.refusal(res.data || {}, res.status), false); return null; }
    if (res.data && res.data.camera) render(res.data.camera);
    return res.data;
  }
  function say(node, text, ok) {
    node.textContent = text;
    node.className = ok ? 'help ok' : 'field-error';
    node.hidden = !text;
  }

  function renderQuestion(q) {
    const box = $('cam-question');
    box.hidden = !q;
    if (!q) return;
    if (box.dataset.q === String(q.id)) return;      // the same question: keep the buttons
    box.dataset.q = String(q.id);
    $('cam-question-text').textContent = q.seat
      ? TC.t('The camera is not sure which card {player} turned: tap it.', { player: q.seat })
      : TC.t('The camera is not sure which card this is: tap it.');
    const choices = q.choices.map((c) => el('button', { type: 'button', class: 'choice',
      'data-card': c.card, text: `${nameOf(c.card)} · ${pct(c.p)}`,
      onclick: () => tap('/api/host/camera/answer', { id: q.id, card: c.card }, $('cam-note')) }));
    choices.push(el('button', { type: 'button', class: 'none', text: TC.t('None of these'),
      onclick: () => tap('/api/host/camera/answer', { id: q.id, card: null }, $('cam-note')) }));
    $('cam-choices').replaceChildren(...choices);
  }

  function logLine(x) {
    const how = x.auto ? TC.t('logged by the camera ({pct} sure)', { pct: pct(x.share) })
      : TC.t('tapped in the camera’s question');
    const li = el('li', { class: x.undone ? 'undone' : null, 'data-log': String(x.id) },
      el('span', { class: 'what' }, x.seat ? `${x.seat}: ${nameOf(x.card)}` : nameOf(x.card),
        el('span', { class: 'how', text: x.undone
        ? TC.t('undone') : x.queued ? `${how} · ${TC.t('waiting for the race')}` : how })));
    if (x.undoable) {
      li.append(el('button', { type: 'button', class: 'cam-undo', text: TC.t('Undo'),
        'aria-label': TC.t('Undo {card}', { card: nameOf(x.card) }),
        onclick: () => tap('/api/host/camera/undo', { id: x.id }, $('cam-note')) }));
    }
    return li;
  }

  /* a teaching list: one button an item (a face, a player's spot), "n of
     total taught"; a tap teaches it from the newest frame */
  function renderList(items, list, count, note, item) {
    const taught = items.filter((x) => x.taught).length;
    $(count).textContent = TC.t('{n} of {total} taught', { n: taught, total: items.length });
    const box = $(list);
    const key = items.map((x) => `${item(x).id}:${x.taught}`).join('|');
    if (box.dataset.key === key) return;
    box.dataset.key = key;
    box.replaceChildren(...items.map((x) => {
      const it = item(x);
      return el('button', {
        type: 'button', class: x.taught ? 'taught' : null, [it.attr]: it.id,
        'aria-pressed': x.taught ? 'true' : 'false',
        onclick: async () => {
          if (await tap(it.url, it.body, $(note))) say($(note), it.done, true);
        } }, it.label, x.taught ? el('span', { class: 'tick', text: `✓ ${TC.t('taught')}` }) : null);
    }));
  }

  function renderFaces(faces) {
    renderList(faces, 'cam-faces', 'cam-taught', 'cam-teach-note', (f) => ({
      attr: 'data-card', id: f.card, label: nameOf(f.card), url: '/api/host/camera/teach',
      body: { card: f.card }, done: TC.t('{card} taught', { card: nameOf(f.card) }) }));
  }

  function renderSeats(seats) {
    $('cam-seats').hidden = !seats.length;
    if (!seats.length) return;
    renderList(seats, 'cam-seat-list', 'cam-seated', 'cam-seat-note', (x) => ({
      attr: 'data-player', id: x.player, label: x.player, url: '/api/host/camera/seat',
      body: { player: x.player }, done: TC.t('{player}’s spot taught', { player: x.player }) }));
  }

  function clipLine(x) {
    const what = [x.kept_at, TC.t('{s} s', { s: x.seconds }), x.line ? TC.tx(x.line) : null]
      .filter(Boolean).join(' · ');
    return el('li', { 'data-clip': x.id },
      el('span', { class: 'what', text: what }),
      el('button', { type: 'button', class: 'cam-view', text: TC.t('Look'),
        'aria-label': TC.t('Look at the clip kept at {time}', { time: x.kept_at }),
        onclick: () => view(x.id) }),
      el('button', { type: 'button', class: 'cam-delete', text: TC.t('Delete'),
        'aria-label': TC.t('Delete the clip kept at {time}', { time: x.kept_at }),
        onclick: async () => {
          if ($('cam-viewer').dataset.clip === x.id) closeViewer();
          await tap('/api/host/camera/clips/delete', { id: x.id }, $('cam-keep-note'));
        } }));
  }

  /* the clip viewer: one frame at a time, its time from the clip's start */
  let shown = null;
  async function view(id) {
    const r = await fetch(`/api/host/camera/clips/${encodeURIComponent(id)}`,
      { credentials: 'same-origin' });
    if (r.status === 401) { location.reload(); return; }
    if (!r.ok) { say($('cam-keep-note'), TC.t('That clip is gone.'), false); return; }
    shown = await r.json();
    const box = $('cam-viewer');
    box.dataset.clip = id;
    box.hidden = false;
    $('cam-scrub').max = String(shown.times_ms.length);
    show(1);
    box.scrollIntoView({ block: 'nearest' });
  }
  function show(n) {
    if (!shown) return;
    n = Math.max(1, Math.min(shown.times_ms.length, n));
    $('cam-scrub').value = String(n);
    $('cam-frame').src = `/api/host/camera/clips/${encodeURIComponent(shown.id)}/${n}.jpg`;
    $('cam-frame-at').textContent = TC.t('Frame {n} of {total} · {s} s', {
      n, total: shown.times_ms.length, s: (shown.times_ms[n - 1] / 1000).toFixed(2) });
  }
  function closeViewer() {
    shown = null;
    $('cam-viewer').hidden = true;
    delete $('cam-viewer').dataset.clip;
  }
  $('cam-scrub').addEventListener('input', (ev) => show(+ev.target.value));
  $('cam-prev').addEventListener('click', () => show(+$('cam-scrub').value - 1));
  $('cam-next').addEventListener('click', () => show(+$('cam-scrub').value + 1));
  $('cam-close').addEventListener('click', closeViewer);
  $('cam-keep').addEventListener('click', async () => {
    const done = await tap('/api/host/camera/keep', {}, $('cam-keep-note'));
    if (done) say($('cam-keep-note'), TC.t('Kept: the last {s} s', { s: done.clip.seconds }), true);
  });

  function render(c) {
    cam = c;
    if (!c.on) { card.hidden = true; return; }
    names = Object.fromEntries(c.faces.map((f) => [f.card, f.name]));
    const badge = $('cam-badge');
    badge.textContent = c.error ? TC.t('stopped') : !c.running ? TC.t('no pictures')
      : c.teaching ? TC.t('teaching') : TC.t('{fps} frames/s', { fps: c.fps });
    badge.className = c.error ? 'badge alert' : 'badge';
    const untaught = !c.faces.some((f) => f.taught);
    const seats = c.seats || [];
    const unseated = seats.length && !seats.every((x) => x.taught);
    $('cam-note').textContent = c.error
      ? TC.t('The camera stopped ({error}): log the cards by hand.', { error: c.error })
      : untaught ? TC.t('Teach the cards below first: until then the camera logs nothing.')
        : c.teaching ? TC.t('Teaching: the camera logs nothing until the list is closed.')
          : unseated ? TC.t('Teach each player’s spot below: the camera logs no card on a spot it was not taught.') : '';
    renderQuestion(c.questions[0]);
    $('cam-logs').replaceChildren(...c.logs.slice(0, 4).map(logLine));
    renderFaces(c.faces);
    renderSeats(seats);
    $('cam-keep').disabled = !c.held_s;
    const clips = c.clips || [];
    const key = clips.map((x) => x.id).join('|');
    if ($('cam-clips').dataset.key !== key) {
      $('cam-clips').dataset.key = key;
      $('cam-clips').replaceChildren(...clips.map(clipLine));
    }
    $('cam-preview').hidden = !c.frames;
    /* teaching lapses on the server after two idle minutes (a tab left
       open elsewhere); while a list is open it goes on */
    if (($('cam-teach').open || $('cam-seats').open) && !c.teaching && !c.error) {
      TC.post('/api/host/camera/teaching', { on: true });
    }
  }

  async function poll() {
    try {
      const r = await fetch('/api/host/camera', { credentials: 'same-origin' });
      if (r.status === 401) { location.reload(); return; }
      if (r.ok) render(await r.json());
    } catch (e) { /* the next poll tries again */ }
  }

  /* the preview: the next picture once the last one is in, while the page shows */
  const img = $('cam-preview');
  function nextPicture() {
    if (document.visibilityState !== 'visible' || !cam || !cam.frames) {
      setTimeout(nextPicture, PREVIEW_MS);
      return;
    }
    img.src = `/api/host/camera/preview.jpg?n=${Date.now()}`;
  }
  let pictures = 0;
  img.addEventListener('load', () => {
    img.dataset.pictures = String(++pictures);      // how many came (the tests wait on it)
    setTimeout(nextPicture, PREVIEW_MS);
  });
  img.addEventListener('error', () => setTimeout(nextPicture, 4 * PREVIEW_MS));

  /* the teaching list open: the camera logs nothing (the card held up is no flip) */
  for (const [list, note] of [['cam-teach', 'cam-teach-note'], ['cam-seats', 'cam-seat-note']]) {
    $(list).addEventListener('toggle', () => {
      const open = $('cam-teach').open || $('cam-seats').open;
      tap('/api/host/camera/teaching', { on: open }, $(note));
    });
  }

  poll().then(nextPicture);
  setInterval(poll, STATUS_MS);
})();
