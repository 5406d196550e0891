// The planet's search (search.html): loads the index files of the words typed (search/t-*.js) and of
// the posts found (search/d-*.js) with <script src>, which works from a folder opened on the disk too,
// and asks no other site. The words are folded as syndicator/site/search.py folds them.
(function () {
  "use strict";
  var script = document.currentScript;
  var root = script.getAttribute("data-root") || "";
  var form = document.getElementById("search-form");
  var input = document.getElementById("q");
  var results = document.getElementById("results");
  var status = document.getElementById("search-status");
  var SHOWN = 50;
  var PER_FILE = 500;
  var loaded = {};
  var waiting = {};
  var docs = {};
  var terms = {};
  var asked = 0;

  function pairName(prefix) {
    return "t-" + Array.from(prefix).map(function (c) {
      return c.codePointAt(0).toString(16).padStart(4, "0");
    }).join("-");
  }
  var pairs = null;
  window.syndicatorSearch = {
    pairs: function (perFile, names) { PER_FILE = perFile; pairs = new Set(names); done("pairs"); },
    docs: function (number, rows) { docs[number] = rows; done("d-" + number); },
    terms: function (prefix, table) { terms[prefix] = table; done(pairName(prefix)); }
  };
  function done(name) {
    loaded[name] = true;
    var then = waiting[name] || [];
    waiting[name] = [];
    then.forEach(function (f) { f(); });
  }
  function load(name, then) {
    if (loaded[name]) { then(); return; }
    (waiting[name] = waiting[name] || []).push(then);
    if (waiting[name].length > 1) return;
    var tag = document.createElement("script");
    tag.src = root + "search/" + name + ".js";
    tag.onerror = function () { done(name); };  // not there: no word of this pair is in the index
    document.head.appendChild(tag);
  }
  function loadAll(names, then) {
    var left = names.length;
    if (!left) { then(); return; }
    names.forEach(function (name) { load(name, function () { if (--left === 0) then(); }); });
  }

  var UNSPACED = /[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]/u;
  function fold(text) {
    return text.toLowerCase().replace(/ß/g, "ss").normalize("NFKD").replace(/\p{M}/gu, "");
  }
  function words(text) {
    var found = [];
    (fold(text).match(/[\p{L}\p{N}_]+/gu) || []).forEach(function (word) {
      Array.from(word).forEach(function (c) { if (UNSPACED.test(c)) found.push(c); });
      word.split(UNSPACED).forEach(function (part) { if (Array.from(part).length >= 2) found.push(part); });
    });
    return found.filter(function (w, i) { return found.indexOf(w) === i; });
  }
  function prefixOf(word) { return Array.from(word).slice(0, 2).join(""); }
  // The documents holding a word, or a word starting with it (a word being typed).
  function holding(word) {
    var table = terms[prefixOf(word)] || {};
    var found = new Set();
    Object.keys(table).forEach(function (term) {
      if (term.lastIndexOf(word, 0) === 0) table[term].forEach(function (n) { found.add(n); });
    });
    return found;
  }
  function say(template, count) { status.textContent = template.replace("%(count)s", String(count)); }
  function show(numbers) {
    results.textContent = "";
    numbers.forEach(function (n) {
      var row = docs[Math.floor(n / PER_FILE)][n % PER_FILE];
      var item = document.createElement("li");
      var link = document.createElement("a");
      link.href = /^[a-z][a-z0-9+.-]*:/i.test(row[0]) ? row[0] : root + row[0];
      link.textContent = row[1];
      var meta = document.createElement("span");
      meta.className = "meta";
      meta.textContent = row[2] + " · " + row[3].slice(0, 10);
      var snippet = document.createElement("p");
      snippet.textContent = row[4];
      item.append(link, " ", meta, snippet);
      results.appendChild(item);
    });
  }
  function search(query) {
    var wanted = words(query);
    var mine = ++asked;
    if (!wanted.length) { results.textContent = ""; status.textContent = ""; return; }
    load("pairs", function () {
      var names = wanted.map(function (w) { return pairName(prefixOf(w)); });
      loadAll(names.filter(function (name) { return pairs && pairs.has(name); }), function () { answer(mine, wanted); });
    });
  }
  // The posts holding every word wanted, newest published first, shown once their files are loaded.
  function answer(mine, wanted) {
    if (mine !== asked) return;
    var found = null;
    wanted.forEach(function (w) {
      var these = holding(w);
      found = found === null ? these : new Set(Array.from(found).filter(function (n) { return these.has(n); }));
    });
    var numbers = Array.from(found).sort(function (a, b) { return b - a; });
    if (!numbers.length) { results.textContent = ""; say(form.getAttribute("data-none"), 0); return; }
    var shown = numbers.slice(0, SHOWN);
    var files = shown.map(function (n) { return "d-" + Math.floor(n / PER_FILE); });
    loadAll(files.filter(function (f, i) { return files.indexOf(f) === i; }), function () {
      if (mine !== asked) return;
      show(shown);
      say(form.getAttribute("data-found"), numbers.length);
    });
  }
  var timer = null;
  input.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { search(input.value); }, 150);
  });
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    search(input.value);
    if (history.replaceState) history.replaceState(null, "", "?q=" + encodeURIComponent(input.value));
  });
  var given = new URLSearchParams(location.search).get("q");
  if (given) { input.value = given; search(given); }
})();
