// The explorer's only script: sortable tables (mouse and keyboard), one shared player for every
// play button and timeline of a page, keys (n/p: next/previous query, space: play/pause), and the
// search page's "loading model" note.
"use strict";

function cellValue(row, index, numeric) {
  const cell = row.children[index];
  if (!cell) return numeric ? -Infinity : "";
  const raw = cell.hasAttribute("data-value") ? cell.getAttribute("data-value") : cell.textContent.trim();
  if (!numeric) return raw.toLowerCase();
  const x = parseFloat(raw);
  return Number.isNaN(x) ? -Infinity : x;
}

function sortBy(th) {
  const table = th.closest("table");
  const body = table.tBodies[0];
  const index = Array.prototype.indexOf.call(th.parentNode.children, th);
  const numeric = th.getAttribute("data-sort") === "num";
  const descending = !th.classList.contains("desc");
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
  document.querySelectorAll("svg.timeline rect.event").forEach(rect =>
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
  document.querySelectorAll("form.compare-pick select").forEach(select =>
    select.addEventListener("change", () => select.form.submit()));
});
