// The explorer's only script: sortable tables, and clicking an event in a timeline seeks its player.
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
  table.querySelectorAll("th").forEach(h => h.classList.remove("asc", "desc"));
  th.classList.add(descending ? "desc" : "asc");
  const rows = Array.from(body.rows).map((row, i) => [row, i]);
  rows.sort((a, b) => {
    const x = cellValue(a[0], index, numeric), y = cellValue(b[0], index, numeric);
    const order = x < y ? -1 : x > y ? 1 : a[1] - b[1];
    return descending ? -order : order;
  });
  rows.forEach(([row]) => body.appendChild(row));
}
function seek(rect) {
  const svg = rect.closest("svg");
  const id = svg && svg.getAttribute("data-audio");
  const audio = id && document.getElementById(id);
  if (!audio) return;
  audio.currentTime = parseFloat(rect.getAttribute("data-onset")) || 0;
  audio.play().catch(() => {});
}
document.addEventListener("DOMContentLoaded", () => {
  document.querySelectorAll("table.sortable th[data-sort]").forEach(th =>
    th.addEventListener("click", () => sortBy(th)));
  document.querySelectorAll("svg.timeline[data-audio] rect.event").forEach(rect =>
    rect.addEventListener("click", () => seek(rect)));
});
