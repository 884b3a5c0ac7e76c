// The first draw, and what the browser checks read (window.jobvizReport).

import {select} from './details.js';
import {drawBody, drawHead} from './drawing.js';
import {onRedraw, stats} from './frame.js';
import {collapsed, layout} from './layout.js';
import {drawOverview} from './overview.js';
import {data, end, full, jobCount, jobs, scroller, view} from './page.js';
import {setCollapsed} from './rows.js';
import {selected} from './selection.js';

// What `jobviz follow --serve` carries from one report to the next, so that
// a new report opens where the user left the old one: the time window (by
// wall time: the origin moves as old steps are dropped; one that showed the
// run's end keeps showing it), the machines collapsed (by name) and the
// rows' scroll.
function viewState() {
  const atEnd = view.t1 >= full.t1 - (full.t1 - full.t0) * 0.002;
  return {origin: data.origin_ns, t0: view.t0, t1: view.t1, atEnd,
          collapsed: [...collapsed].map((m) => data.machines[m].name), scrollTop: scroller.scrollTop};
}
function restoreView(s) {
  const shift = Number(BigInt(s.origin) - BigInt(data.origin_ns));
  let t0 = s.t0 + shift, t1 = s.t1 + shift;
  if (s.atEnd) { const span = t1 - t0; t1 = full.t1; t0 = t1 - span; }
  view.t0 = t0; view.t1 = t1;
  const names = new Set(s.collapsed);
  setCollapsed(data.machines.map((m, i) => (names.has(m.name) ? i : -1)).filter((i) => i >= 0), true);
  scroller.scrollTop = s.scrollTop;
}

onRedraw(drawOverview);
onRedraw(drawHead);
onRedraw(drawBody);
select(-1);
drawOverview();
drawHead();
drawBody();
stats.loadMs = performance.now();
window.jobvizReport = {view, stats, jobCount, rows: data.rows.length, layoutRows: () => layout.length,
                       selected: () => selected, times: (i) => [jobs.start[i], end[i]],
                       steps: () => [[...data.steps.start], [...data.steps.end]],
                       state: viewState, restore: restoreView, collapsed: () => collapsed.size};
document.body.dataset.ready = '1';
