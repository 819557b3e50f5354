import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import type { InboxLine, InboxLogEntry } from '@holdfast/test-utils/models';

const WORKER = fileURLToPath(new URL('./worker.mjs', import.meta.url));

/** Every line of every worker, in the order the parent received them. */
export class Fleet {
  readonly lines: InboxLine[] = [];
  readonly children: ChildProcess[] = [];
  readonly exits: Promise<number | null>[] = [];
  #listeners: (() => void)[] = [];

  spawn(config: Record<string, unknown>): ChildProcess {
    const child = spawn(process.execPath, ['--unhandled-rejections=strict', WORKER, JSON.stringify(config)], { stdio: ['pipe', 'pipe', 'inherit'] });
    createInterface({ input: child.stdout! }).on('line', (text) => {
      this.lines.push(JSON.parse(text) as InboxLine);
      for (const listener of this.#listeners.splice(0)) listener();
    });
    this.children.push(child);
    this.exits.push(new Promise((resolve) => child.on('exit', (code) => resolve(code))));
    return child;
  }

  /** Resolves once `predicate` holds of the lines received. */
  async until(predicate: (lines: readonly InboxLine[]) => boolean): Promise<void> {
    while (!predicate(this.lines)) await new Promise<void>((resolve) => this.#listeners.push(resolve));
  }
}

/** Each key's log of handler calls (worker.mjs), read from Redis. */
export async function readLogs(redis: Redis, prefix: string): Promise<Map<string, InboxLogEntry[]>> {
  const logs = new Map<string, InboxLogEntry[]>();
  for (const name of await redis.keys(`${prefix}:log:*`)) {
    logs.set(name.slice(`${prefix}:log:`.length), (await redis.lrange(name, 0, -1)).map((text) => JSON.parse(text) as InboxLogEntry));
  }
  return logs;
}

/** Every stored message's id has an end line. */
export function allHandled(lines: readonly InboxLine[]): boolean {
  const ended = new Set(lines.filter((l) => l.ev === 'e').flatMap((l) => l.ids!));
  return lines.filter((l) => l.ev === 'p').every((l) => ended.has(l.id!));
}

