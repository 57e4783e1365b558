/* Keep the screen on while a live page is visible (docs/web.md, "Keeping
 * the screen on"). Phones joined by the QR code open plain http:// on the
 * LAN address: not a secure context, so most browsers have no Screen Wake
 * Lock there. Three ways, the first that works:
 *
 *   1. the Wake Lock API (a secure context: https://, localhost), asked at
 *      once and again whenever the page becomes visible;
 *   2. else a muted, inline, looping video of a blank frame (what NoSleep.js
 *      does: a playing video keeps the screen on), tried at once (muted
 *      video may play without a tap) and at the first tap (some browsers
 *      want one), played again when the page comes back;
 *   3. where neither can (the video refused or unplayable), one line on the
 *      page says the screen may go dark, never a silent failure; so does an
 *      iPhone with only the video (its reports: the muted video does not
 *      hold since iOS 15).
 *
 * The state is on <html data-awake="lock|video|waiting|none"> (tests read it).
 * The video files are NoSleep.js's own (static/vendor/nosleep/, MIT). */
(function () {
  'use strict';
  const TC = window.TC = window.TC || {};
  const script = document.currentScript;
  const MEDIA = (script && script.dataset.media) || '/static/vendor/nosleep/';
  const TAPS = ['click', 'touchend', 'keydown'];

  const state = (how) => { document.documentElement.dataset.awake = how; };
  const iPhone = () => /iP(hone|ad|od)/.test(navigator.userAgent)
    || (navigator.platform === 'MacIntel' && navigator.maxTouchPoints > 1);

  /* the one line under the header (null: none) */
  function note(text) {
    let p = document.getElementById('awake-note');
    if (!p && !text) return;
    if (!p) {
      p = document.createElement('p');
      p.id = 'awake-note';
      p.className = 'awake-note';
      p.setAttribute('role', 'status');
      const top = document.querySelector('header.top');
      if (top) top.after(p); else document.body.prepend(p);
    }
    p.hidden = !text;
    p.textContent = text || '';
  }
  const dark = () => note(TC.t('This screen may go dark: set the phone’s screen timeout longer.'));

  let video = null;
  function makeVideo() {
    const v = document.createElement('video');
    v.id = 'awake-video';
    v.muted = true;
    v.loop = true;
    for (const a of ['muted', 'loop', 'playsinline']) v.setAttribute(a, '');
    v.setAttribute('aria-hidden', 'true');
    v.setAttribute('tabindex', '-1');
    for (const [ext, type] of [['webm', 'video/webm'], ['mp4', 'video/mp4']]) {
      if (!v.canPlayType(type)) continue;
      const src = document.createElement('source');
      src.src = MEDIA + 'nosleep.' + ext;
      src.type = type;
      v.append(src);
    }
    if (!v.children.length) return null;          /* no format this browser plays */
    document.body.append(v);
    return v;
  }

  /* play the video; `tapped`: from a tap (a refusal now is final) */
  function playVideo(tapped) {
    if (video === null) video = makeVideo() || false;
    if (!video) { state('none'); dark(); return; }
    if (!video.paused) return;
    video.play().then(() => {
      state('video');
      if (iPhone()) dark(); else note(null);
    }, () => {
      if (tapped) { state('none'); dark(); } else state('waiting');
    });
  }

  function useVideo() {
    const tap = () => {
      playVideo(true);
      for (const t of TAPS) document.removeEventListener(t, tap, true);
    };
    for (const t of TAPS) document.addEventListener(t, tap, true);
    document.addEventListener('visibilitychange', () => {
      if (document.visibilityState === 'visible' && video && video.paused) playVideo(false);
    });
    playVideo(false);
  }

  /* the Wake Lock API; a refused lock (a battery saver, a policy) falls
   * back to the video */
  function useLock() {
    let lock = null;
    let fallen = false;
    const ask = async () => {
      if (fallen || lock || document.visibilityState !== 'visible') return;
      try {
        lock = await navigator.wakeLock.request('screen');
        state('lock');
        lock.addEventListener('release', () => { lock = null; });
      } catch (e) {
        lock = null;
        if (!fallen) { fallen = true; useVideo(); }
      }
    };
    document.addEventListener('visibilitychange', ask);
    ask();
  }

  TC.keepAwake = function () {
    state('waiting');
    if ('wakeLock' in navigator && window.isSecureContext) useLock(); else useVideo();
  };
}());
