// The selected job and its micro-batch's hand-offs: what the details show and
// the drawing outlines and joins.

import {data, jobCount, jobs} from './page.js';

export let selected = -1;

// The selected job's micro-batch through the pipeline: its other jobs of
// the same step and micro-batch and kind (forward or backward family),
// joined in time order: the hand-offs between stages.
export let handOffs = [];
const familyOf = data.types.map((type) => type.replace(/\d+$/, '').replace(/_w$/, ''));  // per type index
export function findHandOffs(i) {
  handOffs = [];
  if (i < 0) return;
  const kind = familyOf[jobs.type[i]];
  for (let j = 0; j < jobCount; j++)
    if (jobs.mb[j] === jobs.mb[i] && jobs.step[j] === jobs.step[i] && familyOf[jobs.type[j]] === kind) handOffs.push(j);
  handOffs.sort((a, b) => jobs.start[a] - jobs.start[b]);
}
// -1: none.
export function setSelected(i) {
  selected = i;
  findHandOffs(i);
}
