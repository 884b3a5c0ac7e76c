// How times and steps read on the page.

import {data, jobs} from './page.js';

// ---- formatting
export function formatDuration(ns) {
  const a = Math.abs(ns);
  if (a >= 1e9) return (ns / 1e9).toFixed(3) + ' s';
  if (a >= 1e6) return (ns / 1e6).toFixed(3) + ' ms';
  if (a >= 1e3) return (ns / 1e3).toFixed(3) + ' µs';
  return ns + ' ns';
}
// Exact: the nanosecond digits are the logs' own.
export function formatOffset(ns) {
  const ms = Math.floor(ns / 1e6), rest = String(ns - ms * 1e6).padStart(6, '0');
  return '+' + ms + '.' + rest + ' ms';
}
// A ruler label: the tick's unit, as many decimals as the tick needs.
export function formatTick(ns, tick) {
  const unit = tick >= 1e9 ? [1e9, 's'] : tick >= 1e6 ? [1e6, 'ms'] : tick >= 1e3 ? [1e3, 'µs'] : [1, 'ns'];
  const decimals = Math.max(0, -Math.floor(Math.log10(tick / unit[0]) + 1e-9));
  return (ns / unit[0]).toFixed(decimals) + ' ' + unit[1];
}
const stepNames = new Map(data.steps.step.map((key, s) => [key, data.steps.name[s]]));
export function stepOf(i) { return jobs.step[i] < 0 ? 'none' : stepNames.get(jobs.step[i]) || String(jobs.step[i]); }
