import re,sys,collections
def load(p):
    d=collections.Counter()
    for line in open(p):
        m=re.match(r'\s*([\d,]+) \([^)]*\)\s+(.*)$',line)
        if not m or 'PROGRAM TOTALS' in line: continue
        d[m.group(2)]+=int(m.group(1).replace(',',''))
    return d
a=load(sys.argv[1]); b=load(sys.argv[2]); n=int(sys.argv[3])
diff={k:(b[k]-a.get(k,0)) for k in set(a)|set(b)}
def cat(k):
    f=k
    if 'compiler::' in f or 'maglev' in f.lower() or 'Turbofan' in f or 'turboshaft' in f.lower(): return 'V8 optimising compiler (TurboFan)'
    if re.search(r'Heap::|Scavenger|MarkCompact|Marking|Sweeper|GCTracer|Evacuat|ConcurrentMarking|IncrementalMarking|MemoryAllocator|MemoryChunk|PagedSpace|NewSpace|SemiSpace|RememberedSet|SlotSet|LocalHeap|CppHeap|cppgc|Scaveng|IterateObjectCache|RootVisitor|ObjectVisitor|Weak|Sweep',f): return 'GC'
    if re.search(r'Builtins_(.*Promise|RunMicrotasks|Await|AsyncFunction|AsyncGenerator|PerformPromiseThen|ResolvePromise|RejectPromise|FulfillPromise|NewPromiseCapability|EnqueueMicrotask|CallAsyncModule)',f) or 'MicrotaskQueue' in f: return 'promises/microtasks builtins'
    if re.search(r'Builtins_\w*Handler|InterpreterEntryTrampoline|Builtins_Baseline|BaselineOutOfLine|Builtins_CompileLazy|InterpreterPushArgs|Builtins_ResumeGenerator',f): return 'interpreter/baseline (JS bytecode)'
    if re.search(r'^\?\?\?:0x',f): return 'JIT code (optimised JS, anonymous)'
    if re.search(r'Builtins_(LoadIC|KeyedLoadIC|StoreIC|KeyedStoreIC|DefineNamedOwnIC|LoadGlobalIC|CallIC|.*IC_|.*IC\b|.*ICTrampoline|StoreGlobalIC|KeyedHasIC|HasProperty|GetProperty|SetProperty|LoadIC_Megamorphic|FindOrderedHash|ObjectAssign|CloneObjectIC)',f) or 'IC::' in f or 'FeedbackNexus' in f or 'StubCache' in f : return 'V8 inline caches / property access'
    if re.search(r'Builtins_.*(String|RegExp|NumberPrototypeToString|NumberToString|StringAdd|Utf8|TypedArray|ArrayBuffer|DataView|Buffer)',f) or re.search(r'String::|StringTable|Utf8|utf8|simdutf|RegExp',f): return 'V8 strings/numbers/buffers'
    if re.search(r'Builtins_',f): return 'other V8 builtins (calls, arrays, objects, ...)'
    if re.search(r'uv_|uv__|libuv|epoll|writev|__libc_write|__libc_read|__GI___writev|read\b|write\b|syscall',f): return 'libuv + syscall wrappers'
    if re.search(r'node::',f): 
        if re.search(r'Stream|TCPWrap|LibuvStreamWrap|WriteWrap|ShutdownWrap|Buffer',f): return 'node C++: streams/sockets/buffers'
        if re.search(r'AsyncWrap|async_hooks|AsyncHooks|PromiseHook|CallbackScope|InternalCallbackScope|task_queue|TickInfo',f): return 'node C++: async hooks/callback scopes/tick queue'
        return 'node C++: other'
    if 'v8::internal::Runtime_' in f or 'Runtime::' in f: return 'V8 runtime functions (C++)'
    if re.search(r'malloc|free|memcpy|memmove|memset|memcmp|strlen|pthread|libc\.so',f): return 'libc (malloc, memcpy, locks)'
    if 'v8::' in f: return 'V8 other C++ (API, handles, objects)'
    return 'other'
c=collections.Counter()
for k,v in diff.items(): c[cat(k)]+=v
tot=sum(diff.values())
print(f'total {tot} => {tot/n:.0f}/cycle')
for k,v in c.most_common(): print(f'| {k} | {v/n:,.0f} | {100*v/tot:.1f} % |')
if len(sys.argv)>4:
    for k,v in sorted(diff.items(),key=lambda x:-x[1])[:int(sys.argv[4])]: print(f'{v/n:10.0f} {cat(k)[:20]:20} {k[:150]}')
