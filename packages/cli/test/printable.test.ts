import { describe, expect, it } from 'vitest';
import { printable, printableJson } from '../src/printable.js';

/** The escapes the README documents ("Names and text from Redis"), one by one. */
describe('printable: the escaping of every human-readable line', () => {
  it('escapes the backslash, C0 controls, DEL, C1 controls, separators, bidi controls and unpaired surrogates', () => {
    const cases: [string, string][] = [
      ['a\\b', 'a\\\\b'],
      ['\t\n\r', '\\t\\n\\r'],
      ['\x00\x07\x1b[2J\x1f\x7f', '\\x00\\x07\\x1b[2J\\x1f\\x7f'],
      ['\x1b]0;title\x07', '\\x1b]0;title\\x07'],
      ['\u0080\u0085\u009b31m\u009f', '\\u0080\\u0085\\u009b31m\\u009f'],
      ['\u2028\u2029\u202e\u2066\u061c\u200f', '\\u2028\\u2029\\u202e\\u2066\\u061c\\u200f'],
      ['\ud800x\udc00', '\\ud800x\\udc00'],
    ];
    expect(cases.map(([text]) => printable(text))).toEqual(cases.map(([, shown]) => shown));
  });

  it('leaves printable text as it is: accents, other scripts, emoji, U+FFFD', () => {
    const text = 'commandes-été 注文 🔒 \ufffd ~!@#$%^&*()';
    expect(printable(text)).toBe(text);
  });

  it('printableJson escapes what JSON.stringify leaves raw, and parses back to the same value', () => {
    const value = { name: 'a\u009b\u2028\u202e\x7f\x1b\n"\\' };
    const text = printableJson(value);
    expect(text).not.toMatch(/[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u202e]/);
    expect(JSON.parse(text)).toEqual(value);
  });
});
