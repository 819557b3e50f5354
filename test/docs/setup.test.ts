import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The root README's set-up must work on a machine that has only Node: pnpm comes from Corepack,
 * pinned by package.json's `packageManager`, and every `pnpm <command>` it shows runs what it
 * says (a script named after one of pnpm's own commands, such as `docs`, never runs: pnpm runs
 * its command instead).
 */
const root = path.resolve(import.meta.dirname, '../..');
const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  packageManager: string;
  engines: { node: string };
  scripts: Record<string, string>;
};

// Commands pnpm 10 handles itself, or hands to npm, whatever the scripts say. `test` and `start`
// are pnpm commands that run the script of that name.
const PASSED_TO_NPM = [
  'access', 'adduser', 'bugs', 'deprecate', 'dist-tag', 'docs', 'edit', 'home', 'info', 'issues',
  'login', 'logout', 'owner', 'ping', 'pkg', 'prefix', 'profile', 'repo', 'search', 'set-script',
  'show', 'star', 'stars', 'team', 'token', 'unpublish', 'unstar', 'version', 'view', 'whoami',
];

/** pnpm's own command names and aliases, as `pnpm help --all` lists them. */
function pnpmCommands(): Set<string> {
  const help = execFileSync('pnpm', ['help', '--all'], { encoding: 'utf8', cwd: root });
  const names = new Set<string>(PASSED_TO_NPM);
  for (const match of help.matchAll(/^ {2,6}(?:([a-z]+), )?([a-z][a-z-]*)(?: [a-z-]+)? {2,}\S/gm)) {
    if (match[1]) names.add(match[1]);
    names.add(match[2]!);
  }
  return names;
}

function setUpSection(): string {
  const start = readme.indexOf('## Set-up on a fresh machine');
  expect(start, 'README has a set-up section').toBeGreaterThanOrEqual(0);
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end === -1 ? undefined : end);
}

describe('root README set-up', () => {
  it('gets pnpm through Corepack, at the exact version package.json pins', () => {
    const pinned = /^pnpm@(\d+\.\d+\.\d+)$/.exec(pkg.packageManager);
    expect(pinned, `packageManager ${pkg.packageManager} is an exact pnpm version`).not.toBeNull();
    const section = setUpSection();
    expect(section).toMatch(/^corepack enable$/m);
    expect(section).toContain(`pnpm ${pinned![1]}`);
  });

  it('names the Node version package.json requires', () => {
    const minimum = /^>=(\d+\.\d+)$/.exec(pkg.engines.node);
    expect(minimum).not.toBeNull();
    expect(setUpSection()).toContain(`Node ≥ ${minimum![1]}`);
  });

  it('every `pnpm <command>` in the README runs a root script, none shadowed by a pnpm command', () => {
    const own = pnpmCommands();
    expect(own.has('install') && own.has('run') && own.has('docs')).toBe(true); // the parse found them
    // Commands in shell blocks and inline code: `pnpm demo`, `REDIS_URL=… pnpm demo`.
    const code = [
      ...[...readme.matchAll(/^```sh\n([\s\S]*?)^```/gm)].flatMap((block) => block[1]!.split('\n')),
      ...[...readme.replace(/^```[\s\S]*?^```/gm, '').matchAll(/`([^`\n]+)`/g)].map((span) => span[1]!),
    ];
    const commands = new Set(
      code.flatMap((line) => [...line.matchAll(/^(?:[A-Z_]+=\S+ )*pnpm ([a-z][a-z:-]*)/g)].map((match) => match[1]!)),
    );
    expect(commands.size).toBeGreaterThan(0);
    for (const command of commands) {
      if (command === 'install') continue;
      expect(Object.keys(pkg.scripts), `\`pnpm ${command}\` is a root script`).toContain(command);
      if (command === 'test' || command === 'start') continue;
      expect(own.has(command), `\`pnpm ${command}\` would run pnpm's own command, not the script`).toBe(false);
    }
    for (const script of Object.keys(pkg.scripts)) {
      if (script === 'test' || script === 'start') continue;
      expect(own.has(script), `script \`${script}\` is shadowed by pnpm's own command`).toBe(false);
    }
  });
});
