/* The host console's seasons (issue 35): add a named span of nights, remove
 * one. POST /api/host/seasons and /api/host/seasons/delete with the
 * session's CSRF token (TC.post); a refusal is shown under the form, on the
 * field it names. The statistics page reads one season at a time. */
(function () {
  'use strict';
  const TC = window.TC, el = TC.el;
  const $ = (id) => document.getElementById(id);
  const form = $('season-form');
  if (!form) return;
  const error = $('season-error');

  function render(list) {
    $('seasons').replaceChildren(...list.map((x) => el('li', null,
      el('span', { text: `${x.name}: ${x.start} – ${x.end || TC.t('now')}` }), ' ',
      el('button', { type: 'button', class: 'small season-remove', 'data-season': String(x.id),
        'aria-label': TC.t('Remove the season {name}', { name: x.name }), text: TC.t('Remove') }))));
  }
  function clear() {
    error.hidden = true;
    for (const n of form.querySelectorAll('[aria-invalid]')) n.removeAttribute('aria-invalid');
  }
  function refuse(res) {
    const d = res.data || {};
    if (res.status === 401) { location.reload(); return; }
    error.textContent = TC.refusal(d, res.status);
    error.hidden = false;
    const field = d.field && form.querySelector(`[data-field="${CSS.escape(d.field)}"]`);
    if (field) { field.setAttribute('aria-invalid', 'true'); field.focus(); }
  }

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    clear();
    const res = await TC.post('/api/host/seasons', {
      name: $('season-name').value, start: $('season-start').value, end: $('season-end').value || null });
    if (!res.ok) { refuse(res); return; }
    render(res.data.seasons);
    form.reset();
  });
  $('seasons').addEventListener('click', async (ev) => {
    const b = ev.target.closest('.season-remove');
    if (!b) return;
    clear();
    const res = await TC.post('/api/host/seasons/delete', { id: Number(b.dataset.season) });
    if (!res.ok) { refuse(res); return; }
    render(res.data.seasons);
  });
}());
