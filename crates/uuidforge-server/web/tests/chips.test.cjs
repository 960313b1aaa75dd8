// Unit tests of uuid-chips.js's pure functions: `node --test web/tests/`.
// The golden vectors come from the Rust implementation
// (tests/identicon_vectors.rs), so browser and server draw the same picture.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const chips = require('../static/uuid-chips.js');

const golden = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'identicon-vectors.json'), 'utf8'));

test('the golden file has vectors', () => {
  assert.ok(golden.vectors.length >= 10);
});

for (const v of golden.vectors) {
  test(`identicon of ${v.uuid} matches the Rust implementation`, () => {
    const [h1, h2] = chips.hashes(v.uuid);
    assert.equal(h1, v.h1);
    assert.equal(h2, v.h2);
    assert.equal(chips.cells(h1), v.cells);
    assert.equal(chips.identiconSvg(v.uuid), v.svg);
    // The hash covers the bytes, not the text form.
    assert.equal(chips.identiconSvg(v.uuid.toUpperCase()), v.svg);
  });

  test(`Base32 and time of ${v.uuid} match the Rust implementation`, () => {
    assert.equal(chips.toBase32(v.uuid), v.base32);
    assert.equal(chips.fromBase32(v.base32), v.uuid);
    assert.equal(chips.fromBase32(v.base32.toLowerCase()), v.uuid);
    const t = chips.decodeTime(v.uuid);
    assert.equal(t ? t.time : null, v.time);
  });
}

test('UUIDs of one millisecond get different pictures', () => {
  const base = '0189d8a4-6a1e-7b3c-8f21-6f0e3c2a9b';
  const pictures = new Set();
  for (let i = 0; i < 256; i++) pictures.add(chips.identiconSvg(base + i.toString(16).padStart(2, '0')));
  assert.equal(pictures.size, 256);
});

test('UUIDs are found in text, not inside longer words', () => {
  const text = 'a 017f22e2-79b0-7cc3-98c4-dc0c0c07398f, (017F22E2-79B0-7CC3-98C4-DC0C0C07398F) ' +
    'x017f22e2-79b0-7cc3-98c4-dc0c0c07398f 017f22e2-79b0-7cc3-98c4-dc0c0c07398f0 ' +
    '017f22e2-79b0-7cc3-98c4-dc0c0c07398f-x urn:uuid:c232ab00-9414-11ec-b3c8-9f6bdeced846.';
  const found = chips.findUuids(text);
  assert.deepEqual(found.map((f) => f.text), [
    '017f22e2-79b0-7cc3-98c4-dc0c0c07398f',
    '017F22E2-79B0-7CC3-98C4-DC0C0C07398F',
    'c232ab00-9414-11ec-b3c8-9f6bdeced846',
  ]);
  assert.equal(found[1].value, '017f22e2-79b0-7cc3-98c4-dc0c0c07398f');
  assert.equal(text.slice(found[1].index, found[1].index + 36), found[1].text);
  // Repeated calls do not carry state between them.
  assert.equal(chips.findUuids(text).length, 3);
  assert.deepEqual(chips.findUuids('no uuid here 017f22e2-79b0-7cc3-98c4'), []);
});

test('normalize reads every usual form and refuses the rest', () => {
  const c = '017f22e2-79b0-7cc3-98c4-dc0c0c07398f';
  for (const form of [c, c.toUpperCase(), `{${c}}`, `urn:uuid:${c}`, c.replace(/-/g, ''), '01FWHE4YDGFK1SHH6W1G60EECF', ` ${c}\n`]) {
    assert.equal(chips.normalize(form), c, form);
  }
  for (const bad of ['', 'hello', c.slice(1), '81FWHE4YDGFK1SHH6W1G60EECF', c + '0']) {
    assert.equal(chips.normalize(bad), null, bad);
  }
});

test('decodeTime reads v1, v6 and v7 only', () => {
  assert.equal(chips.decodeTime('919108f7-52d1-4320-9bac-f847db4148a8'), null);
  assert.deepEqual(chips.decodeTime('017f22e2-79b0-7cc3-98c4-dc0c0c07398f'), { version: 7, time: '2022-02-22T19:22:22.000Z' });
  assert.equal(chips.decodeTime('1ec9414c-232a-6b00-b3c8-9f6bdeced846').time, '2022-02-22T19:22:22.0000000Z');
  // The wrong variant is not an RFC 9562 v7.
  assert.equal(chips.decodeTime('017f22e2-79b0-7cc3-18c4-dc0c0c07398f'), null);
});
