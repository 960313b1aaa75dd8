// End-to-end test of the uuidforge page in headless Debian chromium, driven
// by playwright-core (no browser download). Run by scripts/web-test.sh:
//   node e2e.mjs http://127.0.0.1:PORT OUT_DIR
import { chromium } from 'playwright-core';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const base = process.argv[2];
const outDir = process.argv[3] || '.';
const token = process.env.UUIDFORGE_TOKEN;
assert.ok(base && token, 'usage: UUIDFORGE_TOKEN=… node e2e.mjs BASE_URL [OUT_DIR]');
const port = new URL(base).port;
const withoutDatabase = process.argv[4];
fs.mkdirSync(outDir, { recursive: true });

const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'uuidforge-chromium-'));
const context = await chromium.launchPersistentContext(userDataDir, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync',
    // A name an attacker controls, resolving to this machine: DNS rebinding.
    '--host-resolver-rules=MAP attacker.example 127.0.0.1'],
  viewport: { width: 1280, height: 900 },
});
await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
const page = context.pages()[0] || await context.newPage();
const problems = [];
page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
page.on('console', (m) => { if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(`console: ${m.text()}`); });
page.on('response', (r) => { if (r.status() >= 400) problems.push(`${r.status()} from ${r.url()}`); });
page.on('request', (r) => { if (!r.url().startsWith(base) && !r.url().startsWith('blob:') && !r.url().startsWith('data:')) problems.push(`request outside the server: ${r.url()}`); });

const steps = [];
async function step(name, fn) {
  const t = Date.now();
  await fn();
  steps.push(`ok ${steps.length + 1} - ${name} (${Date.now() - t} ms)`);
  console.log(steps[steps.length - 1]);
}
const clipboard = () => page.evaluate(() => navigator.clipboard.readText());

try {
  await step('the page loads with its profiles; the token in its address is kept for the tab and taken out of the address', async () => {
    await page.goto(`${base}/#token=${token}`);
    await page.waitForFunction(() => document.querySelectorAll('select[name=profile] option').length === 4);
    assert.equal(page.url(), `${base}/`);
    assert.equal(await page.evaluate(() => UuidChips.token()), token);
  });

  let values;
  await step('generating 100 UUIDs shows 100 chips, strictly increasing', async () => {
    await page.fill('input[name=count]', '100');
    await page.click('button[type=submit]');
    await page.waitForFunction(() => document.querySelectorAll('#results uuid-chip').length === 100);
    values = await page.$$eval('#results uuid-chip', (chips) => chips.map((c) => c.getAttribute('value')));
    assert.equal(new Set(values).size, 100);
    for (let i = 1; i < values.length; i++) assert.ok(values[i - 1] < values[i], `order at ${i}`);
    assert.ok(values.every((v) => v[14] === '7'), 'v7');
    const text = await page.innerText('#results');
    for (const v of values) assert.ok(text.includes(v), 'the UUID text stays in the page');
    const served = await (await fetch(`${base}/api/v1/identicon/${values[0]}.svg`)).text();
    assert.equal(await page.evaluate((v) => UuidChips.identiconSvg(v), values[0]), served);
    const same = await page.$eval('#results uuid-chip .uc-icon', (icon, svg) => {
      const parsed = document.createElement('span');
      parsed.innerHTML = svg;
      return parsed.innerHTML === icon.innerHTML;
    }, served);
    assert.ok(same, 'the chip shows the server\'s identicon');
  });

  await step('a left click copies the whole value', async () => {
    const chip = page.locator('#results uuid-chip').nth(41);
    await chip.click();
    assert.equal(await clipboard(), values[41]);
    const selected = await page.evaluate(() => String(window.getSelection()));
    assert.equal(selected, '', 'nothing had to be selected');
  });

  await step('right click in a textarea pastes the copied UUID unformatted', async () => {
    await page.fill('#scratch', 'id: ');
    await page.locator('#scratch').click();
    await page.keyboard.press('End');
    await page.locator('#scratch').click({ button: 'right' });
    await page.waitForFunction(() => document.getElementById('scratch').value.length > 4);
    assert.equal(await page.inputValue('#scratch'), `id: ${values[41]}`);
  });

  await step('a tooltip shows the name set through the API and the time', async () => {
    const put = await fetch(`${base}/api/v1/names/${values[7]}`, {
      method: 'PUT', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` }, body: JSON.stringify({ name: 'invoice 2026-0042' }),
    });
    assert.equal(put.status, 201);
    const chip = page.locator('#results uuid-chip').nth(7);
    await chip.hover();
    await page.waitForFunction((v) => document.querySelector(`#results uuid-chip[value="${v}"]`).title.startsWith('invoice 2026-0042'), values[7]);
    const title = await chip.getAttribute('title');
    assert.match(title, /^invoice 2026-0042\nv7 · \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\n/);
  });

  await step('the chip menu tells whether it equals the clipboard, copies as Base32', async () => {
    await page.locator('#results uuid-chip').nth(41).click({ button: 'right' });
    await page.waitForSelector('.uc-menu[data-clipboard=same]');
    await page.keyboard.press('Escape');
    await page.locator('#results uuid-chip').nth(3).click({ button: 'right' });
    await page.waitForSelector('.uc-menu[data-clipboard=different]');
    await page.click('.uc-menu >> text=Copy as Base32');
    const b32 = await clipboard();
    const expected = await (await fetch(`${base}/api/v1/convert`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ values: [values[3]], to: 'base32' }),
    })).json();
    assert.equal(b32, expected.values[0]);
    assert.equal(await page.locator('.uc-menu').count(), 0, 'the menu closes');
  });

  await step('compact mode shows the last 4 characters and a button for the rest', async () => {
    await page.check('input[name=compact]');
    await page.fill('input[name=count]', '5');
    await page.click('button[type=submit]');
    await page.waitForFunction(() => document.querySelectorAll('#results uuid-chip.uc-compact').length === 5);
    const chip = page.locator('#results uuid-chip').first();
    const value = await chip.getAttribute('value');
    const visible = await chip.locator('.uc-tail').innerText();
    assert.equal(visible, value.slice(-4));
    assert.ok((await chip.locator('.uc-head').boundingBox()).width <= 1, 'the head is hidden');
    assert.ok((await page.innerText('#results')).includes(value), 'but still in the text');
    await page.screenshot({ path: path.join(outDir, 'compact.png') });
    await chip.locator('.uc-more').click();
    assert.ok((await chip.locator('.uc-head').boundingBox()).width > 50, 'the rest is shown');
    await page.uncheck('input[name=compact]');
  });

  await step('in an ordinary page: text and text-less links become chips, find steps through them', async () => {
    await page.goto(base + '/static/demo.html');
    await page.waitForFunction(() => document.querySelectorAll('uuid-chip').length === 7);
    const order = '017f22e2-79b0-7cc3-98c4-dc0c0c07398f';
    assert.equal(await page.locator('a[href*="017f22e2"] uuid-chip').count(), 1, 'the text-less link has a chip');
    assert.equal(await page.locator('code uuid-chip').count(), 0, 'opted-out text stays text');
    assert.ok((await page.innerText('body')).includes('017F22E2-79B0-7CC3-98C4-DC0C0C07398F'), 'original text kept');
    const same = await page.locator(`uuid-chip[value="${order}"]`).count();
    assert.equal(same, 4);
    await page.locator(`uuid-chip[value="${order}"]`).first().click({ button: 'right' });
    const find = page.locator('.uc-menu button', { hasText: 'Find this UUID in the page' });
    assert.equal(await find.innerText(), `Find this UUID in the page (${same})`);
    await find.click();
    assert.equal(await page.locator('uuid-chip.uc-found').count(), same);
    assert.equal(await find.innerText(), `Find this UUID in the page (1/${same})`);
    await find.click();
    assert.equal(await find.innerText(), `Find this UUID in the page (2/${same})`);
    const current = await page.$$eval('uuid-chip.uc-found', (cs) => cs.findIndex((c) => c.classList.contains('uc-current')));
    assert.equal(current, 1);
    const pair = await page.$$eval('li:first-child uuid-chip .uc-icon', (icons) => icons.map((i) => i.innerHTML));
    assert.notEqual(pair[0], pair[1], 'one bit apart, different pictures');
    await page.screenshot({ path: path.join(outDir, 'demo-find.png'), fullPage: true });
    await page.keyboard.press('Escape');
    assert.equal(await page.locator('uuid-chip.uc-found').count(), 0);
  });

  await step('dark theme follows prefers-color-scheme', async () => {
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.goto(base + '/');
    const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    assert.equal(bg, 'rgb(17, 22, 30)');
    await page.fill('input[name=count]', '100');
    await page.click('button[type=submit]');
    await page.waitForFunction(() => document.querySelectorAll('#results uuid-chip').length === 100);
    await page.screenshot({ path: path.join(outDir, 'page-dark.png') });
    await page.emulateMedia({ colorScheme: 'light' });
    await page.screenshot({ path: path.join(outDir, 'page.png') });
  });

  const dialogs = [];
  page.on('dialog', (d) => { dialogs.push(d.message()); d.dismiss().catch(() => {}); });
  const xss = '<img src=x onerror=alert(1)>';
  const customer = '01890a5d-ac96-774b-bcce-b302099a8057';

  await step('database view in a new tab: the token is asked for first, no request fails', async () => {
    const tab = await context.newPage();
    const failed = [];
    tab.on('response', (r) => { if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`); });
    await tab.goto(base + '/db');
    await tab.waitForSelector('#token:not([hidden])');
    assert.ok(await tab.locator('#error').isHidden(), 'no error shown');
    await tab.fill('#token input[name=token]', token);
    await tab.click('#token button[type=submit]');
    await tab.waitForSelector('#columns tbody tr[data-column="public.customers.id"]');
    assert.deepEqual(failed, []);
    await tab.close();
  });

  await step('database view: indexed and unindexed columns in the D2 colours, light and dark', async () => {
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto(base + '/db');
    await page.waitForSelector('#columns tbody tr[data-column="public.customers.id"]');
    const colour = (column, cell) => page.$eval(`#columns tr[data-column="${column}"] td.${cell}`,
      (td) => getComputedStyle(td).color);
    for (const cell of ['name', 'status']) {
      assert.equal(await colour('public.customers.id', cell), 'rgb(0, 67, 206)', `indexed ${cell}, light`);
      assert.equal(await colour('public.orders.customer_id', cell), 'rgb(243, 73, 0)', `unindexed ${cell}, light`);
    }
    assert.equal(await page.innerText('#columns tr[data-column="public.customers.id"] td.status'), 'leading, unique btree customers_pkey');
    assert.equal(await page.innerText('#columns tr[data-column="public.orders.customer_id"] td.status'), 'no index');
    assert.match(await page.innerText('#columns tr[data-column="public.customers.id"] td.v7-times'),
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z … \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \(\d+ sampled\)$/);
    await page.screenshot({ path: path.join(outDir, 'db-light.png'), fullPage: true });
    await page.emulateMedia({ colorScheme: 'dark' });
    assert.equal(await colour('public.customers.id', 'status'), 'rgb(133, 177, 255)', 'indexed, dark');
    assert.equal(await colour('public.orders.customer_id', 'status'), 'rgb(255, 151, 102)', 'unindexed, dark');
    await page.screenshot({ path: path.join(outDir, 'db-dark.png'), fullPage: true });
    await page.emulateMedia({ colorScheme: 'light' });
  });

  await step('database view: a find shows every hit with the value as a chip', async () => {
    await page.fill('#find input[name=value]', customer.toUpperCase());
    await page.click('#find button[type=submit]');
    await page.waitForFunction(() => document.querySelectorAll('#hits tbody tr').length >= 5);
    const rows = await page.$$eval('#hits tbody tr', (trs) => trs.map((tr) => [...tr.cells].map((c) => c.textContent)));
    const places = rows.map((r) => `${r[1]}.${r[2]}`).sort();
    assert.deepEqual(places, [`${xss}.${xss}`, `${xss}.doc`, 'customers.id', 'orders.customer_id', 'orders.note'].sort());
    assert.ok(rows.some((r) => r[3].includes('<script>alert(2)</script>')), 'the JSON key is in the path, as text');
    assert.equal(await page.locator('#hits td.value uuid-chip').count(), rows.length);
    assert.equal(await page.locator(`#hits td.value uuid-chip[value="${customer}"]`).count(), rows.length);
    // The customer's key is a UUIDv7: every hit shows the time it carries.
    assert.ok(rows.every((r) => r[6] === '2023-06-30T03:34:18.518Z'), JSON.stringify(rows.map((r) => r[6])));
    assert.match(await page.innerText('#find-summary'), /^5 hits in [\d.]+ s: \d+ index probes, \d+ tables scanned\.$/);
  });

  await step('database view: related columns of customers.id, with their evidence', async () => {
    await page.click('#columns tr[data-column="public.customers.id"] button');
    await page.waitForSelector('#related tbody tr[data-column="public.orders.customer_id"]');
    const evidence = await page.innerText('#related tr[data-column="public.orders.customer_id"] td.evidence');
    assert.match(evidence, /values: 100\.0% of its 2 values/);
    assert.match(evidence, /naming: customer_id names public\.customers\.id/);
  });

  await step('database view: the ER diagram from the data', async () => {
    await page.click('#discover');
    await page.waitForFunction(() => { const i = document.getElementById('diagram'); return i.complete && i.naturalWidth > 0; });
    assert.match(await page.innerText('#discover-summary'), /1 discovered from the data/);
    assert.match(await page.innerText('#ddl'), /FOREIGN KEY \("customer_id"\) REFERENCES "public"\."customers" \("id"\) NOT VALID/);
    await page.screenshot({ path: path.join(outDir, 'db-diagram.png'), fullPage: true });
  });

  await step('database names and values never run: they are text, and the page forbids inline script', async () => {
    assert.equal(await page.locator('img[src="x"]').count(), 0, 'no <img> made from a name');
    assert.equal(await page.locator('main script, main b').count(), 0, 'no element made from a value');
    const text = await page.innerText('main');
    assert.ok(text.includes(xss), 'the table and column names are shown as written');
    const csp = (await page.request.get(base + '/db')).headers()['content-security-policy'];
    assert.match(csp, /default-src 'self'/);
    assert.ok(!/unsafe-inline/.test(csp));
    const blocked = await page.evaluate(() => {
      const s = document.createElement('script');
      s.textContent = 'window.inlineRan = true';
      document.body.append(s);
      return window.inlineRan === undefined;
    });
    assert.ok(blocked, 'an inline script does not run under the policy');
    problems.splice(0, problems.length, ...problems.filter((p) => !/Content Security Policy/.test(p)));
    assert.deepEqual(dialogs, [], 'no alert opened');
  });

  assert.deepEqual(problems, [], 'no page errors and nothing fetched from elsewhere');
  await step('a bad parameter shows the API\'s error', async () => {
    await page.goto(base + '/');
    await page.fill('input[name=shift]', '3 parsecs');
    await page.click('button[type=submit]');
    await page.waitForSelector('#error:not([hidden])');
    assert.match(await page.innerText('#error'), /^shift: “3 parsecs” — expected/);
  });

  await step('a page from another origin reads no data and uses no key', async () => {
    const evil = await context.newPage();
    const origin = 'http://evil.example';
    await evil.route(`${origin}/**`, (route) => route.fulfill({ contentType: 'text/html', body: '<!doctype html><title>elsewhere</title>' }));
    await evil.goto(`${origin}/`);
    const value = '017f22e2-79b0-7cc3-98c4-dc0c0c07398f';
    const attempts = await evil.evaluate(async ({ base, value }) => {
      const routes = [
        ['GET', `/api/v1/db/find?value=${value}`], ['GET', '/api/v1/db/columns'], ['GET', '/api/v1/db'],
        ['GET', '/api/v1/db/related?column=orders.customer_id'], ['GET', '/api/v1/db/discover'],
        ['GET', `/api/v1/names?uuids=${value}`], ['GET', `/api/v1/names/${value}`],
        ['PUT', `/api/v1/names/${value}`], ['DELETE', `/api/v1/names/${value}`],
        ['POST', '/api/v1/hide'], ['POST', '/api/v1/reveal'],
      ];
      const out = [];
      for (const [method, route] of routes) {
        const body = method === 'GET' || method === 'DELETE' ? undefined
          : route.includes('names') ? '{"name":"written from elsewhere"}' : `{"values":["${value}"]}`;
        for (const [mode, type] of [['cors', 'application/json'], ['cors', 'text/plain'], ['no-cors', 'text/plain']]) {
          try {
            const r = await fetch(base + route, { method, mode, body, headers: body ? { 'Content-Type': type } : {} });
            out.push({ route: `${method} ${route} ${mode} ${type}`, readable: r.type !== 'opaque', status: r.status, text: r.type === 'opaque' ? '' : await r.text() });
          } catch (e) {
            out.push({ route: `${method} ${route} ${mode} ${type}`, readable: false, error: String(e) });
          }
        }
      }
      return out;
    }, { base, value });
    for (const a of attempts) assert.equal(a.readable, false, `${a.route} answered the page: ${a.status} ${a.text}`);
    // What reached the server was refused, not served: nothing was written.
    const names = await (await fetch(`${base}/api/v1/names/${value}`, { headers: { Authorization: `Bearer ${token}` } })).status;
    assert.equal(names, 404, 'no name was written from elsewhere');
    // The same page on a name rebound to 127.0.0.1 is refused by its Host.
    await evil.unroute(`${origin}/**`);
    const rebound = `http://attacker.example:${port}`;
    const response = await evil.goto(`${rebound}/`);
    assert.equal(response.status(), 403, 'the page under a rebound name');
    const fromRebound = await evil.evaluate(async (url) => (await fetch(url)).status, `${rebound}/api/v1/names/${value}`);
    assert.equal(fromRebound, 403, 'same-origin requests under a rebound name');
    await evil.close();
  });

  if (withoutDatabase) {
    await step('a server without a database explains on /db how to start one, and asks for nothing', async () => {
      const tab = await context.newPage();
      const failed = [];
      tab.on('response', (r) => { if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`); });
      await tab.goto(withoutDatabase + '/db');
      await tab.waitForSelector('#no-database:not([hidden])');
      assert.match(await tab.innerText('#no-database'), /uuidforge serve --db postgres:\/\/USER@HOST\/DATABASE/);
      assert.ok(await tab.locator('#token').isHidden(), 'no token is asked for');
      assert.ok(await tab.locator('#error').isHidden(), 'no error');
      assert.deepEqual(failed, []);
      await tab.screenshot({ path: path.join(outDir, 'db-without-database.png') });
      await tab.close();
    });
  }

  console.log(`# e2e: ${steps.length} steps passed; screenshots in ${outDir}`);
} finally {
  await context.close();
  fs.rmSync(userDataDir, { recursive: true, force: true });
}
