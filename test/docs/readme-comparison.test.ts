import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The root README's comparison table states facts about Redisson from its documentation and
 * source, not from tests here: every such cell must carry a footnote, and every footnote must
 * link to the Redisson repository at a fixed commit, so each claim can be checked against the
 * exact text it was taken from.
 */
const readme = readFileSync(path.resolve(import.meta.dirname, '../../README.md'), 'utf8');

function comparisonTable(): string[][] {
  const start = readme.indexOf('## How it compares');
  expect(start).toBeGreaterThanOrEqual(0);
  const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
  const rows = section.split('\n').filter((line) => line.startsWith('|'));
  return rows.map((row) => row.split(/(?<!\\)\|/).slice(1, -1).map((cell) => cell.trim()));
}

describe('root README comparison table', () => {
  it('gives every Redisson claim a footnote that links to a pinned Redisson commit', () => {
    const [header, , ...rows] = comparisonTable();
    const column = header!.findIndex((cell) => cell.startsWith('Redisson'));
    expect(column).toBeGreaterThan(0);
    expect(rows.length).toBeGreaterThan(5);
    const used = new Set<string>();
    for (const row of rows) {
      const cell = row[column]!;
      if (cell === 'not tested here' || cell.startsWith('—')) continue; // no claim about Redisson
      const notes = [...cell.matchAll(/\[\^(\w+)\]/g)].map((match) => match[1]!);
      expect(notes, `"${row[0]}" for Redisson has a footnote`).not.toEqual([]);
      for (const note of notes) used.add(note);
    }
    for (const note of used) {
      const definition = new RegExp(`^\\[\\^${note}\\]: (.+)$`, 'm').exec(readme);
      expect(definition, `footnote ${note} is defined`).not.toBeNull();
      const links = [...definition![1]!.matchAll(/\]\((https:\/\/[^)\s]+)\)/g)].map((match) => match[1]!);
      expect(links, `footnote ${note} links to its source`).not.toEqual([]);
      for (const link of links) {
        expect(link, `footnote ${note}`).toMatch(/^https:\/\/github\.com\/redisson\/redisson\/blob\/[0-9a-f]{40}\/\S+#L\d+/);
      }
    }
  });

  it('says what Redisson does since 3.43 and 3.44: batched watchdog, expired/deleted listeners', () => {
    const [header, , ...rows] = comparisonTable();
    const column = header!.findIndex((cell) => cell.startsWith('Redisson'));
    const cell = (name: string): string => rows.find((row) => row[0] === name)![column]!;
    expect(cell('automatic renewal')).toMatch(/lockWatchdogBatchSize/);
    expect(cell('automatic renewal')).not.toMatch(/one timer per lock/);
    expect(cell('lease-lost alert')).toMatch(/addListener/);
    expect(cell('lease-lost alert')).toMatch(/keyspace notifications/);
  });
});
