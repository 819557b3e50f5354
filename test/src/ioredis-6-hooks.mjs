// Module resolution hook of the ioredis 6 pass: the bare specifier `ioredis` resolves to the
// `ioredis6` alias package (npm:ioredis@6) of the repository root. ESM imports only: every
// process the suite starts imports it (`require('ioredis')` would need Node's CJS hooks).
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const ioredis6 = pathToFileURL(createRequire(import.meta.url).resolve('ioredis6')).href;

/** Node's `resolve` hook: `ioredis` becomes ioredis 6, anything else resolves as usual. */
export function resolve(specifier, context, nextResolve) {
  return nextResolve(specifier === 'ioredis' ? ioredis6 : specifier, context);
}
