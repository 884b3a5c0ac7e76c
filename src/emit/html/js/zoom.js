// Zoom and pan by wheel, drag and keys.

import {hover, jobAt, select} from './details.js';
import {redraw} from './frame.js';
import {bodyCanvas, full, root, scroller, view} from './page.js';

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
