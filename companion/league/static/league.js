// The league page: everything from /api/league, refreshed when /api/live
// says something arrived (at most a few times a second). Text only
// (textContent): names come from the tables and are never parsed as HTML.
(function () {
  "use strict";
  var pending = false, last = 0, MIN_MS = 250;
  var live = document.getElementById("live");
  /* the page's words in its language: the tables' catalog, as on the tables'
     pages (/i18n.js: TC.t for the page's words, TC.tx for the tables' lines) */
  var TC = window.TC;

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function row(cells, numeric) {
    var tr = el("tr");
    cells.forEach(function (c, i) { tr.appendChild(el("td", c, numeric && numeric[i] ? "num" : "")); });
    return tr;
  }
  function fill(id, rows) {
    var body = document.querySelector("#" + id + " tbody");
    body.replaceChildren.apply(body, rows);
  }
  function us(v) { return v >= 1000 ? TC.num(v / 1000, 1) + " ms" : v + " µs"; }

  function tableCard(t) {
    var card = el("div", null, "card");
    var h = el("h3");
    h.appendChild(el("span", TC.t("Table {id}", {id: t.table})));
    h.appendChild(el("span", t.title || TC.t("no game"), "game"));
    card.appendChild(h);
    /* with the broker down the league hears from no table: none is blamed */
    if (brokerUp === false) card.appendChild(el("div", TC.t("not heard from since the broker went down"), "small"));
    else if (t.online === false) card.appendChild(el("div", TC.t("offline: catching up when back"), "offline"));
    var ul = el("ul");
    (t.players || []).forEach(function (p) {
      var li = el("li", null, p.name === t.current_player ? "turn" : "");
      var dot = el("span", null, "dot");
      if (/^#[0-9a-fA-F]{3,8}$/.test(p.colour || "")) dot.style.background = p.colour;
      li.appendChild(dot);
      var score = t.scores && t.scores[p.name] !== undefined ? " — " + t.scores[p.name] : "";
      li.appendChild(document.createTextNode(p.name + score));
      ul.appendChild(li);
    });
    card.appendChild(ul);
    if (t.finished) card.appendChild(el("div", TC.t("Finished"), "small"));
    if (t.last_race) card.appendChild(el("div", TC.t("Last race: {what}", {what: TC.tx(t.last_race)}), "small"));
    if (t.last_event) card.appendChild(el("div", TC.t("Last: {what}", {what: TC.tx(t.last_event)}), "small"));
    card.appendChild(el("div", TC.t("{n} events received", {n: t.events}), "small"));
    if (t.gaps) card.appendChild(el("div", TC.t("{n} event(s) missing so far", {n: t.gaps}), "gap"));
    return card;
  }

  var STATUS = {done: TC.t("result counted"), playing: TC.t("playing"), finished: TC.t("finished"),
                wrong: TC.t("not this pod"), waiting: TC.t("waiting")};
  function podCard(p) {
    var card = el("div", null, "card pod " + p.status);
    var h = el("h3");
    h.appendChild(el("span", TC.t("Table {id}", {id: p.table})));
    h.appendChild(el("span", STATUS[p.status] || p.status, "status"));
    card.appendChild(h);
    /* the players in seat order (the first starts): seats, not a ranking */
    var ul = el("ul", null, "seats");
    p.players.forEach(function (n, i) {
      ul.appendChild(el("li", TC.t("Seat {n} of {size}: {name}", {n: i + 1, size: p.players.length, name: n})));
    });
    card.appendChild(ul);
    if (p.status !== "done" && p.status !== "waiting") card.appendChild(el("div", TC.tx(p.line), "small"));
    if (p.ranking) card.appendChild(el("div", places(p.ranking), "small"));
    return card;
  }
  function places(ranking) {
    var place = 1, parts = [];
    ranking.forEach(function (g) { parts.push(place + ". " + g.join(" = ")); place += g.length; });
    return parts.join("   ");
  }
  /* 0.67 (0,67 in French) */
  function decimal(x) {
    return TC.num(x, 2);
  }
  /* a game's place in its pod: "2nd of 3" */
  function finish(p) {
    return TC.t("{place} of {size}", {place: TC.ordinal(p.place), size: p.of});
  }
  var MODES = {swiss: TC.t("Swiss"), rotation: TC.t("rotation")};
  function renderConvention(c) {
    if (!c || !document.getElementById("convention")) return;
    document.getElementById("conv-round").textContent = c.title + ", " +
      (c.done ? TC.t("final standings after {n} rounds", {n: c.rounds})
        : TC.t("round {n} of {total}", {n: c.round, total: c.rounds})) + " (" + (MODES[c.mode] || c.mode) + ")";
    var pods = document.getElementById("pods");
    pods.replaceChildren.apply(pods, c.pods.map(podCard));
    var byes = document.getElementById("byes");
    byes.hidden = !c.byes.length;
    byes.textContent = c.byes.length ? TC.t("Sitting out this round (scored as a win): {names}", {names: c.byes.join(", ")}) : "";
    fill("conv-standings", c.standings.map(function (s) {
      return row([s.rank, s.name, decimal(s.points), decimal(s.buchholz), decimal(s.h2h), s.games,
                  s.places.map(finish).join(", ")], [true, false, true, true, true, true, false]);
    }));
    var hist = document.getElementById("conv-history");
    hist.replaceChildren.apply(hist, c.history.slice().reverse().map(function (r) {
      var d = el("details");
      d.appendChild(el("summary", TC.t("Round {n}", {n: r.round})));
      r.pods.forEach(function (p) {
        d.appendChild(el("div", TC.t("Table {id}", {id: p.table}) + ": " + (p.ranking ? places(p.ranking) : p.players.join(", ")), "small"));
      });
      return d;
    }));
  }

  /* the broker as the league last saw it (/api/league's broker): true,
     false (down: shown, and "live" is not said), null (no broker behind
     this page) */
  var brokerUp = null, streamOpen = false;
  function renderBroker(b) {
    brokerUp = b ? !!b.connected : null;
    var box = document.getElementById("broker");
    box.hidden = brokerUp !== false;
    box.textContent = brokerUp === false
      ? TC.t("The league has lost its broker ({url}): the tables keep playing and their games arrive when it is back.", {url: b.broker})
      : "";
    showLive();
  }
  function showLive() {
    var up = streamOpen && brokerUp !== false;
    live.textContent = !streamOpen ? TC.t("reconnecting") : up ? TC.t("live") : TC.t("broker down");
    live.className = up ? "live" : "live off";
  }

  function render(d) {
    renderBroker(d.broker);
    renderConvention(d.convention);
    var tables = document.getElementById("tables");
    if (d.tables.length) tables.replaceChildren.apply(tables, d.tables.map(tableCard));
    fill("standings", d.standings.map(function (p) {
      return row([p.rank, p.name, p.games, p.wins, p.beaten, p.points, p.places.join(" ")],
                 [true, false, true, true, true, true, false]);
    }));
    var results = document.getElementById("results");
    if (d.results.length) results.replaceChildren.apply(results, d.results.slice().reverse().map(function (r) {
      var box = el("div", null, "result");
      box.appendChild(el("strong", TC.t("{game} at table {id}", {game: r.title, id: r.table})));
      var place = 1, parts = [];
      r.ranking.forEach(function (g) {
        parts.push(place + ". " + g.map(function (n) {
          return n + (r.scores[n] !== undefined ? " (" + r.scores[n] + ")" : "");
        }).join(" = "));
        place += g.length;
      });
      box.appendChild(el("div", parts.join("   ")));
      if (r.tiebreak) box.appendChild(el("div", TC.t("Ranking: {how}", {how: TC.tx(r.tiebreak)}), "small"));
      return box;
    }));
    fill("reactions", d.records.reactions.map(function (r) {
      return row([r.player, us(r.reaction_us), r.table, r.game], [false, true, false, false]);
    }));
    fill("finishes", d.records.finishes.map(function (r) {
      return row([TC.t("{first} over {second} ({reason})", {first: r.first, second: r.second, reason: r.reason}), us(r.margin_us), r.table],
                 [false, true, false]);
    }));
  }

  function load() {
    pending = false; last = Date.now();
    fetch("api/league", {cache: "no-cache"}).then(function (r) { return r.json(); })
      .then(render).catch(function () { /* the next update retries */ });
  }
  function soon() {
    if (pending) return;
    pending = true;
    setTimeout(load, Math.max(0, MIN_MS - (Date.now() - last)));
  }

  var retryMs = 2000;
  function connect() {
    var es = new EventSource("api/live");
    es.onopen = function () { streamOpen = true; showLive(); soon(); };
    es.addEventListener("hello", function (ev) {   // a fuller hall: fewer refetches each
      try { MIN_MS = Math.max(250, JSON.parse(ev.data).refresh_ms || 250); } catch (e) { /* keep */ }
    });
    es.onerror = function () {
      streamOpen = false; showLive();
      // a full hall answers 503, after which the browser gives up: try again
      // later, at a random moment so the refused pages do not come back at once
      if (es.readyState === EventSource.CLOSED) {
        retryMs = Math.min(retryMs * 2, 60000);
        setTimeout(connect, retryMs / 2 + Math.random() * retryMs);
      }
    };
    es.addEventListener("open", function () { retryMs = 2000; });
    ["event", "state", "game", "result", "status", "convention", "resync"].forEach(function (k) {
      es.addEventListener(k, soon);
    });
  }
  load();
  connect();
})();
