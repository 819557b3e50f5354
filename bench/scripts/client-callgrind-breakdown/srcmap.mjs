// stdin: lines "url:line:col"; stdout: "url:line:col\toriginalSource"
import { SourceMap } from 'node:module';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
const maps = new Map();
const lines = readFileSync(0, 'utf8').split('\n').filter(Boolean);
for (const l of lines) {
  const m = /^(file:\/\/.*\.js):(\d+):(\d+)$/.exec(l);
  let out = '';
  if (m) {
    const path = fileURLToPath(m[1]);
    if (!maps.has(path)) { try { maps.set(path, new SourceMap(JSON.parse(readFileSync(path + '.map', 'utf8')))); } catch { maps.set(path, null); } }
    const sm = maps.get(path);
    if (sm) { const e = sm.findEntry(Number(m[2]) - 1, Number(m[3]) - 1); out = e.originalSource ?? ''; }
  }
  console.log(`${l}\t${out}`);
}
