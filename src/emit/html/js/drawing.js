// Drawing the ruler, the step row and the jobs, the selected job's
// hand-offs and the jobs that never ended (frame.js calls them each frame).

import {drawCritical, linkJobs, showCritical} from './critical.js';
import {firstEndingAfter} from './find.js';
import {formatTick} from './format.js';
import {sizeCanvas} from './frame.js';
import {collapsed, layout} from './layout.js';
import {bodyCanvas, colours, data, end, headCanvas, jobs, rowHeight, scroller, view, zero} from './page.js';
import {jumped} from './rows.js';
import {handOffs, selected} from './selection.js';
import {showWhatIf} from './what_if.js';

// ---- drawing
const xOf = (t, width) => (t - view.t0) * width / (view.t1 - view.t0);

function niceStep(span, pixels) {
  const raw = span / Math.max(pixels / 110, 1);
  const power = Math.pow(10, Math.floor(Math.log10(raw)));
  for (const m of [1, 2, 5, 10]) if (m * power >= raw) return m * power;
  return 10 * power;
}

export function drawHead() {
  const {ctx, width} = sizeCanvas(headCanvas, 2 * rowHeight);
  ctx.clearRect(0, 0, width, 2 * rowHeight);
  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  const tick = niceStep(view.t1 - view.t0, width);
  ctx.fillStyle = '#5d6675';
  ctx.strokeStyle = '#c4c9d1';
  for (let t = Math.ceil((view.t0 - zero) / tick) * tick + zero; t <= view.t1; t += tick) {
    const x = xOf(t, width);
    ctx.beginPath(); ctx.moveTo(x + 0.5, rowHeight - 5); ctx.lineTo(x + 0.5, rowHeight); ctx.stroke();
    ctx.fillText(formatTick(t - zero, tick), x + 3, rowHeight / 2 - 1);
  }
  const steps = data.steps;
  for (let s = 0; s < steps.step.length; s++) {
    if (steps.end[s] < view.t0 || steps.start[s] > view.t1) continue;
    const x0 = xOf(steps.start[s], width), x1 = xOf(steps.end[s], width);
    ctx.fillStyle = s % 2 ? '#8a94a6' : '#a6afbf';
    ctx.fillRect(x0, rowHeight + 2, Math.max(x1 - x0, 1), rowHeight - 4);
    if (x1 - x0 > 40) {
      ctx.fillStyle = '#fff';
      ctx.fillText(steps.name[s], Math.max(x0, 0) + 4, rowHeight * 1.5);
    }
  }
}

const IDLE = 'rgba(214, 51, 108, 0.10)';
const OPEN_FILL = 'rgba(200, 30, 30, 0.12)', OPEN_EDGE = '#b3261e';  // a job that never ended
// The steps' span (measured, or the what-if's replay while its switch is on).
function idleSpan() {
  const steps = data.steps;
  if (!steps.step.length) return null;
  let first = Infinity, last = -Infinity;
  for (let s = 0; s < steps.step.length; s++) { first = Math.min(first, steps.start[s]); last = Math.max(last, steps.end[s]); }
  return [first, last];
}

// A job's label leads with what identifies it: the full "forward 3" where
// it fits, else "F3" (initials of the type's words, then the micro-batch).
const shortNames = data.types.map((type) =>
  type.split('_').filter((w) => w).map((w) => (/^\d+$/.test(w) ? w : w[0].toUpperCase())).join(''));
const labelWidths = new Map();
function textWidth(ctx, text) {
  let w = labelWidths.get(text);
  if (w === undefined) { w = ctx.measureText(text).width; if (labelWidths.size < 5000) labelWidths.set(text, w); }
  return w;
}
function labelFor(ctx, i, room) {
  if (room < 10) return '';
  const full = data.types[jobs.type[i]] + ' ' + jobs.mb[i];
  if (textWidth(ctx, full) <= room) return full;
  const short = shortNames[jobs.type[i]] + jobs.mb[i];
  return textWidth(ctx, short) <= room + 4 ? short : '';
}

// The selected job's hand-offs (selection.js): dashed, an arrow at each receiver.
function drawHandOffs(ctx, width, top, scale) {
  ctx.save();
  ctx.strokeStyle = '#1d2330';
  ctx.lineWidth = 1.25;
  ctx.setLineDash([4, 3]);
  ctx.beginPath();
  linkJobs(ctx, handOffs, width, top, scale, true);
  ctx.stroke();
  ctx.restore();
}

// A job that began and never ended: a dashed box to its log's end, named.
function drawOpen(ctx, row, y, width, scale) {
  for (const [start, stop, name] of row.open || []) {
    if (stop < view.t0 || start > view.t1) continue;
    const x0 = (start - view.t0) * scale, x1 = Math.max((stop - view.t0) * scale, x0 + 2);
    ctx.fillStyle = OPEN_FILL;
    ctx.fillRect(x0, y + 2, x1 - x0, rowHeight - 4);
    ctx.save();
    ctx.strokeStyle = OPEN_EDGE;
    ctx.setLineDash([4, 3]);
    ctx.strokeRect(x0 + 0.5, y + 2.5, x1 - x0 - 1, rowHeight - 5);
    ctx.beginPath(); ctx.rect(x0, y, x1 - x0, rowHeight); ctx.clip();
    ctx.fillStyle = OPEN_EDGE;
    if (x1 - x0 > 20) ctx.fillText(name, Math.max(x0, 0) + 3, y + rowHeight / 2);
    ctx.restore();
  }
}
// A collapsed machine's header shows its rows' activity: each row's jobs
// drawn faintly over one another, so the strip darkens where more of its
// workers are busy and stays pale through a bubble.
const workerRowsOf = new Map();  // machine -> its workers' own rows (no lanes), found once
for (const row of data.rows) {
  if (row.lane) continue;
  if (!workerRowsOf.has(row.machine)) workerRowsOf.set(row.machine, []);
  workerRowsOf.get(row.machine).push(row);
}
function drawBusyStrip(ctx, machine, y, width, scale) {
  const rows = workerRowsOf.get(machine) || [];
  ctx.save();
  ctx.fillStyle = '#3b5b8a';
  ctx.globalAlpha = Math.max(0.05, 0.8 / rows.length);
  for (const row of rows) {
    const last = row.first + row.count;
    let x0 = -1, x1 = -1;  // runs of jobs closer than a pixel merge: one rectangle each
    for (let i = firstEndingAfter(row, view.t0); i < last && jobs.start[i] < view.t1; i++) {
      const a = (jobs.start[i] - view.t0) * scale, b = (end[i] - view.t0) * scale;
      if (a - x1 < 1) { x1 = Math.max(x1, b); continue; }
      if (x1 > x0) ctx.fillRect(x0, y + 4, Math.max(x1 - x0, 1), rowHeight - 8);
      x0 = a; x1 = b;
    }
    if (x1 > x0) ctx.fillRect(x0, y + 4, Math.max(x1 - x0, 1), rowHeight - 8);
  }
  ctx.restore();
}

export function drawBody() {
  const height = parseFloat(scroller.style.height);
  const {ctx, width} = sizeCanvas(bodyCanvas, height);
  ctx.clearRect(0, 0, width, height);
  const top = scroller.scrollTop;
  const firstRow = Math.floor(top / rowHeight), lastRow = Math.min(layout.length - 1, Math.floor((top + height) / rowHeight));
  const scale = width / (view.t1 - view.t0);
  ctx.font = '10px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  // Step boundaries, faint, behind the jobs.
  ctx.fillStyle = '#eef1f5';
  for (let s = 0; s < data.steps.step.length; s++) {
    const x = xOf(data.steps.start[s], width);
    if (x >= 0 && x <= width) ctx.fillRect(Math.floor(x), 0, 1, height);
  }
  let selectedBox = null;
  const idle = idleSpan();
  for (let r = firstRow; r <= lastRow; r++) {
    const y = r * rowHeight - top;
    const entry = layout[r];
    if (entry.machine !== undefined) {
      ctx.fillStyle = '#e7ebf0';
      ctx.fillRect(0, y, width, rowHeight);
      if (collapsed.has(entry.machine)) drawBusyStrip(ctx, entry.machine, y, width, scale);
      continue;
    }
    if (entry.row === jumped) {
      ctx.fillStyle = 'rgba(255, 214, 10, 0.35)';
      ctx.fillRect(0, y, width, rowHeight);
    }
    const row = data.rows[entry.row];
    const last = row.first + row.count;
    // Idle time shaded from the first step's start to the last one's end,
    // under the jobs: the bubble (and time between steps) shows as tinted
    // gaps. Overlap lanes hold no idle time of their own. One rectangle a
    // row, whatever the number of steps.
    if (!row.lane && idle) {
      const x0 = Math.max(xOf(idle[0], width), 0), x1 = Math.min(xOf(idle[1], width), width);
      if (x1 > x0) { ctx.fillStyle = IDLE; ctx.fillRect(x0, y + 2, x1 - x0, rowHeight - 4); }
    }
    // Jobs narrower than 3 px merge with their neighbour of the same type;
    // wider ones keep a 1 px gap at their end, so back-to-back jobs stay
    // apart at every zoom; a gap of a pixel or more (a bubble) always shows.
    let runType = -1, runX0 = 0, runX1 = -1;
    const flush = () => {
      if (runType < 0) return;
      ctx.fillStyle = colours[runType];
      ctx.fillRect(runX0, y + 2, Math.max(runX1 - runX0, 1), rowHeight - 4);
    };
    for (let i = firstEndingAfter(row, view.t0); i < last && jobs.start[i] < view.t1; i++) {
      const x0 = (jobs.start[i] - view.t0) * scale, x1 = (end[i] - view.t0) * scale;
      if (i === selected) selectedBox = [x0, y, x1 - x0];
      if (x1 - x0 < 3) {
        if (jobs.type[i] === runType && x0 - runX1 < 1) { runX1 = Math.max(runX1, x1); continue; }
        flush();
        runType = jobs.type[i]; runX0 = x0; runX1 = x1;
        continue;
      }
      flush();
      runType = -1;
      ctx.fillStyle = colours[jobs.type[i]];
      ctx.fillRect(x0, y + 2, x1 - x0 - 1, rowHeight - 4);
      const text = labelFor(ctx, i, x1 - x0 - 5);
      if (text) {
        ctx.fillStyle = '#fff';
        ctx.save();
        ctx.beginPath(); ctx.rect(x0, y, x1 - x0 - 1, rowHeight); ctx.clip();
        ctx.fillText(text, Math.max(x0, 0) + 3, y + rowHeight / 2);
        ctx.restore();
      }
    }
    flush();
    drawOpen(ctx, row, y, width, scale);
  }
  if (showCritical && !showWhatIf) drawCritical(ctx, width, top, firstRow, lastRow, scale);
  if (selected >= 0) drawHandOffs(ctx, width, top, scale);
  if (selectedBox) {
    ctx.strokeStyle = '#111';
    ctx.lineWidth = 2;
    ctx.strokeRect(selectedBox[0], selectedBox[1] + 1, Math.max(selectedBox[2], 2), rowHeight - 2);
  }
}

