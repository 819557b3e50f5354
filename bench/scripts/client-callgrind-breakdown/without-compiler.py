"""Instructions per cycle of each library in a bench:client-callgrind keep-dir, with and without
V8's optimising compiler and the garbage collector (the parts that vary between passes: how much
recompilation and which collections fall inside the measured cycles), and the promise builtins.

python3 without-compiler.py <keep-dir> [cycles=2000]
Needs <keep-dir>/pass<p>-<lib>-<n>.self.txt: `callgrind_annotate --threshold=100 <dump> > <dump minus .cg>.self.txt`.
"""
import collections, glob, os, re, sys

def load(path):
    costs = collections.Counter()
    for line in open(path):
        m = re.match(r'\s*([\d,]+) \([^)]*\)\s+(.*)$', line)
        if not m or 'PROGRAM TOTALS' in line: continue
        costs[m.group(2)] += int(m.group(1).replace(',', ''))
    return costs

keep, cycles = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 2000
runs = sorted({re.match(r'(pass\d+)-(.+)-0\.self\.txt', os.path.basename(p)).groups() for p in glob.glob(f'{keep}/pass*-0.self.txt')})
GC = re.compile(r'sprp|HashSeed|Heap::|Scavenger|MarkCompact|Marking|Sweeper|GCTracer|Evacuat|ConcurrentMarking|IncrementalMarking|MemoryAllocator|MemoryChunk|PagedSpace|NewSpace|SemiSpace|RememberedSet|SlotSet|LocalHeap|CppHeap|cppgc|Scaveng|IterateObjectCache|RootVisitor|ObjectVisitor|Weak|Sweep')
print('| pass | library | total | compiler | GC | without compiler | without compiler and GC | promise builtins |')
print('|---|---|--:|--:|--:|--:|--:|--:|')
for pass_, lib in runs:
    empty, full = load(f'{keep}/{pass_}-{lib}-0.self.txt'), load(f'{keep}/{pass_}-{lib}-{cycles}.self.txt')
    diff = {k: (full[k] - empty.get(k, 0)) / cycles for k in set(empty) | set(full)}
    total = sum(diff.values())
    compiler = sum(v for k, v in diff.items() if 'compiler::' in k)
    gc = sum(v for k, v in diff.items() if 'compiler::' not in k and GC.search(k))
    promises = sum(v for k, v in diff.items() if re.search(r'Promise|Microtask|Await|AsyncFunction', k))
    print(f'| {pass_[4:]} | {lib} | {total:,.0f} | {compiler:,.0f} | {gc:,.0f} | {total - compiler:,.0f} | {total - compiler - gc:,.0f} | {promises:,.0f} |')
