// Navigation by rows: the row labels, collapsing and expanding machines, the
// jump box, and the legend.

import {redraw} from './frame.js';
import {collapsed, indexLayout, layOut, layout, rowsOf} from './layout.js';
import {colours, data, inner, labels, rowHeight, scroller} from './page.js';

export let jumped = -1;  // the data row the jump box went to: its label and row are highlighted
// Who the stop report names (the first to stop, or the hedged suspect): their rows are marked.
const stopNode = document.getElementById('jobviz-stop');
const stop = stopNode ? JSON.parse(stopNode.textContent) : {files: []};
const culprits = new Set(stop.files);

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
      const culprit = !row.lane && culprits.has(row.file);
      div.className = (row.lane ? 'lane' : 'worker') + (entry.row === jumped ? ' jumped' : '') + (culprit ? ' culprit' : '');
      div.textContent = row.label;
      div.title = (culprit ? (stop.kind === 'suspect' ? 'the suspect, if the job hung: ' : 'the first to stop: ') : '') + row.file;
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
export function setCollapsed(machines, shut) {
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
// A row's full name: its machine's and its own label ("machine17 worker 3 · stage 2");
// shown in the list as the page shows names, its bidi controls inside isolates.
const fullName = (row, strip = plain) => {
  const label = strip(row.label), machine = strip(data.machines[row.machine].name);
  return plain(label).startsWith(plain(machine)) ? label : machine + ' ' + label;
};
for (const row of data.rows) if (!row.lane) jumpList.append(new Option(fullName(row, (text) => text)));
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
// "go to the first to stop": its row, as the jump box would.
if (stop.files.length) {
  const button = document.createElement('button');
  button.type = 'button';
  button.id = 'first-to-stop';
  button.textContent = stop.kind === 'suspect' ? 'go to the suspect' : 'go to the first to stop';
  button.title = stop.sentence;
  const index = data.rows.findIndex((row) => !row.lane && row.file === stop.files[0]);
  button.addEventListener('click', () => jumpTo(fullName(data.rows[index])));
  if (index >= 0) toolbar.append(button);
}
jump.addEventListener('keydown', (event) => { if (event.key === 'Enter' && jumpTo(jump.value)) jump.blur(); });

const legend = document.getElementById('legend');
data.types.forEach((type, index) => {
  const span = document.createElement('span');
  span.textContent = type;
  span.style.setProperty('--swatch', colours[index]);
  legend.appendChild(span);
});
