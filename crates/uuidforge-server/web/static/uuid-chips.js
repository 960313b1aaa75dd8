/*
 * uuid-chips.js — UUIDs people can recognise, copy and compare (D7, D10, D11).
 *
 * Include it in any page:  <script src="http://127.0.0.1:8080/static/uuid-chips.js"></script>
 * Every UUID in the page's text, and every link without text whose address
 * holds a UUID, becomes a <uuid-chip>: an identicon (the same picture as the
 * server's /api/v1/identicon/{uuid}.svg) followed by the UUID's own text, so
 * find-in-page and selection still work.
 *
 *  - left click copies the whole value (no selection needed);
 *  - right click in an input or textarea pastes the UUID copied last,
 *    unformatted (Shift + right click keeps the browser's menu);
 *  - right click on a chip: whether it equals the clipboard, find it in the
 *    page, copy, copy as Base32;
 *  - tooltip: the name registered for it (PUT /api/v1/names/{uuid}) and the
 *    time of a v1, v6 or v7;
 *  - compact mode (attribute `compact` on a chip, or `data-uuid-compact` on
 *    an ancestor): only the last 4 characters and a button for the rest.
 *
 * Script attributes: data-api="(an origin)" (where names are read; default:
 * the script's origin), data-token="…" (the server's token, which names
 * need; a page of the server itself keeps the one its address carried in
 * #token=… for its tab instead), data-auto="false" (no scan at load; call
 * UuidChips.scan(root) yourself). A page elsewhere reads names only when the
 * server was started with --allow-origin for it.
 *
 * The pure functions below run in Node too (module.exports), where the test
 * suite checks them against the Rust implementation's golden vectors.
 */
(function (global) {
  'use strict';

  // ---- identicon: see crates/uuidforge-server/src/identicon.rs ----------
  const FNV_PRIME = 0x01000193;

  function fnv1a32(bytes, basis) {
    let h = basis >>> 0;
    for (let i = 0; i < bytes.length; i++) h = Math.imul(h ^ bytes[i], FNV_PRIME) >>> 0;
    return h;
  }

  function fmix32(h) {
    h ^= h >>> 16;
    h = Math.imul(h, 0x85ebca6b);
    h ^= h >>> 13;
    h = Math.imul(h, 0xc2b2ae35);
    h ^= h >>> 16;
    return h >>> 0;
  }

  /** The 16 bytes of a canonical (or any hex) UUID text. */
  function uuidBytes(uuid) {
    const hex = uuid.replace(/[^0-9a-fA-F]/g, '');
    if (hex.length !== 32) throw new Error(`not a UUID: ${uuid}`);
    const bytes = new Uint8Array(16);
    for (let i = 0; i < 16; i++) bytes[i] = parseInt(hex.substr(i * 2, 2), 16);
    return bytes;
  }

  function hashes(uuid) {
    const b = uuidBytes(uuid);
    return [fmix32(fnv1a32(b, 0x811c9dc5)), fmix32((fnv1a32(b, 0x050c5d1f) ^ 0x9e3779b9) >>> 0)];
  }

  function cells(h1) {
    let filled = 0;
    for (let r = 0; r < 5; r++) {
      for (let c = 0; c < 3; c++) {
        if ((h1 >>> (c * 5 + r)) & 1) {
          filled |= 1 << (r * 5 + c);
          filled |= 1 << (r * 5 + (4 - c));
        }
      }
    }
    return filled >>> 0;
  }

  function identiconSvg(uuid) {
    const [h1, h2] = hashes(uuid);
    const filled = cells(h1);
    let path = '';
    for (let i = 0; i < 25; i++) {
      if ((filled >>> i) & 1) path += `M${i % 5} ${Math.floor(i / 5)}h1v1h-1z`;
    }
    return '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 5 5" shape-rendering="crispEdges">' +
      `<rect width="5" height="5" fill="hsl(${(h1 >>> 15) % 360} 40% 90%)"/>` +
      `<path fill="hsl(${h2 % 360} ${55 + ((h2 >>> 9) % 30)}% ${38 + ((h2 >>> 14) % 18)}%)" d="${path}"/></svg>`;
  }

  // ---- Crockford Base32 (ULID text), as uuidforge::base32 ---------------
  const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

  function toBase32(uuid) {
    let n = BigInt('0x' + uuid.replace(/[^0-9a-fA-F]/g, ''));
    let out = '';
    for (let i = 0; i < 26; i++) {
      out = ALPHABET[Number(n & 31n)] + out;
      n >>= 5n;
    }
    return out;
  }

  /** Canonical text of a 26-character Base32 value, or null. */
  function fromBase32(text) {
    const t = text.toUpperCase().replace(/[IL]/g, '1').replace(/O/g, '0');
    if (!/^[0-7][0-9A-HJKMNP-TV-Z]{25}$/.test(t)) return null;
    let n = 0n;
    for (const ch of t) n = (n << 5n) | BigInt(ALPHABET.indexOf(ch));
    return canonicalOfHex(n.toString(16).padStart(32, '0'));
  }

  function canonicalOfHex(hex) {
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  /** The canonical lower-case form of any usual UUID text, or null. */
  function normalize(text) {
    const t = String(text).trim();
    const m = /^(?:urn:uuid:)?\{?([0-9a-fA-F]{8})-?([0-9a-fA-F]{4})-?([0-9a-fA-F]{4})-?([0-9a-fA-F]{4})-?([0-9a-fA-F]{12})\}?$/i.exec(t);
    if (m) return m.slice(1).join('-').toLowerCase();
    return t.length === 26 ? fromBase32(t) : null;
  }

  // ---- finding UUIDs in text --------------------------------------------
  const UUID_IN_TEXT = /(?<![0-9A-Za-z-])[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(?![0-9A-Za-z-])/g;

  const HAS_UUID = new RegExp(UUID_IN_TEXT.source);

  /** Every UUID (8-4-4-4-12 hex, not inside a longer word) in `text`. */
  function findUuids(text) {
    const found = [];
    for (const m of String(text).matchAll(UUID_IN_TEXT)) {
      found.push({ index: m.index, text: m[0], value: m[0].toLowerCase() });
    }
    return found;
  }

  // ---- decoded time of v1, v6, v7 (RFC 9562 §5.1, §5.6, §5.7) ------------
  const GREGORIAN_OFFSET = 0x01b21dd213814000n; // 100-ns ticks, 1582-10-15 to 1970-01-01

  function isoOf100ns(ticks) {
    const ms = ticks / 10000n;
    const frac = (ticks % 10000000n).toString().padStart(7, '0');
    const iso = new Date(Number(ms)).toISOString();
    return iso.slice(0, 19) + '.' + frac + 'Z';
  }

  /** `{version, time}` with an ISO 8601 time for v1/v6/v7, else null. */
  function decodeTime(uuid) {
    const hex = uuid.replace(/-/g, '').toLowerCase();
    const version = parseInt(hex[12], 16);
    const variantOk = (parseInt(hex[16], 16) & 0xc) === 0x8;
    if (!variantOk) return null;
    if (version === 7) {
      return { version, time: new Date(parseInt(hex.slice(0, 12), 16)).toISOString() };
    }
    let ts;
    if (version === 1) {
      ts = (BigInt('0x' + hex.slice(13, 16)) << 48n) | (BigInt('0x' + hex.slice(8, 12)) << 32n) |
        BigInt('0x' + hex.slice(0, 8));
    } else if (version === 6) {
      ts = (BigInt('0x' + hex.slice(0, 12)) << 12n) | BigInt('0x' + hex.slice(13, 16));
    } else {
      return null;
    }
    const unix = ts - GREGORIAN_OFFSET;
    return unix < 0n ? null : { version, time: isoOf100ns(unix) };
  }

  const api = {
    hashes, cells, identiconSvg, toBase32, fromBase32, normalize, findUuids, decodeTime,
  };

  if (typeof module === 'object' && module.exports) module.exports = api;
  if (typeof window === 'undefined' || !window.customElements) return;

  // ---- the page side ------------------------------------------------------
  const script = document.currentScript;
  const apiBase = (script && script.dataset.api) ||
    (script && script.src ? new URL(script.src, location.href).origin : location.origin);
  // The server's token: from the script tag, or (on the server's own pages)
  // from the address the server printed at start, kept for this tab only and
  // taken out of the address bar so that it is not bookmarked or shared.
  const TOKEN_KEY = 'uuidforge-token';
  if (apiBase === location.origin) {
    const given = new URLSearchParams(location.hash.slice(1)).get('token');
    if (given) {
      sessionStorage.setItem(TOKEN_KEY, given);
      history.replaceState(null, '', location.pathname + location.search);
    }
  }
  function token() {
    if (script && script.dataset.token) return script.dataset.token;
    return apiBase === location.origin ? sessionStorage.getItem(TOKEN_KEY) : null;
  }
  function setToken(value) {
    sessionStorage.setItem(TOKEN_KEY, value);
  }
  const SKIP = new Set(['SCRIPT', 'STYLE', 'NOSCRIPT', 'TEXTAREA', 'INPUT', 'SELECT', 'OPTION', 'UUID-CHIP', 'TEMPLATE']);
  let lastCopied = null;

  const STYLE = `
uuid-chip{--uc-bg:#eef1f6;--uc-fg:#17202c;--uc-border:#c9d1de;--uc-found:#ffd75e;
  display:inline-flex;align-items:center;gap:.3em;padding:0 .35em 0 .2em;border:1px solid var(--uc-border);
  border-radius:.6em;background:var(--uc-bg);color:var(--uc-fg);font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;
  font-size:.92em;line-height:1.5;cursor:copy;white-space:nowrap;vertical-align:baseline;position:relative}
uuid-chip:focus-visible{outline:2px solid #3b82f6;outline-offset:1px}
uuid-chip .uc-icon{display:inline-block;width:1.1em;height:1.1em;flex:none;border-radius:.2em;overflow:hidden}
uuid-chip .uc-icon svg{display:block;width:100%;height:100%}
uuid-chip.uc-copied{border-color:#16a34a;box-shadow:0 0 0 2px #16a34a55}
uuid-chip.uc-found{background:var(--uc-found);color:#111}
uuid-chip.uc-current{outline:2px solid #f97316;outline-offset:1px}
uuid-chip .uc-more{font:inherit;font-size:.85em;border:0;background:none;color:inherit;cursor:pointer;padding:0 .1em;opacity:.75}
uuid-chip.uc-compact:not(.uc-expanded) .uc-head{font-size:0}
uuid-chip:not(.uc-compact) .uc-more,uuid-chip.uc-expanded .uc-more{display:none}
.uc-menu{position:fixed;z-index:2147483647;min-width:15em;padding:.3em 0;border:1px solid #c9d1de;border-radius:.5em;
  background:#fff;color:#17202c;box-shadow:0 6px 24px #0003;font:14px system-ui,sans-serif}
.uc-menu .uc-status{padding:.35em .9em;font-size:.9em;opacity:.85}
.uc-menu button{display:block;width:100%;text-align:left;border:0;background:none;color:inherit;font:inherit;padding:.35em .9em;cursor:pointer}
.uc-menu button:hover,.uc-menu button:focus{background:#e8eefc}
@media (prefers-color-scheme: dark){
  uuid-chip{--uc-bg:#1f2733;--uc-fg:#e6ebf2;--uc-border:#3a4556;--uc-found:#8a6d00}
  uuid-chip.uc-found{color:#fff}
  .uc-menu{background:#1b2230;color:#e6ebf2;border-color:#3a4556}
  .uc-menu button:hover,.uc-menu button:focus{background:#2b3850}
}`;

  let adopted = false;
  function injectStyle() {
    // A constructed stylesheet is not inline style, so a page whose
    // Content-Security-Policy forbids inline <style> (uuidforge's own
    // pages do) still styles its chips; older browsers get a <style>.
    if (adopted || document.getElementById('uuid-chips-style')) return;
    if (typeof CSSStyleSheet === 'function' && 'adoptedStyleSheets' in document) {
      try {
        const sheet = new CSSStyleSheet();
        sheet.replaceSync(STYLE);
        document.adoptedStyleSheets = [...document.adoptedStyleSheets, sheet];
        adopted = true;
        return;
      } catch (_) { /* fall back to a <style> element */ }
    }
    const style = document.createElement('style');
    style.id = 'uuid-chips-style';
    style.textContent = STYLE;
    (document.head || document.documentElement).appendChild(style);
  }

  async function writeClipboard(text) {
    lastCopied = text;
    try {
      await navigator.clipboard.writeText(text);
      return true;
    } catch (_) {
      // Without the async clipboard (an insecure origin): the old way.
      const area = document.createElement('textarea');
      area.value = text;
      area.style.position = 'fixed';
      area.style.opacity = '0';
      document.body.appendChild(area);
      area.select();
      const ok = document.execCommand('copy');
      area.remove();
      return ok;
    }
  }

  async function readClipboard() {
    try {
      return { text: await navigator.clipboard.readText(), from: 'clipboard' };
    } catch (_) {
      return { text: lastCopied, from: 'last copied here' };
    }
  }

  // Names: fetched on first hover, re-asked after NAME_TTL_MS.
  const NAME_TTL_MS = 5000;
  const names = new Map();

  async function nameOf(value) {
    const hit = names.get(value);
    if (hit && Date.now() - hit.at < NAME_TTL_MS) return hit.name;
    let name = null;
    try {
      const t = token();
      if (!t) return null; // names need the server's token
      const r = await fetch(`${apiBase}/api/v1/names?uuids=${value}`, {
        headers: { Accept: 'application/json', Authorization: `Bearer ${t}` },
      });
      if (r.ok) name = (await r.json()).names[value] || null;
    } catch (_) { /* no server: no name */ }
    names.set(value, { name, at: Date.now() });
    return name;
  }

  class UuidChip extends HTMLElement {
    connectedCallback() {
      if (this._ready) return;
      const text = this.textContent.trim() || this.getAttribute('value') || '';
      const value = normalize(this.getAttribute('value') || text);
      if (!value) return;
      this._ready = true;
      this.setAttribute('value', value);
      if (!this.hasAttribute('tabindex')) this.tabIndex = 0;
      this.setAttribute('role', 'button');
      this.classList.toggle('uc-compact', this.hasAttribute('compact') || !!this.closest('[data-uuid-compact]'));
      const shown = text || value;
      this.textContent = '';
      const icon = document.createElement('span');
      icon.className = 'uc-icon';
      icon.setAttribute('aria-hidden', 'true');
      icon.innerHTML = identiconSvg(value);
      const words = document.createElement('span');
      words.className = 'uc-text';
      const head = document.createElement('span');
      head.className = 'uc-head';
      head.textContent = shown.slice(0, -4);
      const tail = document.createElement('span');
      tail.className = 'uc-tail';
      tail.textContent = shown.slice(-4);
      words.append(head, tail);
      const more = document.createElement('button');
      more.type = 'button';
      more.className = 'uc-more';
      more.textContent = '…';
      more.title = 'Show the whole UUID';
      more.setAttribute('aria-label', 'Show the whole UUID');
      this.append(icon, words, more);
      const time = decodeTime(value);
      this._base = (time ? `v${time.version} · ${time.time}\n` : '') + value;
      this.title = this._base;
      this.addEventListener('click', (e) => this.onClick(e));
      this.addEventListener('keydown', (e) => {
        if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); this.copy(value); }
        if (e.key === 'ContextMenu' || (e.shiftKey && e.key === 'F10')) {
          e.preventDefault();
          const r = this.getBoundingClientRect();
          openMenu(this, r.left, r.bottom);
        }
      });
      this.addEventListener('contextmenu', (e) => {
        if (e.shiftKey) return;
        e.preventDefault();
        openMenu(this, e.clientX, e.clientY);
      });
      const refreshTitle = async () => {
        const name = await nameOf(value);
        this.title = (name ? `${name}\n` : '') + this._base;
        this.dataset.name = name || '';
      };
      this.addEventListener('mouseenter', refreshTitle);
      this.addEventListener('focus', refreshTitle);
    }

    get value() { return this.getAttribute('value'); }

    onClick(e) {
      if (e.target.closest('.uc-more')) {
        e.preventDefault();
        e.stopPropagation();
        this.classList.add('uc-expanded');
        return;
      }
      // A drag that selected part of the text is a selection, not a copy.
      const sel = window.getSelection();
      if (sel && !sel.isCollapsed && this.contains(sel.anchorNode)) return;
      e.preventDefault();
      e.stopPropagation();
      this.copy(this.value);
    }

    async copy(text) {
      await writeClipboard(text);
      this.classList.add('uc-copied');
      this.dispatchEvent(new CustomEvent('uuid-copied', { bubbles: true, detail: { value: text } }));
      setTimeout(() => this.classList.remove('uc-copied'), 900);
    }
  }

  // ---- the chip menu --------------------------------------------------------
  let menu = null;
  const finder = { value: null, index: -1 };

  function closeMenu() {
    if (menu) menu.remove();
    menu = null;
  }

  function chipsOf(value) {
    return Array.from(document.querySelectorAll('uuid-chip')).filter((c) => c.value === value);
  }

  function clearFound() {
    document.querySelectorAll('uuid-chip.uc-found').forEach((c) => c.classList.remove('uc-found', 'uc-current'));
  }

  /** Highlights every chip of `value` and moves to the next one. */
  function findNext(value) {
    const all = chipsOf(value);
    if (finder.value !== value) {
      clearFound();
      finder.value = value;
      finder.index = -1;
    }
    all.forEach((c) => c.classList.add('uc-found'));
    all.forEach((c) => c.classList.remove('uc-current'));
    finder.index = (finder.index + 1) % all.length;
    const current = all[finder.index];
    current.classList.add('uc-current');
    current.scrollIntoView({ block: 'center', inline: 'nearest' });
    return { index: finder.index + 1, total: all.length };
  }

  function openMenu(chip, x, y) {
    closeMenu();
    const value = chip.value;
    menu = document.createElement('div');
    menu.className = 'uc-menu';
    menu.setAttribute('role', 'menu');
    const status = document.createElement('div');
    status.className = 'uc-status';
    status.textContent = 'Clipboard: reading…';
    menu.append(status);
    const item = (label, action) => {
      const b = document.createElement('button');
      b.type = 'button';
      b.setAttribute('role', 'menuitem');
      b.textContent = label;
      b.addEventListener('click', (e) => { e.stopPropagation(); action(b); });
      menu.append(b);
      return b;
    };
    const total = chipsOf(value).length;
    item(`Find this UUID in the page (${total})`, (b) => {
      const at = findNext(value);
      b.textContent = `Find this UUID in the page (${at.index}/${at.total})`;
    });
    item('Copy', () => { chip.copy(value); closeMenu(); });
    item('Copy as Base32', () => { chip.copy(toBase32(value)); closeMenu(); });
    document.body.append(menu);
    const r = menu.getBoundingClientRect();
    menu.style.left = `${Math.max(0, Math.min(x, innerWidth - r.width - 4))}px`;
    menu.style.top = `${Math.max(0, Math.min(y, innerHeight - r.height - 4))}px`;
    menu.querySelector('button').focus({ preventScroll: true });
    readClipboard().then(({ text, from }) => {
      if (!menu || !status.isConnected) return;
      const other = text ? normalize(text) : null;
      if (other === value) {
        status.textContent = `✓ Same as the ${from}`;
        menu.dataset.clipboard = 'same';
      } else {
        status.textContent = other ? `≠ The ${from} holds another UUID` : `≠ No UUID in the ${from}`;
        menu.dataset.clipboard = 'different';
      }
    });
  }

  document.addEventListener('click', (e) => { if (menu && !menu.contains(e.target)) closeMenu(); }, true);
  document.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') {
      closeMenu();
      clearFound();
      finder.value = null;
    }
  });

  // ---- right click pastes into fields ------------------------------------------
  document.addEventListener('contextmenu', (e) => {
    const field = e.target;
    const isField = field instanceof HTMLTextAreaElement ||
      (field instanceof HTMLInputElement && /^(text|search|url|)$/.test(field.type));
    if (!isField || e.shiftKey || field.readOnly || field.disabled || !lastCopied) return;
    e.preventDefault();
    readClipboard().then(({ text }) => {
      const value = (text && normalize(text)) ? text.trim() : lastCopied;
      field.focus();
      const start = field.selectionStart ?? field.value.length;
      const end = field.selectionEnd ?? field.value.length;
      field.setRangeText(value, start, end, 'end');
      field.dispatchEvent(new Event('input', { bubbles: true }));
    });
  });

  // ---- turning text into chips ------------------------------------------------------
  function skipped(node) {
    for (let el = node.parentElement; el; el = el.parentElement) {
      if (SKIP.has(el.tagName) || el.isContentEditable || el.hasAttribute('data-no-uuid-chips')) return true;
    }
    return false;
  }

  function chipFor(text) {
    const chip = document.createElement('uuid-chip');
    chip.textContent = text;
    return chip;
  }

  /** Turns the UUIDs under `root` (text and text-less links) into chips. */
  function scan(root) {
    root = root || document.body;
    if (!root) return 0;
    let made = 0;
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT, {
      acceptNode: (n) => (HAS_UUID.test(n.data) && !skipped(n) ? NodeFilter.FILTER_ACCEPT : NodeFilter.FILTER_REJECT),
    });
    const nodes = [];
    for (let n = walker.nextNode(); n; n = walker.nextNode()) nodes.push(n);
    for (const node of nodes) {
      const found = findUuids(node.data);
      if (!found.length) continue;
      const frag = document.createDocumentFragment();
      let at = 0;
      for (const f of found) {
        frag.append(node.data.slice(at, f.index), chipFor(f.text));
        at = f.index + f.text.length;
        made++;
      }
      frag.append(node.data.slice(at));
      node.replaceWith(frag);
    }
    const links = root.querySelectorAll ? root.querySelectorAll('a[href]') : [];
    for (const a of links) {
      if (a.textContent.trim() || a.querySelector('img,svg,uuid-chip') || skipped(a.firstChild || a)) continue;
      const found = findUuids(decodeURIComponent(a.getAttribute('href')));
      if (found.length) {
        a.append(chipFor(found[found.length - 1].value));
        made++;
      }
    }
    return made;
  }

  function start() {
    injectStyle();
    customElements.get('uuid-chip') || customElements.define('uuid-chip', UuidChip);
    if (script && script.dataset.auto === 'false') return;
    scan(document.body);
    let queued = new Set();
    new MutationObserver((records) => {
      for (const r of records) r.addedNodes.forEach((n) => queued.add(n));
      queueMicrotask(() => {
        const batch = queued;
        queued = new Set();
        for (const n of batch) {
          if (!n.isConnected) continue;
          if (n.nodeType === Node.TEXT_NODE) {
            if (n.parentNode && !skipped(n)) scan(n.parentNode);
          } else if (n.nodeType === Node.ELEMENT_NODE && n.tagName !== 'UUID-CHIP' && !skipped(n)) {
            scan(n);
          }
        }
      });
    }).observe(document.body, { childList: true, subtree: true });
  }

  Object.assign(api, { scan, findNext, copy: writeClipboard, lastCopied: () => lastCopied, apiBase, token, setToken });
  global.UuidChips = api;
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})(typeof window !== 'undefined' ? window : globalThis);
