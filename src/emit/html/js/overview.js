// The overview above the rows: every machine's busy share over the run.

import {redraw, sizeCanvas} from './frame.js';
import {layout} from './layout.js';
import {data, end, full, jobCount, jobs, root, rowHeight, rowOfJob, scroller, view} from './page.js';

// ---- overview: every machine's busy share over the whole run, one strip
// per machine (machines share a strip beyond 96), a box around what the
// rows show; computed into a bitmap once (and again when the what-if switch
// moves the jobs), scaled on each draw.
const overviewCanvas = root.querySelector('canvas.overview');
const strips = Math.min(data.machines.length, 96);
const stripOf = (m) => Math.floor(m * strips / data.machines.length);
const stripHeight = Math.max(2, Math.min(12, Math.floor(96 / strips)));
const bins = 600;
const overviewBitmap = document.createElement('canvas');
export function paintOverview() {
  const busy = new Float64Array(strips * bins), rows = new Float64Array(strips);
  for (const row of data.rows) if (!row.lane) rows[stripOf(row.machine)]++;
  const span = full.t1 - full.t0, binSpan = span / bins;
  for (let i = 0; i < jobCount; i++) {
    const s = stripOf(data.rows[rowOfJob[i]].machine);
    let t = jobs.start[i];
    while (t < end[i]) {
      const b = Math.min(bins - 1, Math.floor((t - full.t0) / binSpan));
      const binEnd = full.t0 + (b + 1) * binSpan, upTo = Math.min(end[i], binEnd);
      busy[s * bins + b] += upTo - t;
      if (upTo <= t) break;  // (rounding at the last bin)
      t = upTo;
    }
  }
  overviewBitmap.width = bins;
  overviewBitmap.height = strips;
  const ctx = overviewBitmap.getContext('2d');
  const image = ctx.createImageData(bins, strips);
  for (let s = 0; s < strips; s++)
    for (let b = 0; b < bins; b++) {
      const share = rows[s] ? Math.min(1, busy[s * bins + b] / (binSpan * rows[s])) : 0;
      const p = (s * bins + b) * 4;
      image.data[p] = 36; image.data[p + 1] = 89; image.data[p + 2] = 196; image.data[p + 3] = Math.round(255 * share);
    }
  ctx.putImageData(image, 0, 0);
}
paintOverview();
export function drawOverview() {
  const height = strips * stripHeight;
  const {ctx, width} = sizeCanvas(overviewCanvas, height);
  ctx.clearRect(0, 0, width, height);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(overviewBitmap, 0, 0, width, height);
  // The box: the time the view shows, the machines of the rows in sight.
  const span = full.t1 - full.t0;
  const x0 = (view.t0 - full.t0) / span * width, x1 = (view.t1 - full.t0) / span * width;
  const top = scroller.scrollTop, bottom = top + parseFloat(scroller.style.height);
  let first = -1, last = -1;
  for (let r = Math.floor(top / rowHeight); r < layout.length && r * rowHeight < bottom; r++) {
    const m = layout[r].machine !== undefined ? layout[r].machine : data.rows[layout[r].row].machine;
    if (first < 0) first = m;
    last = m;
  }
  ctx.strokeStyle = '#d6336c';
  ctx.lineWidth = 1.5;
  if (first >= 0) ctx.strokeRect(Math.max(x0, 0.75), stripOf(first) * stripHeight + 0.75,
                                 Math.min(x1, width - 0.75) - Math.max(x0, 0.75), (stripOf(last) - stripOf(first) + 1) * stripHeight - 1.5);
}
// Click or drag in the overview: the view centres on that time, the rows
// scroll to that machine.
let overviewDrag = false;
function goToOverview(event) {
  const rect = overviewCanvas.getBoundingClientRect();
  const fx = Math.min(Math.max((event.clientX - rect.left) / rect.width, 0), 1);
  const t = full.t0 + fx * (full.t1 - full.t0), half = (view.t1 - view.t0) / 2;
  view.t0 = t - half; view.t1 = t + half;
  const strip = Math.min(strips - 1, Math.max(0, Math.floor((event.clientY - rect.top) / stripHeight)));
  const m = data.machines.findIndex((_, k) => stripOf(k) === strip);
  const r = layout.findIndex((entry) => entry.machine === m);
  if (r >= 0) scroller.scrollTop = r * rowHeight;
  redraw();
}
overviewCanvas.addEventListener('mousedown', (event) => { overviewDrag = true; goToOverview(event); event.preventDefault(); });
window.addEventListener('mousemove', (event) => { if (overviewDrag) goToOverview(event); });
window.addEventListener('mouseup', () => { overviewDrag = false; });
