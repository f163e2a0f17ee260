// The explorer's only script: sortable tables (mouse and keyboard), filtered and searched, their
// state kept in the page's URL (a permalink); one shared player for every play button and
// timeline of a page; the clip page's playhead; keys (n/p: next/previous query, space:
// play/pause), and the search page's "loading model" note.
"use strict";

function cellValue(row, index, numeric) {
  const cell = row.children[index];
  if (!cell) return numeric ? -Infinity : "";
  const raw = cell.hasAttribute("data-value") ? cell.getAttribute("data-value") : cell.textContent.trim();
  if (!numeric) return raw.toLowerCase();
  const x = parseFloat(raw);
  return Number.isNaN(x) ? -Infinity : x;
}

function sortBy(th, direction) {
  const table = th.closest("table");
  const body = table.tBodies[0];
  const index = Array.prototype.indexOf.call(th.parentNode.children, th);
  const numeric = th.getAttribute("data-sort") === "num";
  const descending = direction ? direction === "desc" : !th.classList.contains("desc");
  table.querySelectorAll("th").forEach(h => { h.classList.remove("asc", "desc"); h.removeAttribute("aria-sort"); });
  th.classList.add(descending ? "desc" : "asc");
  th.setAttribute("aria-sort", descending ? "descending" : "ascending");
  const rows = Array.from(body.rows).map((row, i) => [row, i]);
  rows.sort((a, b) => {
    const x = cellValue(a[0], index, numeric), y = cellValue(b[0], index, numeric);
    const order = x < y ? -1 : x > y ? 1 : a[1] - b[1];
    return descending ? -order : order;
  });
  rows.forEach(([row]) => body.appendChild(row));
  saveState(table);
}

// --- table filters and the permalink -------------------------------------------------------------
// A table with an id keeps its state in the URL's query: ID.sort (a column's key), ID.dir
// (asc/desc), ID.q (text every shown row contains), ID.COLUMN (a column's value, for the columns
// marked data-filter). The server ignores these parameters (a dot in the name).

function columnKey(th) {
  return th.getAttribute("data-key") || th.textContent.trim().toLowerCase().replace(/[^a-z0-9@]+/g, "-");
}

function saveState(table) {
  if (!table.id || !window.history.replaceState) return;
  const url = new URL(window.location.href);
  for (const key of Array.from(url.searchParams.keys())) {
    if (key.startsWith(table.id + ".")) url.searchParams.delete(key);
  }
  const sorted = table.querySelector("thead th.asc, thead th.desc");
  if (sorted) {
    url.searchParams.set(table.id + ".sort", columnKey(sorted));
    url.searchParams.set(table.id + ".dir", sorted.classList.contains("desc") ? "desc" : "asc");
  }
  const tools = document.querySelector(`.table-tools[data-for="${table.id}"]`);
  if (tools) {
    const text = tools.querySelector("input[type=search]").value.trim();
    if (text) url.searchParams.set(table.id + ".q", text);
    tools.querySelectorAll("select").forEach(select => {
      if (select.value) url.searchParams.set(table.id + "." + select.name, select.value);
    });
  }
  window.history.replaceState(null, "", url);
}

function applyFilters(table) {
  const tools = document.querySelector(`.table-tools[data-for="${table.id}"]`);
  if (!tools) return;
  const text = tools.querySelector("input[type=search]").value.trim().toLowerCase();
  const picks = Array.from(tools.querySelectorAll("select")).filter(s => s.value)
    .map(s => [parseInt(s.getAttribute("data-column"), 10), s.value]);
  let shown = 0;
  const rows = Array.from(table.tBodies[0].rows);
  rows.forEach(row => {
    const ok = (!text || row.textContent.toLowerCase().includes(text)) &&
      picks.every(([i, value]) => row.children[i] && row.children[i].textContent.trim() === value);
    row.hidden = !ok;
    if (ok) shown += 1;
  });
  tools.querySelector(".count").textContent = `${shown} of ${rows.length} rows`;
  saveState(table);
}

function addTableTools(table) {
  const params = new URL(window.location.href).searchParams;
  const tools = document.createElement("div");
  tools.className = "table-tools";
  tools.setAttribute("data-for", table.id);
  const search = document.createElement("input");
  search.type = "search";
  search.placeholder = "filter rows";
  search.setAttribute("aria-label", "filter the rows of " + table.id);
  search.value = params.get(table.id + ".q") || "";
  tools.appendChild(search);
  const heads = Array.from(table.tHead.rows[0].children);
  heads.forEach((th, i) => {
    if (!th.hasAttribute("data-filter")) return;
    const name = th.getAttribute("data-filter");
    const values = Array.from(new Set(Array.from(table.tBodies[0].rows)
      .map(r => r.children[i] ? r.children[i].textContent.trim() : ""))).filter(v => v).sort();
    const select = document.createElement("select");
    select.name = name;
    select.setAttribute("data-column", String(i));
    select.setAttribute("aria-label", name);
    select.add(new Option("every " + name, ""));
    values.forEach(v => select.add(new Option(v, v)));
    select.value = values.includes(params.get(table.id + "." + name)) ? params.get(table.id + "." + name) : "";
    select.addEventListener("change", () => applyFilters(table));
    tools.appendChild(select);
  });
  const count = document.createElement("span");
  count.className = "count";
  tools.appendChild(count);
  search.addEventListener("input", () => applyFilters(table));
  const box = table.parentElement.classList.contains("scroll") ? table.parentElement : table;
  box.parentElement.insertBefore(tools, box);
  const key = params.get(table.id + ".sort");
  const th = key && heads.find(h => h.hasAttribute("data-sort") && columnKey(h) === key);
  if (th) sortBy(th, params.get(table.id + ".dir") === "asc" ? "asc" : "desc");
  applyFilters(table);
}

// --- the shared player ------------------------------------------------------------------------

function sharedPlayer() { return document.getElementById("player"); }

function showPlaying(clip) {
  document.querySelectorAll("button.play").forEach(b =>
    b.classList.toggle("playing", b.getAttribute("data-clip") === clip));
  const label = document.getElementById("now-playing");
  if (label && clip) label.textContent = clip;
}

// Play ``clip`` (its audio at ``src``) in the shared player, from ``start`` seconds if given;
// the same clip again without a start toggles play/pause.
function playClip(clip, src, start) {
  const audio = sharedPlayer();
  if (!audio) return;
  document.getElementById("player-bar").hidden = false;
  const same = audio.getAttribute("data-clip") === clip;
  if (same && start === undefined) {
    if (audio.paused) audio.play().catch(() => {}); else audio.pause();
    return;
  }
  if (!same) {
    audio.setAttribute("data-clip", clip);
    audio.src = src;
  }
  if (start !== undefined) audio.currentTime = start;
  showPlaying(clip);
  audio.play().catch(() => {});
}

function onTimelineClick(rect) {
  const svg = rect.closest("svg");
  const start = parseFloat(rect.getAttribute("data-onset")) || 0;
  if (svg.hasAttribute("data-clip")) {
    playClip(svg.getAttribute("data-clip"), svg.getAttribute("data-src"), start);
    return;
  }
  const audio = document.getElementById(svg.getAttribute("data-audio"));  // the clip page's own player
  if (!audio) return;
  audio.currentTime = start;
  audio.play().catch(() => {});
}

function togglePlayer() {
  const audio = sharedPlayer();
  if (audio && audio.getAttribute("data-clip")) {
    if (audio.paused) audio.play().catch(() => {}); else audio.pause();
    return true;
  }
  const own = document.querySelector("main audio");  // the clip page
  if (own) { if (own.paused) own.play().catch(() => {}); else own.pause(); return true; }
  const first = document.querySelector("button.play");
  if (first) { first.click(); return true; }
  return false;
}

// --- the clip page's playhead: a line over the spectrogram and events at the player's time ------

function followPlayhead(svg) {
  const audio = document.getElementById(svg.getAttribute("data-audio"));
  const line = svg.querySelector("line.playhead");
  if (!audio || !line) return;
  const x0 = parseFloat(svg.getAttribute("data-x0"));
  const scale = parseFloat(svg.getAttribute("data-px-per-s"));
  const place = () => {
    const x = (x0 + audio.currentTime * scale).toFixed(2);
    line.setAttribute("x1", x);
    line.setAttribute("x2", x);
  };
  const tick = () => { place(); if (!audio.paused && !audio.ended) window.requestAnimationFrame(tick); };
  audio.addEventListener("play", () => window.requestAnimationFrame(tick));
  ["timeupdate", "seeked", "pause", "ended"].forEach(e => audio.addEventListener(e, place));
}

// --- keys --------------------------------------------------------------------------------------

function typing(target) {
  return target.closest && target.closest("input, textarea, select, button, a, audio, [contenteditable]");
}

function onKey(event) {
  if (event.altKey || event.ctrlKey || event.metaKey) return;
  const th = event.target.closest && event.target.closest("th[data-sort]");
  if (th && (event.key === "Enter" || event.key === " ")) {
    event.preventDefault();
    sortBy(th);
    return;
  }
  if (typing(event.target)) return;
  if (event.key === " ") {
    if (togglePlayer()) event.preventDefault();
  } else if (event.key === "n" || event.key === "p") {
    const link = document.querySelector(event.key === "n" ? "a[rel=next]" : "a[rel=prev]");
    if (link) window.location.href = link.href;
  }
}

// --- the search page's model loading note --------------------------------------------------------

function pollLoading(box) {
  const url = box.getAttribute("data-status");
  const started = Date.now();
  const elapsed = document.getElementById("loading-elapsed");
  const tick = () => {
    fetch(url, {cache: "no-store"}).then(r => r.json()).then(state => {
      if (elapsed) elapsed.textContent = Math.round((Date.now() - started) / 1000) + " s";
      if (state.state === "loading") setTimeout(tick, 500);
      else window.location.reload();  // ready (the results) or failed (the error)
    }).catch(() => setTimeout(tick, 1000));
  };
  tick();
}

document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("table.sortable th[data-sort]").forEach(th => {
    th.tabIndex = 0;
    th.setAttribute("role", "columnheader");
    th.title = th.title || "sort (click, Enter or space)";
    th.addEventListener("click", () => sortBy(th));
  });
  document.querySelectorAll("table.sortable[id]").forEach(addTableTools);
  document.querySelectorAll("svg.sound").forEach(followPlayhead);
  document.querySelectorAll("svg.timeline rect.event, svg.sound rect.event").forEach(rect =>
    rect.addEventListener("click", () => onTimelineClick(rect)));
  document.querySelectorAll("button.play").forEach(button =>
    button.addEventListener("click", () =>
      playClip(button.getAttribute("data-clip"), button.getAttribute("data-src"))));
  const audio = sharedPlayer();
  if (audio) {
    audio.addEventListener("pause", () => showPlaying(""));
    audio.addEventListener("play", () => showPlaying(audio.getAttribute("data-clip") || ""));
  }
  document.addEventListener("keydown", onKey);
  const loading = document.getElementById("loading");
  if (loading) pollLoading(loading);
  document.querySelectorAll("form.compare-pick:not(#compare-query-form) select").forEach(select =>
    select.addEventListener("change", () => select.form.submit()));
});
