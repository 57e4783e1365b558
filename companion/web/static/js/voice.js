/* Verdicts and cues spoken (docs/web.md, "Verdicts out loud"): the
 * browser's speech synthesis, in the page's language (<html lang>), says the
 * race's countdown (3, 2, 1, GO!), a question to the host ("Waiting for the
 * host") and the verdict, the moment the page draws them (render.js calls
 * TC.cue). Names are spoken as written: the line is the one on screen.
 *
 * On by default on the TV layout (the scoreboard 1280 px wide or more), off
 * on phones; the #voice switch in the header turns it on or off, remembered
 * in the browser (localStorage `tc-voice`). What the page shows when it
 * loads is not read out (only what happens next), and a cue repeated
 * (the same verdict redrawn) is said once. Chromium speaks only after the
 * page was tapped once: until then the switch says "tap to hear". */
(function () {
  'use strict';
  const TC = window.TC = window.TC || {};
  const KEY = 'tc-voice';
  const synth = window.speechSynthesis;
  const can = !!synth && typeof window.SpeechSynthesisUtterance === 'function';
  let armed = false;                 /* after the page's first drawing */
  const last = new Map();            /* kind -> the last text cued */

  let choice = null;                 /* 'on' | 'off' | null: the layout's default */
  try { choice = localStorage.getItem(KEY); } catch (e) { /* no storage: the default */ }
  const tv = () => document.body.classList.contains('tv') && window.matchMedia('(min-width: 1280px)').matches;
  const on = () => choice === 'on' || (choice !== 'off' && tv());

  let voice;
  function pickVoice(lang) {
    if (voice !== undefined) return voice;
    const all = synth.getVoices() || [];
    voice = all.find((v) => v.lang && v.lang.toLowerCase().startsWith(lang)) || null;
    if (!all.length) voice = undefined;          /* not loaded yet: ask again next time */
    return voice || null;
  }

  function speak(text) {
    const u = new SpeechSynthesisUtterance(text);
    const lang = (document.documentElement.lang || 'en').toLowerCase();
    u.lang = lang;
    const v = pickVoice(lang);
    if (v) u.voice = v;
    synth.cancel();                   /* the newest cue, never behind an old one */
    synth.speak(u);
  }

  /* `kind`: countdown | verdict | question; `text` null: that kind is over */
  TC.cue = function (kind, text) {
    const was = last.get(kind);
    last.set(kind, text || null);
    if (!text || text === was || !armed || !can || !on()) return;
    speak(TC.plainName(String(text)));
  };

  function drawSwitch(button) {
    const active = !navigator.userActivation || navigator.userActivation.hasBeenActive;
    const yes = on();
    button.setAttribute('aria-pressed', yes ? 'true' : 'false');
    button.textContent = yes ? (active ? TC.t('Voice on') : TC.t('Voice on: tap to hear')) : TC.t('Voice off');
  }

  function setUp() {
    const button = document.getElementById('voice');
    if (button && can) {
      button.hidden = false;
      button.addEventListener('click', () => {
        choice = on() ? 'off' : 'on';
        try { localStorage.setItem(KEY, choice); } catch (e) { /* private mode: this page only */ }
        drawSwitch(button);
      });
      document.addEventListener('click', () => drawSwitch(button), { once: true, capture: true });
      window.matchMedia('(min-width: 1280px)').addEventListener('change', () => drawSwitch(button));
      drawSwitch(button);
    }
    /* armed once the page's scripts drew what it loaded with: they all
     * ran by DOMContentLoaded (the browser may run a timer between two
     * script files, so not a bare setTimeout) */
    const arm = () => setTimeout(() => { armed = true; }, 0);
    if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', arm, { once: true });
    else arm();
  }
  setUp();
}());
