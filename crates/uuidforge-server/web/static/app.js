// The batch generator form of the uuidforge page: asks /api/v1/uuids and
// shows the values as <uuid-chip>s (uuid-chips.js).
'use strict';

const SHOWN_AS_CHIPS = 1000;
const form = document.getElementById('generate');
const results = document.getElementById('results');
const errorBox = document.getElementById('error');
const summary = document.getElementById('summary');
const download = document.getElementById('download');

fetch('/api/v1/profiles').then((r) => r.json()).then(({ profiles }) => {
  const select = form.elements.profile;
  for (const p of profiles) {
    if (p.name === 'default') continue;
    const o = document.createElement('option');
    o.value = p.name;
    o.textContent = p.name;
    o.title = p.diagram;
    select.append(o);
  }
}).catch(() => {});

fetch('/healthz').then((r) => r.json()).then((h) => {
  document.getElementById('database-link').hidden = !h.database;
}).catch(() => {});

function showError(e) {
  errorBox.hidden = false;
  errorBox.textContent = e.field
    ? `${e.field}: “${e.value}” — expected ${e.expected}`
    : String(e);
}

form.addEventListener('submit', async (event) => {
  event.preventDefault();
  errorBox.hidden = true;
  const params = new URLSearchParams();
  for (const name of ['version', 'count', 'format', 'profile', 'shift']) {
    const v = form.elements[name].value.trim();
    if (v) params.set(name, v);
  }
  const started = performance.now();
  let body;
  try {
    const response = await fetch(`/api/v1/uuids?${params}`, { headers: { Accept: 'application/json' } });
    body = await response.json();
    if (!response.ok) return showError(body.error || body);
  } catch (e) {
    return showError(e);
  }
  const uuids = body.uuids;
  const ms = (performance.now() - started).toFixed(1);
  results.toggleAttribute('data-uuid-compact', form.elements.compact.checked);
  const list = document.createElement('ol');
  for (const u of uuids.slice(0, SHOWN_AS_CHIPS)) {
    const li = document.createElement('li');
    const chip = document.createElement('uuid-chip');
    chip.textContent = u;
    li.append(chip);
    list.append(li);
  }
  results.replaceChildren(list);
  summary.textContent = `${uuids.length} UUIDs in ${ms} ms` +
    (uuids.length > SHOWN_AS_CHIPS ? ` (the first ${SHOWN_AS_CHIPS} shown)` : '');
  const link = download.querySelector('a');
  if (link.href.startsWith('blob:')) URL.revokeObjectURL(link.href);
  link.href = URL.createObjectURL(new Blob([uuids.join('\n') + '\n'], { type: 'text/plain' }));
  download.hidden = false;
});
