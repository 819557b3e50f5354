// `node scripts/check-circles.mjs`: fails when any import circle exists in the repository's source:
// between files (every relative import, `import type` included: a circle of types still ties the
// files' meaning together) in packages/*/src, bench/src and test/src, and between workspace
// packages (their package.json dependencies). Prints each circle it finds, as the files in order.
// Runs in `pnpm test` (scripts/test.mjs), so a change that closes a circle fails there.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const SOURCE = /\.(ts|mts|cts|js|mjs|cjs)$/;

/** Source folders to check: each package's src, the bench's and the test harness's. */
function sourceRoots() {
  const roots = [];
  for (const dir of ['packages', 'bench', 'test']) {
    const base = join(root, dir);
    if (!existsSync(base)) continue;
    if (existsSync(join(base, 'src'))) roots.push(join(base, 'src'));
    for (const entry of readdirSync(base)) {
      const src = join(base, entry, 'src');
      if (existsSync(src) && statSync(src).isDirectory()) roots.push(src);
    }
  }
  return roots;
}

function walk(dir, files = []) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'dist') continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, files);
    else if (SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts')) files.push(path);
  }
  return files;
}

// Static imports and re-exports (`import … from`, `export … from`, bare `import '…'`), dynamic
// `import('…')` and `require('…')`; comments are stripped first so an example in a doc comment
// is not read as an import.
const SPECIFIERS = [
  /\b(?:import|export)\s[^'";]*?\bfrom\s*['"]([^'"]+)['"]/g,
  /\bimport\s*['"]([^'"]+)['"]/g,
  /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
  /\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
];

function stripComments(text) {
  return text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');
}

/** The file a relative specifier names (`./x.js` is `./x.ts` in the source), or undefined. */
function resolveImport(from, specifier) {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(from), specifier);
  const stem = base.replace(/\.(js|mjs|cjs|ts|mts|cts)$/, '');
  const candidates = [base, `${stem}.ts`, `${stem}.mts`, `${stem}.cts`, `${stem}.mjs`, `${stem}.js`, `${stem}.cjs`, join(base, 'index.ts')];
  return candidates.find((path) => SOURCE.test(path) && existsSync(path) && statSync(path).isFile());
}

function fileGraph() {
  const graph = new Map();
  for (const file of sourceRoots().flatMap((dir) => walk(dir))) {
    const text = stripComments(readFileSync(file, 'utf8'));
    const targets = new Set();
    for (const pattern of SPECIFIERS) {
      for (const match of text.matchAll(pattern)) {
        const target = resolveImport(file, match[1]);
        if (target && target !== file) targets.add(target);
      }
    }
    graph.set(file, [...targets]);
  }
  return graph;
}

function packageGraph() {
  const dirs = ['packages', 'bench', 'test', 'examples'].flatMap((dir) => {
    const base = join(root, dir);
    if (!existsSync(base)) return [];
    const own = existsSync(join(base, 'package.json')) ? [base] : [];
    return [...own, ...readdirSync(base).map((entry) => join(base, entry)).filter((path) => existsSync(join(path, 'package.json')))];
  });
  const manifests = dirs.map((dir) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')));
  const names = new Set(manifests.map((manifest) => manifest.name));
  const graph = new Map();
  for (const manifest of manifests) {
    // devDependencies count too: a package whose tests need a package that needs it is a circle in the build order.
    const deps = { ...manifest.dependencies, ...manifest.peerDependencies, ...manifest.devDependencies };
    graph.set(manifest.name, Object.keys(deps).filter((name) => names.has(name) && name !== manifest.name));
  }
  return graph;
}

/** Strongly connected components of more than one node (or a node importing itself): the circles. */
function circles(graph) {
  let index = 0;
  const indices = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  // Iterative Tarjan: the source tree is deep enough that recursion is a risk not worth taking.
  for (const start of graph.keys()) {
    if (indices.has(start)) continue;
    const work = [{ node: start, next: 0 }];
    indices.set(start, index);
    low.set(start, index++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1];
      const edges = graph.get(frame.node) ?? [];
      if (frame.next < edges.length) {
        const target = edges[frame.next++];
        if (!graph.has(target)) continue;
        if (!indices.has(target)) {
          indices.set(target, index);
          low.set(target, index++);
          stack.push(target);
          onStack.add(target);
          work.push({ node: target, next: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.node, Math.min(low.get(frame.node), indices.get(target)));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1].node;
        low.set(parent, Math.min(low.get(parent), low.get(frame.node)));
      }
      if (low.get(frame.node) === indices.get(frame.node)) {
        const component = [];
        let member;
        do {
          member = stack.pop();
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        if (component.length > 1) found.push(component.reverse());
      }
    }
  }
  return found;
}

const show = (node) => (node.startsWith('/') ? relative(root, node) : node);
const fileCircles = circles(fileGraph());
const packageCircles = circles(packageGraph());
for (const circle of [...packageCircles, ...fileCircles]) {
  console.error(`import circle (${circle.length}): ${circle.map(show).join(' → ')}`);
}
const total = fileCircles.length + packageCircles.length;
if (total > 0) {
  console.error(`check-circles: ${total} import circle(s)`);
  process.exit(1);
}
console.log('check-circles: no import circle between files or packages');
