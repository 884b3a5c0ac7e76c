// What is where on the timeline: a row's jobs by time, and the job that
// never ended under the pointer.

import {formatDuration, formatOffset} from './format.js';
import {layout} from './layout.js';
import {bodyCanvas, data, end, rowHeight, scroller, view, zero} from './page.js';

// First job of `row` that ends after `t` (a lane's jobs never overlap, so
// starts and ends both increase along it).
export function firstEndingAfter(row, t) {
  let lo = row.first, hi = row.first + row.count;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (end[mid] <= t) lo = mid + 1; else hi = mid;
  }
  return lo;
}

// The job that began and never ended under the pointer: {row, slice}, or null.
export function openAt(event) {
  const rect = bodyCanvas.getBoundingClientRect();
  const x = event.clientX - rect.left, y = event.clientY - rect.top;
  const entry = layout[Math.floor((y + scroller.scrollTop) / rowHeight)];
  if (!entry || entry.row === undefined) return null;
  const row = data.rows[entry.row];
  const t = view.t0 + x * (view.t1 - view.t0) / rect.width;
  const slice = (row.open || []).find(([start, stop]) => start <= t && t <= stop);
  return slice ? {row, slice} : null;
}
export function openFacts({row, slice: [start, stop, name, note, line]}) {
  return [['worker', row.label], ['job', name], ['state', note], ['start', formatOffset(start - zero)],
          ['open for', formatDuration(stop - start) + ' (to its log\'s end)'], ['source', row.file + ':' + line]];
}
