/* The live stream (/events) with what phones need: a watchdog (a heartbeat
 * comes every few seconds; silence means a dead connection), reconnection
 * when the page becomes visible again (phones drop background connections),
 * catch-up from the last event id, a visible "reconnecting" badge, and a
 * "Not saving" banner while the table cannot write its log (the `saving`
 * event: false with the cause when a write failed, true once an event is
 * logged again; a page that connects meanwhile gets false after its
 * snapshot, so every new connection starts from "saving"). */
(function () {
  'use strict';
  const TC = window.TC = window.TC || {};
  const TYPES = ['snapshot', 'state', 'race', 'queued', 'press', 'fault', 'buzzers', 'heartbeat', 'saving', 'notice'];

  /* Notices from outside the game (a convention's pairing from the league),
   * by key, in every #table-notice of the page: {key, level (info|warn),
   * title, text}; {key, clear: true} takes one away. */
  const notices = new Map();
  TC.showNotice = function (data) {
    if (!data || typeof data.key !== 'string') return;
    if (data.clear) notices.delete(data.key); else notices.set(data.key, data);
    for (const node of document.querySelectorAll('#table-notice')) {
      const items = [...notices.values()].map((n) => {
        const box = document.createElement('div');
        box.className = 'notice ' + (n.level === 'warn' ? 'warn' : 'info');
        box.setAttribute('role', n.level === 'warn' ? 'alert' : 'status');
        const head = document.createElement('strong');
        head.textContent = TC.tx(String(n.title || ''));
        box.append(head, ' ', TC.tx(String(n.text || '')));
        return box;
      });
      node.replaceChildren(...items);
      node.hidden = !items.length;
    }
  };

  /* The "Not saving: <cause>" banner (`node`, e.g. #saving) from a
   * `saving` event's data ({saving, error}); hidden while saving. */
  TC.showSaving = function (node, data) {
    const down = !!data && data.saving === false;
    document.documentElement.dataset.saving = down ? 'no' : 'yes';
    if (!node) return;
    node.hidden = !down;
    if (!down) { node.replaceChildren(); return; }
    const head = document.createElement('strong');
    head.textContent = TC.t('Not saving: ');
    const cause = typeof data.error === 'string' && data.error ? TC.tx(data.error) : TC.t('the table cannot write its log');
    node.replaceChildren(head, cause);
  };

  /* A page's state fetched again (`load()`: fetch and take it, a promise):
   * the returned function starts a fetch, or, while one is on its way, asks
   * for one more after it: that one may have been answered before the news
   * that asked again (a console opened as a card was logged kept the state
   * from before the card, the stream's news of it dropped while the first
   * fetch was out). `busy()`: a fetch is on its way; a page calls the
   * function for any news that comes meanwhile. */
  TC.refetcher = function (load) {
    let pending = null;
    let again = false;
    function run() {
      if (pending) { again = true; return pending; }
      again = false;
      pending = Promise.resolve().then(load).catch(() => {})
        .finally(() => { pending = null; if (again) run(); });
      return pending;
    }
    run.busy = () => pending !== null;
    return run;
  };

  /* A new stream says at once (after its snapshot) if the table is not
   * saving; if it has not said so within a second, the table saves (the
   * `saving: true` may have been sent while this page was away). */
  const openTimers = new WeakMap();
  TC.savingOnOpen = function (node) {
    const key = node || document.documentElement;
    clearTimeout(openTimers.get(key));
    openTimers.set(key, setTimeout(() => TC.showSaving(node, { saving: true }), 1000));
  };
  TC.savingEvent = function (node, data) {
    clearTimeout(openTimers.get(node || document.documentElement));
    TC.showSaving(node, data);
  };

  /* opts: {heartbeatS, badge, saving (the banner), onMessage(type, msg),
   *        url (default /events; a player's page has its own), types (event
   *        types besides the scoreboard's), onRetry() (before each retry after
   *        the browser gave up: a page may refetch its state)}.
   * Returns {reconnect, stop(text), source, lastId}: stop() closes the stream
   * for good (a revoked player link) and shows `text` on the badge. */
  TC.live = function (opts) {
    const beatMs = (opts.heartbeatS || 15) * 1000;
    const badge = opts.badge;
    const base = opts.url || '/events';
    const types = TYPES.concat(opts.types || []);
    let es = null;
    let lastId = null;       // the last log id seen (sent back as ?last_id=)
    let lastMsg = 0;         // when anything last arrived (performance.now())
    let retryMs = 1000;
    let retryTimer = null;
    let healthy = false;
    let stopped = false;

    function setBadge(ok) {
      healthy = ok;
      if (!badge) return;
      badge.textContent = ok ? TC.t('live') : TC.t('reconnecting…');
      badge.className = 'badge ' + (ok ? 'live' : 'warn');
      document.documentElement.dataset.live = ok ? 'up' : 'down';
    }

    function handle(type, ev) {
      lastMsg = performance.now();
      retryMs = 1000;
      if (!healthy) setBadge(true);
      let msg = null;
      try { msg = JSON.parse(ev.data); } catch (e) { return; }
      if (msg && typeof msg.now_ns === 'number') TC.syncClock(msg.now_ns);
      if (ev.lastEventId && /^\d+$/.test(ev.lastEventId)) lastId = Number(ev.lastEventId);
      if (type === 'saving') TC.savingEvent(opts.saving, msg && msg.data);
      else if (type === 'notice') TC.showNotice(msg && msg.data);
      else if (type !== 'heartbeat') opts.onMessage(type, msg);
    }

    function connect() {
      clearTimeout(retryTimer);
      if (es) es.close();
      if (stopped) return;
      const url = base + (lastId != null ? '?last_id=' + lastId : '');
      es = new EventSource(url);
      lastMsg = performance.now();
      for (const t of types) es.addEventListener(t, (ev) => handle(t, ev));
      es.addEventListener('open', () => TC.savingOnOpen(opts.saving));
      es.onerror = () => {
        setBadge(false);
        if (es.readyState === EventSource.CLOSED && !stopped) {   // the browser gave up: we retry
          retryTimer = setTimeout(() => { if (opts.onRetry) opts.onRetry(); connect(); }, retryMs);
          retryMs = Math.min(retryMs * 2, 15000);
        }
      };
    }

    /* watchdog: nothing (not even a heartbeat) for 2.5 beats: reconnect */
    setInterval(() => {
      if (!stopped && performance.now() - lastMsg > beatMs * 2.5) { setBadge(false); connect(); }
    }, 1000);

    /* back in front: a stream the browser closed, or silent too long, is
     * opened again; one still connecting is left to connect (the first
     * pageshow comes while the page's own stream is on its way: opening it
     * again there made every load two streams and two snapshots) */
    const wake = () => {
      if (stopped || document.visibilityState !== 'visible') return;
      const stale = performance.now() - lastMsg > Math.min(beatMs, 5000) + 1000;
      if (!es || es.readyState === EventSource.CLOSED || stale) { setBadge(false); connect(); }
    };
    document.addEventListener('visibilitychange', wake);
    window.addEventListener('pageshow', wake);
    window.addEventListener('online', () => { if (!stopped) { setBadge(false); connect(); } });

    setBadge(false);
    connect();
    return {
      reconnect: connect,
      stop(text) {
        stopped = true;
        clearTimeout(retryTimer);
        if (es) es.close();
        if (badge) { badge.textContent = text || TC.t('stopped'); badge.className = 'badge warn'; }
      },
      get source() { return es; },
      get lastId() { return lastId; },
    };
  };

  /* POST JSON with the session's CSRF token. A token that went stale (the
     host logged in on another tab of this browser, which gives the session
     a fresh one) is fetched again once and the request retried, so a tap is
     never lost to it. */
  TC.post = async function (url, body, retried) {
    const meta = document.querySelector('meta[name="csrf-token"]');
    const res = await fetch(url, {
      method: 'POST', credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'X-CSRF-Token': meta.content },
      body: JSON.stringify(body || {}),
    });
    let data = null;
    try { data = await res.json(); } catch (e) { data = { error: res.statusText }; }
    if (res.status === 403 && data && data.rule === 'csrf' && !retried) {
      try {
        const fresh = await fetch('/api/csrf', { credentials: 'same-origin' });
        meta.content = (await fresh.json()).csrf;
        return TC.post(url, body, true);
      } catch (e) { /* keep the refusal */ }
    }
    return { ok: res.ok, status: res.status, data };
  };
}());
