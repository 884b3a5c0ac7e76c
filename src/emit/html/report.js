// The jobviz HTML report's timeline: a canvas renderer over the job table
// that src/emit/html_timeline.cc embeds as JSON (#jobviz-data). Nothing here
// computes a figure; it draws what jobviz computed. One canvas for the rows,
// one for the ruler and step row; row labels are DOM nodes (a few thousand at
// most), jobs are not (hundreds of thousands).
'use strict';
(function () {
  const PERFETTO_ORIGIN = 'https://ui.perfetto.dev';
  const data = JSON.parse(document.getElementById('jobviz-data').textContent);
  const jobs = data.jobs;
  const jobCount = jobs.start.length;
  const root = document.getElementById('timeline');
  const rowHeight = parseInt(getComputedStyle(root).getPropertyValue('--row'), 10) || 18;

  // ---- layout: a machine header row, then its workers' rows (one per lane),
  // unless the machine is collapsed (a click on its header). Rebuilt, with
  // what derives from it, by rebuildRows() on each collapse or expand.
  let layout = [];  // {machine} or {row}
  const collapsed = new Set();  // machine indices
  let jumped = -1;  // the data row the jump box went to: its label and row are highlighted
  const rowsOf = new Map();  // machine -> its rows' count (lanes included)
  data.rows.forEach((row) => rowsOf.set(row.machine, (rowsOf.get(row.machine) || 0) + 1));
  function layOut() {
    layout = [];
    data.rows.forEach((row, index) => {
      if (layout.length === 0 || data.rows[index - 1].machine !== row.machine) layout.push({machine: row.machine});
      if (!collapsed.has(row.machine)) layout.push({row: index});
    });
  }

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
  const colours = data.types.map(colourOf);

  // ---- per job: its row (jobs are grouped by row, sorted by start)
  const rowOfJob = new Int32Array(jobCount);
  data.rows.forEach((row, index) => rowOfJob.fill(index, row.first, row.first + row.count));
  const end = new Float64Array(jobCount);
  for (let i = 0; i < jobCount; i++) end[i] = jobs.start[i] + jobs.dur[i];

  // ---- time range and view (nanoseconds after data.origin_utc). Every time
  // the page shows (ruler, tooltip, details) counts from data.zero, the run
  // start that the header and the Steps table count from too.
  const zero = data.zero || 0;
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
  const pad = Math.max((maxTime - minTime) * 0.01, 1);
  const full = {t0: minTime - pad, t1: maxTime + pad};
  const view = {t0: full.t0, t1: full.t1};
  let selected = -1;

  // ---- the critical path of each step (jobviz found it: docs/analysis.md):
  // its jobs outlined, joined in time order; a toolbar switch shows or hides it.
  const critical = data.critical || [];
  const paths = data.path || [];
  const layoutRowOfJob = new Int32Array(jobCount);  // the layout row (headers included) a job is drawn in; -1: collapsed
  function indexLayout() {
    layoutRowOfJob.fill(-1);
    layout.forEach((entry, r) => {
      if (entry.row !== undefined) layoutRowOfJob.fill(r, data.rows[entry.row].first, data.rows[entry.row].first + data.rows[entry.row].count);
    });
  }
  let showCritical = critical.length > 0;
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
    document.querySelector('.toolbar').append(label, go);
  }

  // ---- the run you could have: a what-if's replay (jobviz replayed it,
  // docs/analysis.md "What-ifs"), drawn instead of the measured times while
  // the switch is on. The view, the collapsed machines and the selection
  // stay; the critical paths, which are the measured run's, are not drawn.
  let showWhatIf = false;
  if (data.what_if) {
    const measured = {start: jobs.start, dur: jobs.dur};
    const label = document.createElement('label');
    label.className = 'what-if-toggle';
    const box = document.createElement('input');
    box.type = 'checkbox';
    box.id = 'what-if';
    box.addEventListener('change', () => {
      showWhatIf = box.checked;
      const times = showWhatIf ? data.what_if : measured;
      jobs.start = times.start;
      jobs.dur = times.dur;
      for (let i = 0; i < jobCount; i++) end[i] = jobs.start[i] + jobs.dur[i];
      root.classList.toggle('what-if', showWhatIf);
      if (selected >= 0) findHandOffs(selected);
      redraw();
    });
    label.title = 'Draw every job where the replay without this cause puts it';
    label.append(box, ' ' + data.what_if.title);
    document.querySelector('.toolbar').append(label);
  }
  function drawCritical(ctx, width, top, firstRow, lastRow, scale) {
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
  function linkJobs(ctx, chain, width, top, scale, handOffs) {
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

  // ---- DOM
  const labels = root.querySelector('.rows');
  const scroller = root.querySelector('.scroller');
  const inner = root.querySelector('.inner');
  const bodyCanvas = root.querySelector('canvas.body');
  const headCanvas = root.querySelector('canvas.head');
  const tip = document.getElementById('tip');
  const detail = document.getElementById('detail');
  // Row labels: DOM nodes, rebuilt with the layout. A machine's header sticks
  // to the top while its rows scroll under it (CSS), and toggles them.
  function buildLabels() {
    const nodes = [];
    for (const entry of layout) {
      const div = document.createElement('div');
      if (entry.machine !== undefined) {
        const machine = data.machines[entry.machine];
        const shut = collapsed.has(entry.machine);
        div.className = 'machine' + (shut ? ' collapsed' : '');
        div.textContent = (shut ? '▸ ' : '▾ ') + machine.name + (shut ? ' (' + rowsOf.get(entry.machine) + ' rows)' : '') +
                          (data.machines.length > 1 && machine.clock ? ' · clock ' + machine.clock : '');
        div.title = div.textContent + ' — click to ' + (shut ? 'expand' : 'collapse');
        div.dataset.group = entry.machine;
      } else {
        const row = data.rows[entry.row];
        div.className = (row.lane ? 'lane' : 'worker') + (entry.row === jumped ? ' jumped' : '');
        div.textContent = row.label;
        div.title = row.file;
        div.dataset.machine = row.machine;
        div.dataset.worker = row.worker;
      }
      nodes.push(div);
    }
    labels.replaceChildren(...nodes);
    inner.style.height = layout.length * rowHeight + 'px';
    scroller.style.height = Math.min(layout.length * rowHeight, Math.max(240, window.innerHeight * 0.7)) + 'px';
  }
  function rebuildRows() {
    layOut();
    indexLayout();
    buildLabels();
  }
  rebuildRows();
  function setCollapsed(machines, shut) {
    for (const m of machines) if (shut) collapsed.add(m); else collapsed.delete(m);
    rebuildRows();
    redraw();
  }
  labels.addEventListener('click', (event) => {
    const header = event.target.closest('div.machine');
    if (!header) return;
    const m = Number(header.dataset.group);
    setCollapsed([m], !collapsed.has(m));
  });
  // Collapse or expand every machine; jump to a worker by its label.
  const toolbar = document.querySelector('.toolbar');
  const allMachines = data.machines.map((_, m) => m);
  if (data.machines.length > 1) {
    for (const [text, shut] of [['collapse all', true], ['expand all', false]]) {
      const button = document.createElement('button');
      button.type = 'button';
      button.textContent = text;
      button.id = shut ? 'collapse-all' : 'expand-all';
      button.addEventListener('click', () => setCollapsed(allMachines, shut));
      toolbar.append(button);
    }
  }
  const jump = document.createElement('input');
  jump.type = 'search';
  jump.id = 'jump';
  jump.placeholder = 'jump to worker…';
  jump.setAttribute('list', 'jump-list');
  const jumpList = document.createElement('datalist');
  jumpList.id = 'jump-list';
  // Labels may hold isolates around bidi controls (BidiInert); typed text does not.
  const plain = (text) => text.replace(/[\u2066-\u2069]/g, '');
  // A row's full name: its machine's and its own label ("machine17 worker 3 · stage 2").
  const fullName = (row) => {
    const label = plain(row.label), machine = plain(data.machines[row.machine].name);
    return label.startsWith(machine) ? label : machine + ' ' + label;
  };
  for (const row of data.rows) if (!row.lane) jumpList.append(new Option(fullName(row)));
  toolbar.append(jump, jumpList);
  // The row a typed text names: its label or full name exactly, else the
  // first whose full name holds every word typed ("m17 w3" does not; "machine17
  // worker 3" and "worker 3" do), case aside.
  function findRow(text) {
    const query = plain(text).trim().toLowerCase().replace(/\s+/g, ' ');
    if (!query) return -1;
    const candidates = data.rows.map((row, index) => ({row, index})).filter(({row}) => !row.lane);
    const exact = candidates.find(({row}) => plain(row.label).toLowerCase() === query || fullName(row).toLowerCase() === query);
    if (exact) return exact.index;
    const within = candidates.find(({row}) => fullName(row).toLowerCase().includes(query));
    if (within) return within.index;
    const words = query.split(' ');
    const all = candidates.find(({row}) => words.every((word) => fullName(row).toLowerCase().includes(word)));
    return all ? all.index : -1;
  }
  function jumpTo(text) {
    const index = findRow(text);
    jump.classList.toggle('not-found', index < 0);
    if (index < 0) return false;
    jumped = index;
    if (collapsed.has(data.rows[index].machine)) setCollapsed([data.rows[index].machine], false);
    else rebuildRows();
    const r = layout.findIndex((entry) => entry.row === index);
    scroller.scrollTop = Math.max(0, (r - 1) * rowHeight);  // under its machine's sticky header
    redraw();
    return true;
  }
  jump.addEventListener('change', () => { if (jumpTo(jump.value)) jump.blur(); });
  jump.addEventListener('keydown', (event) => { if (event.key === 'Enter' && jumpTo(jump.value)) jump.blur(); });

  const legend = document.getElementById('legend');
  data.types.forEach((type, index) => {
    const span = document.createElement('span');
    span.textContent = type;
    span.style.setProperty('--swatch', colours[index]);
    legend.appendChild(span);
  });

  // ---- formatting
  function formatDuration(ns) {
    const a = Math.abs(ns);
    if (a >= 1e9) return (ns / 1e9).toFixed(3) + ' s';
    if (a >= 1e6) return (ns / 1e6).toFixed(3) + ' ms';
    if (a >= 1e3) return (ns / 1e3).toFixed(3) + ' µs';
    return ns + ' ns';
  }
  // Exact: the nanosecond digits are the logs' own.
  function formatOffset(ns) {
    const ms = Math.floor(ns / 1e6), rest = String(ns - ms * 1e6).padStart(6, '0');
    return '+' + ms + '.' + rest + ' ms';
  }
  // A ruler label: the tick's unit, as many decimals as the tick needs.
  function formatTick(ns, tick) {
    const unit = tick >= 1e9 ? [1e9, 's'] : tick >= 1e6 ? [1e6, 'ms'] : tick >= 1e3 ? [1e3, 'µs'] : [1, 'ns'];
    const decimals = Math.max(0, -Math.floor(Math.log10(tick / unit[0]) + 1e-9));
    return (ns / unit[0]).toFixed(decimals) + ' ' + unit[1];
  }
  const stepNames = new Map(data.steps.step.map((key, s) => [key, data.steps.name[s]]));
  function stepOf(i) { return jobs.step[i] < 0 ? 'none' : stepNames.get(jobs.step[i]) || String(jobs.step[i]); }

  // ---- drawing
  const dpr = () => window.devicePixelRatio || 1;
  function sizeCanvas(canvas, height) {
    const width = canvas.parentElement.clientWidth;
    if (canvas.width !== Math.round(width * dpr()) || canvas.height !== Math.round(height * dpr())) {
      canvas.width = Math.round(width * dpr());
      canvas.height = Math.round(height * dpr());
      canvas.style.height = height + 'px';
    }
    const ctx = canvas.getContext('2d');
    ctx.setTransform(dpr(), 0, 0, dpr(), 0, 0);
    return {ctx, width};
  }
  const xOf = (t, width) => (t - view.t0) * width / (view.t1 - view.t0);

  // First job of `row` that ends after `t` (a lane's jobs never overlap, so
  // starts and ends both increase along it).
  function firstEndingAfter(row, t) {
    let lo = row.first, hi = row.first + row.count;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (end[mid] <= t) lo = mid + 1; else hi = mid;
    }
    return lo;
  }

  function niceStep(span, pixels) {
    const raw = span / Math.max(pixels / 110, 1);
    const power = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * power >= raw) return m * power;
    return 10 * power;
  }

  function drawHead() {
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

  // A job's label leads with what identifies it: the full "forward 3" where
  // it fits, else "F3" (initials of the type's words, then the micro-batch).
  const IDLE = 'rgba(214, 51, 108, 0.10)';
  const OPEN_FILL = 'rgba(200, 30, 30, 0.12)', OPEN_EDGE = '#b3261e';  // a job that never ended
  const idleSpan = data.steps.step.length ? [Math.min(...data.steps.start), Math.max(...data.steps.end)] : null;
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

  // The selected job's micro-batch through the pipeline: its other jobs of
  // the same step and micro-batch and kind (forward or backward family),
  // joined in time order: the hand-offs between stages.
  let handOffs = [];
  const familyOf = data.types.map((type) => type.replace(/\d+$/, '').replace(/_w$/, ''));  // per type index
  function findHandOffs(i) {
    handOffs = [];
    if (i < 0) return;
    const kind = familyOf[jobs.type[i]];
    for (let j = 0; j < jobCount; j++)
      if (jobs.mb[j] === jobs.mb[i] && jobs.step[j] === jobs.step[i] && familyOf[jobs.type[j]] === kind) handOffs.push(j);
    handOffs.sort((a, b) => jobs.start[a] - jobs.start[b]);
  }
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
  function openAt(event) {
    const rect = bodyCanvas.getBoundingClientRect();
    const x = event.clientX - rect.left, y = event.clientY - rect.top;
    const entry = layout[Math.floor((y + scroller.scrollTop) / rowHeight)];
    if (!entry || entry.row === undefined) return null;
    const row = data.rows[entry.row];
    const t = view.t0 + x * (view.t1 - view.t0) / rect.width;
    const slice = (row.open || []).find(([start, stop]) => start <= t && t <= stop);
    return slice ? {row, slice} : null;
  }
  function openFacts({row, slice: [start, stop, name, note, line]}) {
    return [['worker', row.label], ['job', name], ['state', note], ['start', formatOffset(start - zero)],
            ['open for', formatDuration(stop - start) + ' (to its log\'s end)'], ['source', row.file + ':' + line]];
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

  function drawBody() {
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
      if (!row.lane && idleSpan) {
        const x0 = Math.max(xOf(idleSpan[0], width), 0), x1 = Math.min(xOf(idleSpan[1], width), width);
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

  // ---- overview: every machine's busy share over the whole run, one strip
  // per machine (machines share a strip beyond 96), a box around what the
  // rows show; computed once into a bitmap, scaled on each draw.
  const overviewCanvas = root.querySelector('canvas.overview');
  const strips = Math.min(data.machines.length, 96);
  const stripOf = (m) => Math.floor(m * strips / data.machines.length);
  const stripHeight = Math.max(2, Math.min(12, Math.floor(96 / strips)));
  const bins = 600;
  const overviewBitmap = document.createElement('canvas');
  (function paintOverview() {
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
  })();
  function drawOverview() {
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

  let frame = 0;
  const stats = {loadMs: 0, draws: 0, lastDrawMs: 0, maxDrawMs: 0};
  function redraw() {
    if (frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      const t = performance.now();
      drawOverview();
      drawHead();
      drawBody();
      stats.lastDrawMs = performance.now() - t;
      stats.maxDrawMs = Math.max(stats.maxDrawMs, stats.lastDrawMs);
      stats.draws++;
    });
  }

  // ---- zoom and pan: wheel zooms at the pointer (shift+wheel or a sideways
  // swipe pans), drag pans in both directions, W/S zoom, A/D or arrows pan,
  // 0 shows everything. The wheel zooms only with Ctrl/⌘ held or once the
  // timeline was clicked into (until a click elsewhere or Escape), as map
  // and trace viewers do: a page scrolled past the timeline scrolls on.
  function zoom(factor, atX, width) {
    const span = view.t1 - view.t0;
    const newSpan = Math.min(Math.max(span * factor, 20), (full.t1 - full.t0) * 4);
    const anchor = view.t0 + span * (atX / width);
    view.t0 = anchor - newSpan * (atX / width);
    view.t1 = view.t0 + newSpan;
    redraw();
  }
  function pan(pixels, width) {
    const dt = pixels * (view.t1 - view.t0) / width;
    view.t0 += dt; view.t1 += dt;
    redraw();
  }
  let engaged = false;
  function engage(on) {
    engaged = on;
    root.classList.toggle('engaged', on);
  }
  window.addEventListener('mousedown', (event) => { if (event.target !== bodyCanvas) engage(false); });
  bodyCanvas.addEventListener('wheel', (event) => {
    if (!engaged && !event.ctrlKey && !event.metaKey) return;  // the page (or the rows) scroll
    event.preventDefault();
    const width = bodyCanvas.clientWidth;
    const rect = bodyCanvas.getBoundingClientRect();
    if (event.shiftKey || Math.abs(event.deltaX) > Math.abs(event.deltaY)) {
      pan(event.shiftKey ? event.deltaY || event.deltaX : event.deltaX, width);
    } else {
      zoom(Math.exp(event.deltaY * 0.002), event.clientX - rect.left, width);
    }
  }, {passive: false});

  let drag = null;
  bodyCanvas.addEventListener('mousedown', (event) => {
    engage(true);
    drag = {x: event.clientX, y: event.clientY, moved: false, top: scroller.scrollTop};
    bodyCanvas.classList.add('dragging');
  });
  window.addEventListener('mousemove', (event) => {
    if (drag) {
      const dx = event.clientX - drag.x, dy = event.clientY - drag.y;
      if (Math.abs(dx) + Math.abs(dy) > 3) drag.moved = true;
      if (drag.moved) {
        pan(-dx, bodyCanvas.clientWidth);
        drag.x = event.clientX;
        scroller.scrollTop = drag.top - dy;
      }
      return;
    }
    hover(event);
  });
  window.addEventListener('mouseup', (event) => {
    if (!drag) return;
    const click = !drag.moved;
    drag = null;
    bodyCanvas.classList.remove('dragging');
    if (click) select(jobAt(event));
  });
  window.addEventListener('keydown', (event) => {
    if (event.target.closest && event.target.closest('input, textarea, select')) return;
    const width = bodyCanvas.clientWidth;
    const keys = {
      w: () => zoom(0.8, width / 2, width), s: () => zoom(1.25, width / 2, width),
      '+': () => zoom(0.8, width / 2, width), '-': () => zoom(1.25, width / 2, width),
      a: () => pan(-width * 0.15, width), d: () => pan(width * 0.15, width),
      ArrowLeft: () => pan(-width * 0.15, width), ArrowRight: () => pan(width * 0.15, width),
      0: () => { view.t0 = full.t0; view.t1 = full.t1; redraw(); },
      Escape: () => { select(-1); engage(false); },
    };
    const action = keys[event.key.length === 1 ? event.key.toLowerCase() : event.key];
    if (action && !event.ctrlKey && !event.metaKey && !event.altKey) { action(); event.preventDefault(); }
  });
  scroller.addEventListener('scroll', redraw);
  window.addEventListener('resize', redraw);

  // ---- hover and click detail
  function jobAt(event) {
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
  function hover(event) {
    const i = jobAt(event);
    const open = i < 0 ? openAt(event) : null;
    if (i < 0 && !open) { tip.style.display = 'none'; return; }
    tip.textContent = (open ? openFacts(open) : jobFacts(i)).map(([k, v]) => k + ': ' + v).join('\n');
    tip.style.display = 'block';
    tip.style.left = Math.min(event.clientX + 14, window.innerWidth - tip.offsetWidth - 8) + 'px';
    tip.style.top = Math.min(event.clientY + 14, window.innerHeight - tip.offsetHeight - 8) + 'px';
  }
  bodyCanvas.addEventListener('mouseleave', () => { tip.style.display = 'none'; });
  function select(i) {
    selected = i;
    findHandOffs(i);
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

  // ---- "Open in Perfetto": Perfetto's documented window.open + postMessage
  // protocol (PING until PONG, then {perfetto: {buffer, title}}), handing it
  // the embedded trace (native protobuf, gzip'd; Perfetto reads both).
  const status = document.getElementById('perfetto-status');
  document.getElementById('open-perfetto').addEventListener('click', () => {
    const text = document.getElementById('jobviz-trace').textContent.trim();
    const binary = atob(text);
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    const win = window.open(PERFETTO_ORIGIN);
    if (!win) { status.textContent = 'The browser blocked the new tab: allow pop-ups for this page.'; return; }
    status.textContent = 'Waiting for ui.perfetto.dev…';
    let tries = 0;
    const timer = setInterval(() => {
      if (++tries > 600) {  // 30 s
        clearInterval(timer);
        window.removeEventListener('message', onMessage);
        status.textContent = 'ui.perfetto.dev did not answer (offline?). Open the trace file from the CI artifacts instead.';
        return;
      }
      win.postMessage('PING', PERFETTO_ORIGIN);
    }, 50);
    function onMessage(event) {
      if (event.source !== win || event.data !== 'PONG') return;
      clearInterval(timer);
      window.removeEventListener('message', onMessage);
      win.postMessage({perfetto: {buffer: bytes.buffer, title: data.title, fileName: data.trace_name}}, PERFETTO_ORIGIN);
      status.textContent = 'Sent the trace (' + bytes.length + ' bytes) to ui.perfetto.dev; it may ask you to trust this page.';
    }
    window.addEventListener('message', onMessage);
  });

  select(-1);
  drawOverview();
  drawHead();
  drawBody();
  stats.loadMs = performance.now();
  window.jobvizReport = {view, stats, jobCount, rows: data.rows.length, layoutRows: () => layout.length,
                         selected: () => selected, times: (i) => [jobs.start[i], end[i]]};
  document.body.dataset.ready = '1';
})();
