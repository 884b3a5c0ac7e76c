// "Open in Perfetto".

import {data} from './page.js';

const PERFETTO_ORIGIN = 'https://ui.perfetto.dev';

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
