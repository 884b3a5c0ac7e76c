// One redraw per animation frame, whoever asks for it (a zoom, a collapse, a
// switch): the module every other one may import, importing none of theirs,
// so the page's modules form no cycle. main.js registers what a frame paints.

const painters = [];
// `paint` runs on every frame, in the order registered.
export function onRedraw(paint) { painters.push(paint); }

let frame = 0;
export const stats = {loadMs: 0, draws: 0, lastDrawMs: 0, maxDrawMs: 0};
export function redraw() {
  if (frame) return;
  frame = requestAnimationFrame(() => {
    frame = 0;
    const t = performance.now();
    for (const paint of painters) paint();
    stats.lastDrawMs = performance.now() - t;
    stats.maxDrawMs = Math.max(stats.maxDrawMs, stats.lastDrawMs);
    stats.draws++;
  });
}

// A canvas sized to its box at the screen's pixel density; its context drawn
// in CSS pixels.
const dpr = () => window.devicePixelRatio || 1;
export function sizeCanvas(canvas, height) {
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
