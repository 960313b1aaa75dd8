// The Database view of the uuidforge page: columns (D2), find (D5),
// related columns (D6) and discovered keys (D13) from /api/v1/db/….
// Everything a database returns is put in the page as text (textContent),
// never as HTML; the diagram is an <img> (an image cannot run script).
'use strict';

const errorBox = document.getElementById('error');
const tokenForm = document.getElementById('token');

function showError(e) {
  errorBox.hidden = false;
  errorBox.textContent = e && e.field
    ? `${e.field}: “${e.value}” — expected ${e.expected}`
    : String(e);
}

/** GET from the database API with the token, if one was given. */
async function api(path, params, as = 'json') {
  const query = params ? `?${new URLSearchParams(params)}` : '';
  const headers = { Accept: as === 'json' ? 'application/json' : '*/*' };
  const token = UuidChips.token();
  if (token) headers.Authorization = `Bearer ${token}`;
  const response = await fetch(`/api/v1/db${path}${query}`, { headers });
  if (response.status === 401) {
    tokenForm.hidden = false;
    throw (await response.json()).error;
  }
  if (!response.ok) {
    let body;
    try { body = await response.json(); } catch (_) { body = { error: `${response.status} ${response.statusText}` }; }
    throw body.error || body;
  }
  return as === 'json' ? response.json() : response.text();
}

function cell(text, className) {
  const td = document.createElement('td');
  td.textContent = text == null ? '' : String(text);
  if (className) td.className = className;
  return td;
}

function chip(value) {
  const td = document.createElement('td');
  td.className = 'value';
  const c = document.createElement('uuid-chip');
  c.textContent = value;
  td.append(c);
  return td;
}

const qualified = (c) => `${c.schema}.${c.table}.${c.column}`;
// As psql reads names: each part quoted keeps its case, dots and spaces.
const quoted = (c) => [c.schema, c.table, c.column].map((n) => `"${n.replaceAll('"', '""')}"`).join('.');

async function loadAbout() {
  const a = await api('');
  document.getElementById('about').textContent =
    `Database ${a.database} as ${a.user} (PostgreSQL ${Math.floor(a.server_version_num / 10000)}), read-only.`;
}

async function loadColumns() {
  const { columns } = await api('/columns');
  const body = document.querySelector('#columns tbody');
  const rows = columns.map((c) => {
    const tr = document.createElement('tr');
    const colour = c.indexed ? 'indexed' : 'unindexed';
    tr.dataset.column = qualified(c);
    tr.className = colour;
    const status = c.index_description;
    const flags = (c.unindexed_foreign_keys || []).map((fk) => ` · foreign key ${fk} leads no index`).join('');
    const source = c.source ? ` · from ${c.source}` : '';
    const share = c.kind === 'sampled' ? ` (${Math.round(c.sampled_share * 100)}% of ${c.sampled_values} sampled)` : '';
    const times = c.v7_times ? `${c.v7_times.oldest} … ${c.v7_times.newest} (${c.v7_times.sampled} sampled)` : '';
    tr.append(cell(c.schema), cell(c.table), cell(c.column, `name ${colour}`), cell(c.type),
      cell(c.kind + share), cell(status + source + flags, `status ${colour}`), cell(times, 'v7-times'));
    const td = document.createElement('td');
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = 'related';
    b.addEventListener('click', () => loadRelated(c).catch(showError));
    td.append(b);
    tr.append(td);
    return tr;
  });
  body.replaceChildren(...rows);
  const indexed = columns.filter((c) => c.indexed).length;
  document.getElementById('columns-summary').textContent =
    `${columns.length} columns hold UUIDs: ${indexed} indexed, ${columns.length - indexed} not.`;
}

async function loadRelated(c) {
  const name = qualified(c);
  const summary = document.getElementById('related-summary');
  summary.textContent = `Looking for columns related to ${name}…`;
  const { related } = await api('/related', { column: quoted(c) });
  const table = document.getElementById('related');
  table.querySelector('tbody').replaceChildren(...related.map((r) => {
    const tr = document.createElement('tr');
    tr.dataset.column = qualified(r);
    tr.append(cell(r.score.toFixed(3)), cell(r.schema), cell(r.table), cell(r.column),
      cell(r.evidence.map((e) => `${e.kind}: ${e.detail}`).join('\n'), 'evidence'));
    return tr;
  }));
  table.hidden = related.length === 0;
  summary.textContent = `${related.length} columns related to ${name}.`;
}

document.getElementById('find').addEventListener('submit', async (event) => {
  event.preventDefault();
  errorBox.hidden = true;
  const form = event.target;
  const params = { value: form.elements.value.value.trim() };
  if (form.elements.indexed_only.checked) params.indexed_only = 'true';
  const summary = document.getElementById('find-summary');
  summary.textContent = 'Searching…';
  const started = performance.now();
  try {
    const found = await api('/find', params);
    const table = document.getElementById('hits');
    table.querySelector('tbody').replaceChildren(...found.hits.map((h) => {
      const tr = document.createElement('tr');
      const where = [h.path, h.role === 'key' ? '(a JSON key)' : ''].filter(Boolean).join(' ');
      tr.append(cell(h.schema), cell(h.table), cell(h.column), cell(where), chip(h.value),
        cell(JSON.stringify(h.key) + (h.key_unstable ? ' (ctid: unstable)' : ''), 'key'),
        cell(h.v7_time || '', 'v7-time'));
      return tr;
    }));
    table.hidden = found.hits.length === 0;
    const s = found.summary;
    summary.textContent = `${s.hits} hits in ${((performance.now() - started) / 1000).toFixed(2)} s: ` +
      `${s.probes} index probes, ${s.scans} tables scanned` +
      (s.skipped.length ? `, ${s.skipped.length} skipped (${s.skipped.map((k) => `${k.schema}.${k.table}: ${k.reason}`).join('; ')})` : '') +
      (found.truncated ? '; only the first hits are listed' : '') + '.';
  } catch (e) {
    summary.textContent = '';
    showError(e);
  }
});

document.getElementById('discover').addEventListener('click', async () => {
  errorBox.hidden = true;
  const summary = document.getElementById('discover-summary');
  summary.textContent = 'Reading the data…';
  try {
    const report = await api('/discover');
    const found = report.foreign_keys.filter((f) => !f.declared).length;
    summary.textContent = `${report.primary_keys.length} primary keys, ${report.foreign_keys.length} foreign keys ` +
      `(${found} discovered from the data).`;
    const svg = await api('/discover', { format: 'svg' }, 'text');
    const img = document.getElementById('diagram');
    if (img.src.startsWith('blob:')) URL.revokeObjectURL(img.src);
    img.src = URL.createObjectURL(new Blob([svg], { type: 'image/svg+xml' }));
    document.getElementById('diagram-box').hidden = false;
    const ddl = document.getElementById('ddl');
    ddl.textContent = report.ddl;
    ddl.hidden = false;
  } catch (e) {
    summary.textContent = '';
    showError(e);
  }
});

tokenForm.addEventListener('submit', (event) => {
  event.preventDefault();
  UuidChips.setToken(tokenForm.elements.token.value);
  tokenForm.hidden = true;
  errorBox.hidden = true;
  load();
});

function load() {
  loadAbout().then(loadColumns).catch(showError);
}

// Before any request: a server without a database gets an explanation, and
// without the token the form asks for it (no request is sent to fail).
fetch('/healthz').then((r) => r.json()).then((health) => {
  if (!health.database) {
    document.getElementById('no-database').hidden = false;
    for (const section of document.querySelectorAll('main > section:not(#no-database)')) section.hidden = true;
    document.getElementById('columns-summary').textContent = '';
    return;
  }
  if (!UuidChips.token()) {
    tokenForm.hidden = false;
    document.getElementById('columns-summary').textContent = 'The token is needed to read the database.';
    return;
  }
  load();
}).catch(showError);
