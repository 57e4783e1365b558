/* The page's language: the catalog the server embedded in the page
 * (<script id="tc-i18n">, the same gettext catalog as the templates':
 * companion/translations/<lang>/LC_MESSAGES/messages.po) and the two ways
 * the scripts use it:
 *
 *   TC.t(msgid, params)   the page's own words: TC.t('{n} of {want} chosen', {n: 2, want: 3})
 *                         (pybabel extracts every call of TC.t into the catalog)
 *   TC.tx(text)           a line the server sent in English (a rule's refusal,
 *                         a setting's label, a race's wording, a game's status):
 *                         its translation, matched against the catalog's
 *                         messages with {fields} ("it is {who}'s turn, not {p}'s"
 *                         matches "it is Bo's turn, not Ana's"); as sent when
 *                         the catalog has nothing for it
 *   TC.plural(n, one, many)  "3 cards"; a translation may give both forms as
 *                         "carte|cartes" (else the plural adds an s)
 *   TC.lang               "en", "fr"
 *
 * Names (players, cards, games) are never translated: they only ever fill
 * a {field}. */
(function () {
  'use strict';
  const TC = window.TC = window.TC || {};
  let data = { lang: 'en', messages: {} };
  try {
    const node = document.getElementById('tc-i18n');
    if (node) data = JSON.parse(node.textContent) || data;
  } catch (e) { /* no catalog: English */ }
  const messages = Object.assign(Object.create(null), data.messages || {});
  TC.lang = data.lang || 'en';
  TC.messages = messages;

  const has = (k) => Object.prototype.hasOwnProperty.call(messages, k);
  /* a message's {fields} filled; {{ and }} are literal braces */
  const VOWEL = /^[AEIOUYÀÂÉÈÊËÎÏÔÛÜaeiouyàâéèêëîïôûü]/;
  /* French elides "de" and "que" before a vowel: "Au tour d’Ana", not "de Ana" */
  function elide(text, params) {
    if (TC.lang !== 'fr' || !params) return text;
    return text.replace(/\b(de|que) \{(\w+)\}/g, (m, word, k) => {
      const v = Object.prototype.hasOwnProperty.call(params, k) ? params[k] : null;
      return typeof v === 'string' && VOWEL.test(v) ? `${word.slice(0, -1)}’{${k}}` : m;
    });
  }
  function fill(text, params) {
    return elide(String(text), params).replace(/\{\{|\}\}|\{(\w+)\}/g, (m, k) => {
      if (m === '{{') return '{';
      if (m === '}}') return '}';
      const v = params && Object.prototype.hasOwnProperty.call(params, k) ? params[k] : null;
      return v == null ? m : String(v);
    });
  }
  /* a word given as "singular|plural" (for TC.plural) reads as its singular */
  const one = (text) => (text.includes('|') && !text.includes('{') ? text.split('|')[0] : text);
  TC.t = function (msgid, params) {
    return fill(has(msgid) ? one(messages[msgid]) : msgid, params);
  };

  /* --- lines the server wrote in English ------------------------------- */
  /* the joints of a line the server joined from several (see parts) */
  const JOINS = [' and ', '; ', ' · ', ' → '];
  const escapeRe = (t) => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  let patterns = null;
  function compile() {
    patterns = [];
    for (const id of Object.keys(messages)) {
      if (!/\{\w+\}/.test(id.replace(/\{\{|\}\}/g, ''))) continue;
      if (messages[id] === id) continue;          /* a name: the same in every language */
      const names = [];
      let literal = 0;
      const src = id.split(/(\{\{|\}\}|\{\w+\})/).map((part) => {
        if (part === '{{') { literal += 1; return '\\{'; }
        if (part === '}}') { literal += 1; return '\\}'; }
        const f = /^\{(\w+)\}$/.exec(part);
        if (f) {
          if (names.includes(f[1])) return '\\k<' + f[1] + '>';
          names.push(f[1]);
          /* {n} is a count: a number, never a sentence ("{n} {what} cards"
           * does not take "Ana draws 2 Ingredient cards" with n = "Ana") */
          if (f[1] === 'n') return '(?<n>[-+−]?\\d+(?:[.,]\\d+)?)';
          return '(?<' + f[1] + '>[\\s\\S]+?)';
        }
        literal += part.length;
        return escapeRe(part);
      }).join('');
      if (literal < 4) continue;                       /* too loose to match safely */
      /* a message written with a joint in it ("Ingredient pile reshuffled;
       * left in the Black Market: {cards}") is a whole line: matched before
       * the line is split at that joint */
      const text = id.replace(/\{\w+\}/g, '\u0000');
      const joined = JOINS.some((sep) => text.includes(sep));
      try { patterns.push({ re: new RegExp('^' + src + '$', 'u'), id, literal, joined }); } catch (e) { /* skip */ }
    }
    patterns.sort((a, b) => b.literal - a.literal);    /* the most specific first */
  }
  function exact(text) {
    const key = text.replace(/\{/g, '{{').replace(/\}/g, '}}');
    if (has(text)) return one(messages[text]);
    if (has(key)) return fill(one(messages[key]));
    return null;
  }
  /* a field that is itself a message of several words ("Full game (8
   * moves)": {k} is "Full game"; "Round 1 of 2: not this table's pairing")
   * is translated too, one level down; a one-word field is left as it is:
   * it is a name (a player called "Players" stays so) */
  function matched(text, inner, joinedOnly) {
    if (!patterns) compile();
    for (const p of patterns) {
      if (joinedOnly && !p.joined) continue;
      const m = p.re.exec(text);
      if (!m) continue;
      const fields = Object.create(null);
      for (const [k, v] of Object.entries(m.groups || {})) {
        fields[k] = (v.includes(' ') && (exact(v) ?? (inner ? null : matched(v, true))))
          || names(v);
      }
      return fill(messages[p.id], fields);
    }
    return null;
  }
  /* a field that is not a message: names, which the server joins with
   * " and " (a tie: "Ana and Bo and Cy"), joined in the page's language */
  function names(v) {
    return v.includes(' and ') ? v.split(' and ').join(TC.t(' and ')) : v;
  }
  /* a line the server joined from several ("Bo draws 4 … and Cy draws 4 …",
   * "Round 2 of 3 · Chope!"): each part translated; with " and ", only
   * when every part is a message (else it joins names: "Ana and Bo") */
  function parts(text) {
    for (const sep of JOINS) {
      if (!text.includes(sep)) continue;
      const out = text.split(sep).map((p) => exact(p) ?? titled(p) ?? matched(p) ?? labelled(p));
      const ok = sep === ' and ' ? out.every((p) => p != null) : out.some((p) => p != null);
      if (ok) return out.map((p, i) => p ?? text.split(sep)[i]).join(sep === ' and ' ? TC.t(' and ') : sep);
    }
    return null;
  }
  /* "not eligible: Ana, Bo": a message, then the names it is about; "Cy:
   * start zone": a name, then a message */
  function labelled(text) {
    const m = /^([^:]+): (.+)$/.exec(text);
    if (!m) return null;
    const colon = TC.lang === 'fr' ? ' : ' : ': ';
    const label = exact(m[1]);
    if (label != null) return `${label}${colon}${m[2]}`;
    const rest = /\s/.test(m[1].trim()) ? null : lookup(m[2]);
    return rest == null ? null : `${m[1]}${colon}${rest}`;
  }
  /* "Chope! Cy chopes it!": a race's title (a name) before its verdict */
  function titled(text) {
    const m = /^(\S[^!?:]*[!?]) (.+)$/.exec(text);
    /* a title is a word or three ("Ink Out!", "Food Poisoning!"), not a sentence */
    if (!m || m[1].split(' ').length > 3) return null;
    const rest = exact(m[2]) ?? matched(m[2]);
    return rest == null ? null : `${m[1]} ${rest}`;
  }
  function lookup(text) {
    /* a race's title first ("Ink Out! nobody chomps" is not "{winner} chomps") */
    return exact(text) ?? matched(text, false, true) ?? parts(text) ?? titled(text) ?? matched(text);
  }
  /* a line the page capitalised ("No Event on the Action pile" for the
   * catalog's "no Event on the Action pile") */
  const lowered = (text) => (/^[A-Z][a-z]/.test(text) ? text.charAt(0).toLowerCase() + text.slice(1) : null);
  const upper = (t) => (t == null ? t : t.charAt(0).toUpperCase() + t.slice(1));
  const seen = new Map();
  TC.tx = function (text) {
    if (typeof text !== 'string' || !text || TC.lang === 'en') return text;
    if (seen.has(text)) return seen.get(text);
    const low = lowered(text);
    /* the whole line as a message first, as written or capitalised by the
     * page, before a looser match of a part ("{name} on {target}" would
     * take "No Event on the Action pile" for a card played on a player) */
    let out = exact(text) ?? (low == null ? null : upper(exact(low))) ?? lookup(text);
    /* "Stop and claim…" for "stop and claim…" */
    if (out == null && low != null) out = upper(lookup(low));
    if (out == null) out = text;
    if (seen.size > 2000) seen.clear();
    seen.set(text, out);
    return out;
  };

  /* A refusal from the server ({error, rule}) as the page says it: the
   * message in the page's language, then the rule it names. A rule quoted
   * from a rulebook stays in the rulebook's language (Chopote's French
   * lines as written); an English one gets the translation beside it. */
  TC.refusal = function (d, status) {
    d = d || {};
    const text = d.error ? TC.tx(d.error) : TC.t('error {status}', { status: status == null ? '' : status });
    if (!d.rule) return text;
    const tr = TC.tx(d.rule);
    return `${text} [${d.rule}${tr !== d.rule ? ' — ' + tr : ''}]`;
  };
  /* A rulebook quote (a setting's rule) as nodes: the quote as written,
   * in the rulebook's language (`rulesLang`, the game's rules_language:
   * Chopote's is French), and its translation beside it when the page's
   * language differs and the catalog has one. */
  TC.ruleQuote = function (rule, quoted, rulesLang) {
    const q = quoted || ((x) => `“${x}”`);
    const from = rulesLang || 'en';
    const out = [TC.el('span', { class: 'rule-quote', text: q(rule), lang: from !== TC.lang ? from : null })];
    const tr = from === 'en' ? TC.tx(rule) : rule;
    if (tr !== rule) out.push(TC.el('span', { class: 'rule-quote rule-tr', text: q(tr) }));
    return out;
  };
  /* the colour words the new-game form offers, in the page's language */
  const COLOUR_WORDS = {
    red: TC.t('red'), orange: TC.t('orange'), yellow: TC.t('yellow'), green: TC.t('green'),
    blue: TC.t('blue'), purple: TC.t('purple'), pink: TC.t('pink'), teal: TC.t('teal'),
    cyan: TC.t('cyan'), brown: TC.t('brown'), grey: TC.t('grey'), gray: TC.t('grey'),
    black: TC.t('black'), white: TC.t('white'),
  };
  TC.colourWord = (c) => (typeof c === 'string' && Object.prototype.hasOwnProperty.call(COLOUR_WORDS, c.toLowerCase())
    ? COLOUR_WORDS[c.toLowerCase()] : c);

  /* an event type as a word of the page's language (the console's headings) */
  const TYPE_WORDS = {
    favourite: TC.t('Favourite'), flip: TC.t('Flip'), stop: TC.t('Stop'), keep: TC.t('Keep'),
    lose: TC.t('Lose'), race: TC.t('Race'), roll: TC.t('Roll'), move: TC.t('Move'), pass: TC.t('Pass'),
    turn: TC.t('Turn'), reveal: TC.t('Reveal'), choose_stall: TC.t('Choose stall'), dish: TC.t('Dish'),
    market: TC.t('Market'), draw: TC.t('Draw'), event_check: TC.t('Event check'), cook: TC.t('Cook'),
    play: TC.t('Play'), trade: TC.t('Trade'), resolve: TC.t('Resolve'), reshuffle: TC.t('Reshuffle'),
    end_turn: TC.t('End turn'), discard: TC.t('Discard'), deal: TC.t('Deal'), take: TC.t('Take'),
    sell: TC.t('Sell'), exchange: TC.t('Exchange'), starting_hand: TC.t('Starting hand'), sold: TC.t('Sold'),
  };
  TC.typeWord = (type) => (Object.prototype.hasOwnProperty.call(TYPE_WORDS, type) ? TYPE_WORDS[type]
    : String(type).charAt(0).toUpperCase() + String(type).slice(1).replace(/[-_]/g, ' '));

  /* a number with ``digits`` decimals in the page's language: 0.45 (0,45 in French) */
  TC.num = function (x, digits) {
    return Number(x).toLocaleString(TC.lang, { minimumFractionDigits: digits || 0,
      maximumFractionDigits: digits || 0, useGrouping: false });
  };

  /* 1st, 2nd (1er, 2e in French) */
  TC.ordinal = function (n) {
    if (TC.lang === 'fr') return n === 1 ? '1er' : n + 'e';
    return n + (n % 10 === 1 && n % 100 !== 11 ? 'st' : n % 10 === 2 && n % 100 !== 12 ? 'nd' : n % 10 === 3 && n % 100 !== 13 ? 'rd' : 'th');
  };

  const singular = (n) => (TC.lang === 'fr' ? Math.abs(n) < 2 : n === 1);
  TC.plural = function (n, one, many) {
    const tr = has(one) ? messages[one] : one;
    if (tr.includes('|')) {
      const [a, b] = tr.split('|');
      return `${n} ${singular(n) ? a : b}`;
    }
    const other = many ? (has(many) ? messages[many] : many) : tr + 's';
    return `${n} ${singular(n) ? tr : other}`;
  };
}());
