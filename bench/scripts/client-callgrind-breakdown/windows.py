"""Instructions per cycle of each measured window of one windows.sh run (a callgrind dump per
window: nothing subtracted, no 0-cycle run), with V8's optimising compiler and the GC apart, as
without-compiler.py splits them. A dump taken mid-run also lists the functions on the stack at
that moment (main, the event loop, the microtask runner under the marker's write) with the whole
part's cost: the total is the dump's own, and lines above half of it are left out of the parts.

python3 windows.py <cycles> <window.self.txt>...   (callgrind_annotate --threshold=100 of each dump)
"""
import collections, re, sys
HERE = __import__('os').path.dirname(__file__)
src = open(f'{HERE}/without-compiler.py').read()
exec(src[src.index('def load'):src.index('keep, cycles')])
GC = re.compile(re.search(r"GC = re.compile\(r'(.*)'\)", src).group(1))
cycles = int(sys.argv[1])
print('| window | total | compiler | GC | without compiler | without compiler and GC | promise builtins |')
print('|---|--:|--:|--:|--:|--:|--:|')
for i, path in enumerate(sys.argv[2:], 1):
    costs = load(path)
    summary = int(next(l for l in open(path) if 'PROGRAM TOTALS' in l).split()[0].replace(',', ''))
    costs = {k: v for k, v in costs.items() if v <= summary / 2}
    total = summary / cycles
    compiler = sum(v for k, v in costs.items() if 'compiler::' in k) / cycles
    gc = sum(v for k, v in costs.items() if 'compiler::' not in k and GC.search(k)) / cycles
    promises = sum(v for k, v in costs.items() if re.search(r'Promise|Microtask|Await|AsyncFunction', k)) / cycles
    print(f'| {i} | {total:,.0f} | {compiler:,.0f} | {gc:,.0f} | {total - compiler:,.0f} | {total - compiler - gc:,.0f} | {promises:,.0f} |')
