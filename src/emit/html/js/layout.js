// The rows on screen: a machine header row, then its workers' rows (one per
// lane), unless the machine is collapsed; where each job is drawn.

import {data, jobCount} from './page.js';

// ---- layout: a machine header row, then its workers' rows (one per lane),
// unless the machine is collapsed (a click on its header). Rebuilt, with
// what derives from it, by rebuildRows() on each collapse or expand.
export let layout = [];  // {machine} or {row}
export const collapsed = new Set();  // machine indices

export const rowsOf = new Map();  // machine -> its rows' count (lanes included)
data.rows.forEach((row) => rowsOf.set(row.machine, (rowsOf.get(row.machine) || 0) + 1));
export function layOut() {
  layout = [];
  data.rows.forEach((row, index) => {
    if (layout.length === 0 || data.rows[index - 1].machine !== row.machine) layout.push({machine: row.machine});
    if (!collapsed.has(row.machine)) layout.push({row: index});
  });
}

export const layoutRowOfJob = new Int32Array(jobCount);  // the layout row (headers included) a job is drawn in; -1: collapsed
export function indexLayout() {
  layoutRowOfJob.fill(-1);
  layout.forEach((entry, r) => {
    if (entry.row !== undefined) layoutRowOfJob.fill(r, data.rows[entry.row].first, data.rows[entry.row].first + data.rows[entry.row].count);
  });
}
