// The run you could have: a what-if's replay (jobviz replayed it,
// docs/analysis.md "What-ifs"), drawn instead of the measured times while
// the switch is on: the jobs, the step row and the step lines, the idle
// background and the overview, all at the replay's times. The view, the
// collapsed machines and the selection stay; the critical paths, which are
// the measured run's, are not drawn.

import {redraw} from './frame.js';
import {paintOverview} from './overview.js';
import {data, end, jobCount, jobs, root} from './page.js';
import {findHandOffs, selected} from './selection.js';

export let showWhatIf = false;
if (data.what_if) {
  const measured = {start: jobs.start, dur: jobs.dur, stepStart: data.steps.start, stepEnd: data.steps.end};
  const replayed = {start: data.what_if.start, dur: data.what_if.dur,
                    stepStart: data.what_if.steps.start, stepEnd: data.what_if.steps.end};
  const label = document.createElement('label');
  label.className = 'what-if-toggle';
  const box = document.createElement('input');
  box.type = 'checkbox';
  box.id = 'what-if';
  box.addEventListener('change', () => {
    showWhatIf = box.checked;
    const times = showWhatIf ? replayed : measured;
    jobs.start = times.start;
    jobs.dur = times.dur;
    for (let i = 0; i < jobCount; i++) end[i] = jobs.start[i] + jobs.dur[i];
    data.steps.start = times.stepStart;
    data.steps.end = times.stepEnd;
    paintOverview();
    root.classList.toggle('what-if', showWhatIf);
    if (selected >= 0) findHandOffs(selected);
    redraw();
  });
  label.title = 'Draw every job where the replay without this cause puts it';
  label.append(box, ' ' + data.what_if.title);
  (document.getElementById('go-critical') || document.getElementById('open-perfetto')).after(label);
}
