/* The host console's "Players' own pages" card: for each player of the
 * running game, their secret link and its QR code (behind a tap, so the
 * host shows each player only their own), a new link (the old one stops
 * working) and revoke. Everything goes into the page as text; the QR code
 * is an image (an SVG data: URI made on the Pi). */
(function () {
  'use strict';
  const TC = window.TC, el = TC.el;
  const card = document.getElementById('player-links');
  const list = document.getElementById('player-links-list');
  if (!card || !list) return;
  const URL = '/api/host/player-links';
  let shown = null;

  const STATE = {
    valid: null,
    revoked: TC.t('Revoked: this player has no link until you make a new one.'),
    none: TC.t('No link yet.'),
    stale: TC.t('Made under another server key: make a new one.'),
  };

  function confirmButton(text, sure, cls, action) {
    let armed = null;
    const b = el('button', { type: 'button', class: cls, text });
    b.addEventListener('click', () => {
      if (!armed) {
        b.textContent = sure;
        armed = setTimeout(() => { armed = null; b.textContent = text; }, 4000);
        return;
      }
      clearTimeout(armed);
      armed = null;
      action();
    });
    return b;
  }

  function row(p) {
    const parts = [el('div', { class: 'pl-name', text: p.player, style: { 'font-size': '1.25rem', 'font-weight': '800' } })];
    if (p.url) {
      parts.push(el('details', { class: 'pl-qr', 'data-player': p.player },
        el('summary', { text: TC.t('Show {name}’s QR code', { name: p.player }), style: { 'min-height': '44px', cursor: 'pointer', padding: '10px 0' } }),
        el('img', { class: 'qr qr-player', src: p.qr, alt: TC.t('QR code of {name}’s own page', { name: p.player }),
          style: { width: 'min(64vw, 240px)', height: 'auto', margin: '8px 0' } }),
        el('code', { class: 'pl-url', text: p.url,
          style: { display: 'block', 'overflow-wrap': 'anywhere', 'word-break': 'break-all', 'font-size': '.8rem', margin: '6px 0' } })));
    } else {
      parts.push(el('p', { class: 'muted small', text: TC.own(STATE, p.state) || '' }));
    }
    parts.push(el('div', { class: 'row' },
      confirmButton(p.url ? TC.t('New link') : TC.t('Make a link'), p.url ? TC.t('Sure? The old link stops') : TC.t('Make it'),
        'pl-reissue', () => act('reissue', p.player)),
      p.url ? confirmButton(TC.t('Revoke'), TC.t('Sure? Revoke it'), 'pl-revoke danger', () => act('revoke', p.player)) : null));
    return el('div', { class: 'pl-row', 'data-player': p.player, style: { padding: '10px 0', 'border-bottom': '1px solid var(--line)' } }, parts);
  }

  function render(data) {
    const key = JSON.stringify(data);
    if (key === shown) return;               // keep an open QR code open
    shown = key;
    const players = (data && data.players) || [];
    card.hidden = !(data && data.hidden_information && players.length);
    list.replaceChildren(...players.map(row));
  }

  async function act(what, player) {
    const r = await TC.post(`${URL}/${what}`, { player });
    if (r.ok) render(r.data);
    else list.prepend(el('p', { class: 'error', text: r.data && r.data.error ? TC.refusal({ error: r.data.error }) : TC.t('failed ({status})', { status: r.status }) }));
  }

  let busy = false;
  async function refresh() {
    if (busy) return;
    busy = true;
    try {
      const r = await fetch(URL, { credentials: 'same-origin', cache: 'no-store' });
      if (!r.ok) return;
      let data = await r.json();
      if (data.hidden_information && data.players.some((p) => p.state === 'none' || p.state === 'stale')) {
        const made = await TC.post(URL, {});
        if (made.ok) data = made.data;
      }
      render(data);
    } catch (e) { /* offline: the next change tries again */ } finally { busy = false; }
  }

  /* a new game (or new players) shows on the console as a new version */
  let timer = null;
  new MutationObserver(() => { clearTimeout(timer); timer = setTimeout(refresh, 400); })
    .observe(document.body, { attributes: true, attributeFilter: ['data-game', 'data-version'] });
  refresh();
}());
