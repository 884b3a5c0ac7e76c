// The critical path of each step: the toolbar's switch and its go-to button,
// and the path's outline and links.

import {select} from './details.js';
import {redraw} from './frame.js';
import {layoutRowOfJob} from './layout.js';
import {data, end, jobs, rowHeight, rowOfJob, scroller, view} from './page.js';
import {setCollapsed} from './rows.js';

// ---- the critical path of each step (jobviz found it: docs/analysis.md):
// its jobs outlined, joined in time order; a toolbar switch shows or hides it.
const critical = data.critical || [];
const paths = data.path || [];

export let showCritical = critical.length > 0;
if (critical.length > 0) {
  const label = document.createElement('label');
  label.className = 'critical-toggle';
  const box = document.createElement('input');
  box.type = 'checkbox';
  box.id = 'critical-path';
  box.checked = true;
  box.addEventListener('change', () => { showCritical = box.checked; redraw(); });
  label.append(box, ' critical path (' + paths.length + (paths.length === 1 ? ' step)' : ' steps)'));
  // Goes to the next step's critical path: the view spans that step, the
  // path's first job selected, its row scrolled into view.
  const go = document.createElement('button');
  go.type = 'button';
  go.id = 'go-critical';
  go.textContent = 'go to critical path ▸';
  go.title = 'Show the next step\'s critical path (its jobs outlined and joined)';
  let nextPath = 0;
  go.addEventListener('click', () => {
    const chain = paths[nextPath % paths.length];
    nextPath++;
    if (!chain || chain.length === 0) return;
    showCritical = box.checked = true;
    const first = chain[0], lastJob = chain[chain.length - 1];
    const machines = new Set(chain.map((i) => data.rows[rowOfJob[i]].machine));
    setCollapsed([...machines], false);
    const pad = (end[lastJob] - jobs.start[first]) * 0.05;
    view.t0 = jobs.start[first] - pad;
    view.t1 = end[lastJob] + pad;
    scroller.scrollTop = Math.max(0, (layoutRowOfJob[first] - 1) * rowHeight);
    select(first);
    redraw();
  });
  // First after "Open in Perfetto", before the row controls (rows.js).
  document.getElementById('open-perfetto').after(label, go);
}

export function drawCritical(ctx, width, top, firstRow, lastRow, scale) {
  ctx.save();
  ctx.strokeStyle = '#d6336c';
  ctx.lineWidth = 1.5;
  for (const i of critical) {
    const r = layoutRowOfJob[i];
    if (r < 0 || r < firstRow || r > lastRow) continue;
    const x0 = (jobs.start[i] - view.t0) * scale, x1 = (end[i] - view.t0) * scale;
    if (x1 < 0 || x0 > width) continue;
    ctx.strokeRect(x0, r * rowHeight - top + 1.5, Math.max(x1 - x0, 2), rowHeight - 3);
  }
  ctx.beginPath();
  for (const chain of paths) linkJobs(ctx, chain, width, top, scale, false);
  ctx.stroke();
  ctx.restore();
}
// Lines from each job of `chain` (in time order) to the next: from its end
// to the next one's start, row middle to row middle; with `handOffs`, only
// between rows, with an arrow head at the receiver. Jobs of collapsed
// machines, and links wholly off screen, are left out.
export function linkJobs(ctx, chain, width, top, scale, handOffs) {
  for (let k = 1; k < chain.length; k++) {
    const a = chain[k - 1], b = chain[k], ra = layoutRowOfJob[a], rb = layoutRowOfJob[b];
    if (ra < 0 || rb < 0 || (handOffs && ra === rb)) continue;
    const xa = (end[a] - view.t0) * scale, xb = (jobs.start[b] - view.t0) * scale;
    if ((xa < 0 && xb < 0) || (xa > width && xb > width)) continue;
    const ya = ra * rowHeight - top + rowHeight / 2, yb = rb * rowHeight - top + rowHeight / 2;
    ctx.moveTo(xa, ya);
    ctx.lineTo(xb, yb);
    if (!handOffs) continue;
    const angle = Math.atan2(yb - ya, xb - xa);
    for (const side of [-0.4, 0.4]) {
      ctx.moveTo(xb, yb);
      ctx.lineTo(xb - 6 * Math.cos(angle + side), yb - 6 * Math.sin(angle + side));
    }
  }
}
