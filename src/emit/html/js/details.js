// What a job is: the tooltip on hover, the details on click.

import {firstEndingAfter, openAt, openFacts} from './find.js';
import {formatDuration, formatOffset, stepOf} from './format.js';
import {redraw} from './frame.js';
import {layout} from './layout.js';
import {bodyCanvas, data, detail, jobs, rowHeight, rowOfJob, scroller, tip, view, zero} from './page.js';
import {setSelected} from './selection.js';

// ---- hover and click detail
export function jobAt(event) {
  const rect = bodyCanvas.getBoundingClientRect();
  const x = event.clientX - rect.left, y = event.clientY - rect.top;
  if (x < 0 || y < 0 || x > rect.width || y > rect.height) return -1;
  const entry = layout[Math.floor((y + scroller.scrollTop) / rowHeight)];
  if (!entry || entry.row === undefined) return -1;
  const row = data.rows[entry.row];
  const t = view.t0 + x * (view.t1 - view.t0) / rect.width;
  const slack = 2 * (view.t1 - view.t0) / rect.width;  // a thin job is still hit within 2 px
  const i = firstEndingAfter(row, t - slack);
  return i < row.first + row.count && jobs.start[i] <= t + slack ? i : -1;
}
function jobFacts(i) {
  const row = data.rows[rowOfJob[i]];
  return [
    ['worker', row.label], ['type', data.types[jobs.type[i]]], ['job id', String(jobs.id[i])],
    ['micro-batch', String(jobs.mb[i])], ['step', stepOf(i)],
    ['start', formatOffset(jobs.start[i] - zero)], ['duration', formatDuration(jobs.dur[i])],
    ['source', row.file + ':' + jobs.line[i]],
  ];
}
export function hover(event) {
  const i = jobAt(event);
  const open = i < 0 ? openAt(event) : null;
  if (i < 0 && !open) { tip.style.display = 'none'; return; }
  tip.textContent = (open ? openFacts(open) : jobFacts(i)).map(([k, v]) => k + ': ' + v).join('\n');
  tip.style.display = 'block';
  tip.style.left = Math.min(event.clientX + 14, window.innerWidth - tip.offsetWidth - 8) + 'px';
  tip.style.top = Math.min(event.clientY + 14, window.innerHeight - tip.offsetHeight - 8) + 'px';
}
bodyCanvas.addEventListener('mouseleave', () => { tip.style.display = 'none'; });
export function select(i) {
  setSelected(i);
  detail.replaceChildren();
  if (i >= 0) {
    const table = document.createElement('table');
    for (const [key, value] of jobFacts(i)) {
      const tr = table.insertRow();
      tr.insertCell().textContent = key;
      tr.insertCell().textContent = value;
    }
    detail.appendChild(table);
  } else {
    detail.textContent = 'Click a job for its details.';
  }
  redraw();
}
