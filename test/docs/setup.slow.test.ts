import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSignaturelessMirror, type Mirror } from './signatureless-mirror.js';

/**
 * The root README's set-up must work on a machine that has only Node, behind any registry: it
 * leads with `npm install -g pnpm@<pinned>` (package.json's `packageManager`), gives Corepack as
 * the alternative with the signature error a mirror causes and its remedy, and every
 * `pnpm <command>` it shows runs what it says (a script named after one of pnpm's own commands,
 * such as `docs`, never runs: pnpm runs its command instead). Its commands run here as written,
 * in a scratch clone.
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

/** The shell blocks of the set-up section, as lines. */
function setUpBlocks(): string[][] {
  return [...setUpSection().matchAll(/^```sh\n([\s\S]*?)^```/gm)].map((block) => block[1]!.trim().split('\n'));
}

const pinned = /^pnpm@(\d+\.\d+\.\d+)$/.exec(pkg.packageManager)?.[1];
const NO_SIGNATURE = 'Error: No compatible signature found in package metadata';
const REMEDY = 'COREPACK_INTEGRITY_KEYS=0 pnpm install';

describe('root README set-up', () => {
  it('leads with npm install -g pnpm at the exact version package.json pins; Corepack comes second, with its signature error and remedy', () => {
    expect(pinned, `packageManager ${pkg.packageManager} is an exact pnpm version`).toBeDefined();
    const [first, second] = setUpBlocks();
    expect(first).toEqual([`npm install -g pnpm@${pinned}`, 'pnpm install']);
    expect(second).toEqual(['corepack enable', 'pnpm install']);
    const section = setUpSection();
    expect(section).toContain(`pnpm ${pinned}`);
    expect(section).toContain(`\`${NO_SIGNATURE}\``);
    expect(section).toContain(`\`${REMEDY}\``);
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

/**
 * Both ways, run as the README writes them in a scratch clone of this repository (its committed
 * state). Nothing outside the scratch folder changes: npm's global prefix, Corepack's home and
 * the folder `corepack enable` links into are inside it.
 */
describe('root README set-up, run as written', () => {
  const run = promisify(execFile);
  let scratch: string;
  let repo: string;
  let mirror: Mirror;
  beforeAll(async () => {
    scratch = await mkdtemp(path.join(tmpdir(), 'holdfast-setup-'));
    repo = path.join(scratch, 'repo');
    await run('git', ['clone', '--quiet', root, repo]);
    mirror = await startSignaturelessMirror(execFileSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8' }).trim());
  }, 60_000);
  afterAll(async () => {
    await mirror?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });

  /** The machine's PATH without this repository's node_modules/.bin (which has a pnpm). */
  const basePath = () =>
    (process.env.PATH ?? '')
      .split(path.delimiter)
      .filter((dir) => !dir.includes(`${path.sep}node_modules${path.sep}`))
      .join(path.delimiter);

  /** Runs one line of the README with bash, in the clone; resolves with its exit code and output. */
  const line = (command: string, env: NodeJS.ProcessEnv) =>
    run('bash', ['-c', command], { cwd: repo, env, maxBuffer: 64 * 1024 * 1024 }).then(
      ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
      (error: { code?: number; stdout?: string; stderr?: string }) => ({ code: error.code ?? 1, output: `${error.stdout}${error.stderr}` }),
    );

  it('npm install -g pnpm@<pinned>, then pnpm install', async () => {
    const prefix = path.join(scratch, 'npm-global');
    const env = {
      ...process.env,
      npm_config_prefix: prefix,
      PATH: [path.join(prefix, 'bin'), basePath()].join(path.delimiter),
    };
    for (const command of setUpBlocks()[0]!) {
      const result = await line(command, env);
      expect(result.code, `${command}\n${result.output}`).toBe(0);
    }
    expect((await line('command -v pnpm && pnpm --version', env)).output.trim().split('\n')).toEqual([
      path.join(prefix, 'bin', 'pnpm'),
      pinned,
    ]);
    expect(readFileSync(path.join(repo, 'node_modules/.modules.yaml'), 'utf8')).toContain(`pnpm@${pinned}`);
  }, 300_000);

  it('Corepack behind a mirror without signatures: the README\'s error, then its remedy', async () => {
    const shims = path.join(scratch, 'corepack-bin');
    const env = {
      ...process.env,
      PATH: [shims, basePath()].join(path.delimiter),
      COREPACK_HOME: path.join(scratch, 'corepack-home'),
      COREPACK_NPM_REGISTRY: mirror.url,
      COREPACK_ENABLE_DOWNLOAD_PROMPT: '0',
    };
    // `corepack enable`, into a folder of the scratch directory rather than next to node.
    const [enable, install] = setUpBlocks()[1]!;
    await mkdir(shims);
    const enabled = await line(`${enable} --install-directory ${shims} pnpm`, env);
    expect(enabled.code, enabled.output).toBe(0);
    const refused = await line(install!, env);
    expect(refused.code).not.toBe(0);
    expect(refused.output).toContain(NO_SIGNATURE);
    expect(mirror.metadataServed()).toBeGreaterThan(0);
    const remedied = await line(REMEDY, env);
    expect(remedied.code, remedied.output).toBe(0);
    expect((await line('pnpm --version', { ...env, COREPACK_INTEGRITY_KEYS: '0' })).output.trim()).toBe(pinned);
  }, 300_000);
});
