// The first draw, and what the browser checks read (window.jobvizReport).

import {select, selected} from './details.js';
import {drawBody, drawHead, stats} from './drawing.js';
import {layout} from './layout.js';
import {drawOverview} from './overview.js';
import {data, end, jobCount, jobs, view} from './page.js';

select(-1);
drawOverview();
drawHead();
drawBody();
stats.loadMs = performance.now();
window.jobvizReport = {view, stats, jobCount, rows: data.rows.length, layoutRows: () => layout.length,
                       selected: () => selected, times: (i) => [jobs.start[i], end[i]]};
document.body.dataset.ready = '1';
