import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';

/**
 * Which holdfast was measured: the commit, the package sources changed since it, and a hash of each built
 * package.
 */

const ROOT = new URL('../../', import.meta.url);
const PACKAGES = ['core', 'watchdog', 'redlock'] as const;

export interface BuildInfo {
  readonly commit: string;
  /** `git status --porcelain` lines under packages/ (first 20). */
  readonly uncommitted: string[];
  /** First 12 hex digits of sha1(dist/index.js) per package; null when not built. */
  readonly dist: Record<string, string | null>;
}

function git(args: string[]): string {
  try {
    return execFileSync('git', ['-C', ROOT.pathname, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trimEnd();
  } catch {
    return '';
  }
}

function distHash(pkg: string): string | null {
  try {
    const file = readFileSync(new URL(`packages/${pkg}/dist/index.js`, ROOT));
    return createHash('sha1').update(file).digest('hex').slice(0, 12);
  } catch {
    return null;
  }
}

export function buildInfo(): BuildInfo {
  return {
    commit: git(['rev-parse', '--short', 'HEAD']) || 'unknown',
    uncommitted: git(['status', '--porcelain', '--', 'packages']).split('\n').filter(Boolean).slice(0, 20),
    dist: Object.fromEntries(PACKAGES.map((p) => [p, distHash(p)])),
  };
}

/** Packages whose build differs between two snapshots. */
export function rebuiltDuring(start: BuildInfo, end: BuildInfo): string[] {
  return PACKAGES.filter((p) => start.dist[p] !== end.dist[p]);
}
