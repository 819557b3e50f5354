/**
 * Text from Redis (lock names, registrations, error replies) is written by
 * whoever can write keys under the prefix; sent raw to a terminal, an escape
 * sequence would clear the screen, retitle the window or forge table rows.
 * Every human-readable line the command prints goes through `printable`,
 * once, where it is rendered (render.ts); `--json` through `printableJson`.
 *
 * The escapes, JavaScript's spelling, one per character, so the original is
 * recoverable:
 *
 *   \        →  \\
 *   TAB LF CR  →  \t \n \r
 *   other C0 controls and DEL  →  \xNN (ESC: \x1b, BEL: \x07)
 *   C1 controls (U+0080–U+009F), line and paragraph separators, bidi controls
 *   (they reorder what follows them on screen), lone surrogates  →  \uNNNN
 *
 * Bytes that are not UTF-8 reach the command as U+FFFD (the replacement
 * character), which is printed as it is.
 */

const NAMED: Record<string, string> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

// Bidi embeddings, overrides, isolates and marks; U+2028/U+2029 break lines in some renderers.
const UNICODE_CONTROL = /[\u0080-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

const ESCAPED = new RegExp(`[\\\\\\x00-\\x1f\\x7f]|${UNICODE_CONTROL.source}`, 'g');

const hex = (code: number, digits: number) => code.toString(16).padStart(digits, '0');

/** `text` with every control character, and the backslash, escaped (see above). */
export function printable(text: string): string {
  return text.replace(ESCAPED, (char) => {
    const code = char.charCodeAt(0);
    return NAMED[char] ?? (code < 0x80 ? `\\x${hex(code, 2)}` : `\\u${hex(code, 4)}`);
  });
}

// What JSON.stringify leaves raw in a string: DEL, C1 controls, separators, bidi controls.
const JSON_RAW = /[\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/g;

/** `value` as JSON (2-space indent), with the controls JSON.stringify leaves raw as `\uNNNN`: it parses back to the same value. */
export function printableJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(JSON_RAW, (char) => `\\u${hex(char.charCodeAt(0), 4)}`);
}
