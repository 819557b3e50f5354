// `pnpm test` step: every relative link in a published package's Markdown (README.md,
// CHANGELOG.md…) must name a file that is inside that package's tarball. A link to
// `../../examples` or `src/scripts` works on GitHub but breaks on npm, in an unpacked tarball
// and in the TypeDoc site: link to the repository's URL instead.
//
// The tarball's files come from `npm pack --dry-run`, so `files`, .npmignore and npm's own
// rules are the ones publishing uses. Exits 1 and lists every broken link.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize, posix } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));

/** The files `npm pack` would put in the package's tarball, as posix paths. */
function tarballFiles(dir) {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: dir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Set(JSON.parse(out)[0].files.map((file) => file.path));
}

/** Markdown with fenced code blocks and inline code spans blanked out (keeps line numbers). */
function withoutCode(text) {
  return text
    .replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, (block) => block.replace(/[^\n]/g, ' '))
    .replace(/`[^`\n]*`/g, (span) => ' '.repeat(span.length));
}

/** Every link target with its line: inline links and images, reference definitions, HTML. */
function linkTargets(text) {
  const prose = withoutCode(text);
  const patterns = [
    /\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g, // [text](target "title"), ![alt](target)
    /^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$/gm, // [id]: target
    /\b(?:href|src)\s*=\s*["']([^"']+)["']/g, // <a href="…">, <img src="…">
  ];
  const found = [];
  for (const pattern of patterns) {
    for (const match of prose.matchAll(pattern)) {
      found.push({ target: match[1], line: prose.slice(0, match.index).split('\n').length });
    }
  }
  return found;
}

/** Why a link breaks outside the repository, or undefined when it does not. */
function problem(target, files) {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith('#')) return undefined; // URL, anchor
  if (target.startsWith('/')) return 'is absolute to a host the tarball does not have';
  const path = posix.normalize(decodeURI(target.split('#')[0].split('?')[0]));
  if (path.startsWith('../') || path === '..') return 'points outside the package';
  if (files.has(path)) return undefined;
  const dir = path.replace(/\/$/, '');
  if ([...files].some((file) => file.startsWith(`${dir}/`))) return undefined;
  return 'is not in the published tarball';
}

const broken = [];
let checked = 0;
const packagesDir = join(root, 'packages');
for (const name of readdirSync(packagesDir).sort()) {
  const dir = join(packagesDir, name);
  const manifestPath = join(dir, 'package.json');
  if (!existsSync(manifestPath)) continue;
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
  if (manifest.private) continue;
  const files = tarballFiles(dir);
  for (const file of [...files].filter((f) => f.endsWith('.md')).sort()) {
    const text = readFileSync(join(dir, normalize(file)), 'utf8');
    for (const { target, line } of linkTargets(text)) {
      checked++;
      const why = problem(target, files);
      if (why) broken.push(`packages/${name}/${file}:${line}: ${target} ${why}`);
    }
  }
}

if (broken.length > 0) {
  console.error(`${broken.length} link(s) in package Markdown break outside the repository:`);
  for (const line of broken) console.error(`  ${line}`);
  console.error('Link to the repository instead (https://github.com/… from package.json "repository").');
  process.exit(1);
}
console.log(`package links: ${checked} checked, none relative to files outside the tarballs`);
