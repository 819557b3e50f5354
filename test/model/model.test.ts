import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
// @ts-expect-error plain ESM script without types
import { configs, ensureSpin, runConfig } from './check.mjs';

// Every Lua file of the kinds the model covers (the shared fragments and each kind's folder), by file name.
const srcDir = fileURLToPath(new URL('../../packages/core/src/', import.meta.url));
const MODELLED = ['scripts', 'mutex', 'read-write', 'semaphore', 'multi-lock', 'fencing'];
const scriptPaths = new Map(
  MODELLED.flatMap((dir) => readdirSync(srcDir + dir).filter((f) => f.endsWith('.lua')).map((f) => [f, `${srcDir}${dir}/${f}`] as const)),
);
const branches = JSON.parse(readFileSync(new URL('./branches.json', import.meta.url), 'utf8')) as Record<
  string,
  { id: string; text: string; model: string }[]
>;
const model = readFileSync(new URL('./holdfast.pml', import.meta.url), 'utf8');

/** Branch points of a script: every `if` / `elseif` and every line with a `return`, comments dropped. */
function branchPoints(source: string): string[] {
  return source
    .split('\n')
    .map((line) => line.replace(/--.*$/, '').trim().replace(/\s+/g, ' '))
    .filter((line) => /^(if|elseif)\b|\breturn\b/.test(line));
}

describe('protocol model (spin)', () => {
  it('names every branch of every script (branches.json)', () => {
    const files = [...scriptPaths.keys()].sort();
    expect(Object.keys(branches).sort()).toEqual(files);
    for (const file of files) {
      const listed = branches[file]!.map((b) => b.text);
      expect(branchPoints(readFileSync(scriptPaths.get(file)!, 'utf8')), `${file}: update branches.json and the model`).toEqual(listed);
    }
  });

  it('every model step a branch points to exists in the model', () => {
    const tags = new Set([...model.matchAll(/@script ([\w.-]+#[\w-]+)/g)].map((m) => m[1]));
    for (const entries of Object.values(branches)) {
      for (const entry of entries) {
        if (entry.model.startsWith('not modelled') || entry.model.startsWith('helper')) continue;
        for (const tag of entry.model.split(' ')) expect(tags.has(tag), `${entry.id}: ${tag}`).toBe(true);
      }
    }
  });

  it('every script branch the model names is one branches.json points to', () => {
    const named = new Set(Object.values(branches).flatMap((entries) => entries.flatMap((e) => e.model.split(' '))));
    for (const [, tag] of model.matchAll(/@script ([\w.-]+#[\w-]+)/g)) expect(named.has(tag!), tag).toBe(true);
  });

  it('spin is available (apt-get install -y spin)', () => {
    expect(ensureSpin()).toBe(true);
  });

  it('the fixed protocol has no counterexample at the quick bounds', { timeout: 300_000 }, () => {
    for (const config of configs('quick').filter((c: { expect: string }) => c.expect === 'pass')) {
      const result = runConfig(config);
      expect(result.steps, `${config.name}: ${result.violation}`).toEqual([]);
      expect(result.errors).toBe(0);
      expect(result.complete).toBe(true);
    }
  });

  it('the pre-fix hand-off, the hand-off without the stale check, the unguarded foreign key and a waiter queued behind a string lock left as it is produce counterexamples', { timeout: 300_000 }, () => {
    for (const config of configs('quick').filter((c: { expect: string }) => c.expect === 'counterexample')) {
      const result = runConfig(config);
      expect(result.errors, config.name).toBeGreaterThan(0);
    }
  });
});
