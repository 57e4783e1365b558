/* The console's Camera panel (companion serve --camera; docs/web.md, "The
 * Camera panel"): every second the camera's state (GET /api/host/camera):
 * a question with the likeliest faces (one tap each, or "None of these"),
 * the cards it logged (Undo while one is still the last event), the game's
 * faces to teach (tap a name while the card is under the camera); a few
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
      el('span', { class: 'what' }, nameOf(x.card), el('span', { class: 'how', text: x.undone
        ? TC.t('undone') : x.queued ? `${how} · ${TC.t('waiting for the race')}` : how })));
    if (x.undoable) {
      li.append(el('button', { type: 'button', class: 'cam-undo', text: TC.t('Undo'),
        'aria-label': TC.t('Undo {card}', { card: nameOf(x.card) }),
        onclick: () => tap('/api/host/camera/undo', { id: x.id }, $('cam-note')) }));
    }
    return li;
  }

  function renderFaces(faces) {
    const taught = faces.filter((f) => f.taught).length;
    $('cam-taught').textContent = TC.t('{n} of {total} taught', { n: taught, total: faces.length });
    const box = $('cam-faces');
    const key = faces.map((f) => `${f.card}:${f.taught}`).join('|');
    if (box.dataset.key === key) return;
    box.dataset.key = key;
    box.replaceChildren(...faces.map((f) => el('button', {
      type: 'button', class: f.taught ? 'taught' : null, 'data-card': f.card,
      'aria-pressed': f.taught ? 'true' : 'false',
      onclick: async () => {
        const done = await tap('/api/host/camera/teach', { card: f.card }, $('cam-teach-note'));
        if (done) say($('cam-teach-note'), TC.t('{card} taught', { card: nameOf(f.card) }), true);
      } }, nameOf(f.card), f.taught ? el('span', { class: 'tick', text: `✓ ${TC.t('taught')}` }) : null)));
  }

  function render(c) {
    cam = c;
    if (!c.on) { card.hidden = true; return; }
    names = Object.fromEntries(c.faces.map((f) => [f.card, f.name]));
    const badge = $('cam-badge');
    badge.textContent = c.error ? TC.t('stopped') : !c.running ? TC.t('no pictures')
      : c.teaching ? TC.t('teaching') : TC.t('{fps} frames/s', { fps: c.fps });
    badge.className = c.error ? 'badge alert' : 'badge';
    const untaught = !c.faces.some((f) => f.taught);
    $('cam-note').textContent = c.error
      ? TC.t('The camera stopped ({error}): log the cards by hand.', { error: c.error })
      : untaught ? TC.t('Teach the cards below first: until then the camera logs nothing.')
        : c.teaching ? TC.t('Teaching: the camera logs nothing until the list is closed.') : '';
    renderQuestion(c.questions[0]);
    $('cam-logs').replaceChildren(...c.logs.slice(0, 4).map(logLine));
    renderFaces(c.faces);
    $('cam-preview').hidden = !c.frames;
    /* teaching lapses on the server after two idle minutes (a tab left
       open elsewhere); while this list is open it goes on */
    if ($('cam-teach').open && !c.teaching && !c.error) {
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
  $('cam-teach').addEventListener('toggle', (ev) => {
    tap('/api/host/camera/teaching', { on: ev.target.open }, $('cam-teach-note'));
  });

  poll().then(nextPicture);
  setInterval(poll, STATUS_MS);
})();
