// The jobviz HTML report's timeline: a canvas renderer over the job table
// that src/emit/html_timeline.cc embeds as JSON (#jobviz-data). Nothing here
// computes a figure; it draws what jobviz computed. One canvas for the rows,
// one for the ruler and step row; row labels are DOM nodes (a few thousand at
// most), jobs are not (hundreds of thousands). One ES module per concern
// (this folder), joined into the page's one script at build time
// (src/emit/html/embed.py, in the order meson.build lists them).
//
// The page's data and elements: the job table jobviz embedded (#jobviz-data),
// each job's row and end, the colours of the job types, the time range and
// the view (nanoseconds after data.origin_utc), and the DOM elements the
// other modules draw into.

export const data = JSON.parse(document.getElementById('jobviz-data').textContent);
export const jobs = data.jobs;
export const jobCount = jobs.start.length;
export const root = document.getElementById('timeline');
export const rowHeight = parseInt(getComputedStyle(root).getPropertyValue('--row'), 10) || 18;

// ---- colours: one hue per family of job type, chunks and lanes by lightness
const families = [
  [/^forward/, 212], [/^backward_w/, 28], [/^backward/, 140], [/^optimizer/, 275],
  [/^lr$/, 330], [/^(recv|send)_/, 48], [/^default$/, 190],
];
function colourOf(type) {
  let hue = -1;
  for (const [pattern, h] of families) if (pattern.test(type)) { hue = h; break; }
  if (hue < 0) {
    let hash = 0;
    for (const c of type) hash = (hash * 31 + c.charCodeAt(0)) >>> 0;
    hue = hash % 360;
  }
  const chunk = /(\d+)$/.exec(type);
  const lightness = 52 + (chunk ? (parseInt(chunk[1], 10) % 3) * 10 : 0);
  return `hsl(${hue}, 62%, ${lightness}%)`;
}
export const colours = data.types.map(colourOf);

// ---- per job: its row (jobs are grouped by row, sorted by start)
export const rowOfJob = new Int32Array(jobCount);
data.rows.forEach((row, index) => rowOfJob.fill(index, row.first, row.first + row.count));
export const end = new Float64Array(jobCount);
for (let i = 0; i < jobCount; i++) end[i] = jobs.start[i] + jobs.dur[i];

// ---- time range and view (nanoseconds after data.origin_utc). Every time
// the page shows (ruler, tooltip, details) counts from data.zero, the run
// start that the header and the Steps table count from too.
export const zero = data.zero || 0;
let minTime = Infinity, maxTime = -Infinity;
for (let i = 0; i < jobCount; i++) {
  if (jobs.start[i] < minTime) minTime = jobs.start[i];
  if (end[i] > maxTime) maxTime = end[i];
}
// Jobs that never ended (the watchdog's lines): open to their log's end.
data.rows.forEach((row) => (row.open || []).forEach(([start, stop]) => {
  minTime = Math.min(minTime, start);
  maxTime = Math.max(maxTime, stop);
}));
if (!isFinite(minTime)) { minTime = 0; maxTime = 1; }
export const pad = Math.max((maxTime - minTime) * 0.01, 1);
export const full = {t0: minTime - pad, t1: maxTime + pad};
export const view = {t0: full.t0, t1: full.t1};

// ---- DOM
export const labels = root.querySelector('.rows');
export const scroller = root.querySelector('.scroller');
export const inner = root.querySelector('.inner');
export const bodyCanvas = root.querySelector('canvas.body');
export const headCanvas = root.querySelector('canvas.head');
export const tip = document.getElementById('tip');
export const detail = document.getElementById('detail');
