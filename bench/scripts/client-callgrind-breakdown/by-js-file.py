import sys,re,collections,subprocess

import os; HERE=os.path.dirname(os.path.abspath(__file__)); exec(open(os.path.join(HERE,'jsmap.py')).read())
src=open(os.path.join(HERE,'categories.py')).read(); catsrc=src[src.index('def cat('):src.index('c=collections.Counter()')]
exec(catsrc)
s0,m0,sN,mN,n=sys.argv[1:6]; n=int(n)
a=load(s0,m0); b=load(sN,mN)
keys=set(a)|set(b)
urls=set()
for k in keys:
    if k.startswith('JS '):
        u=re.search(r'(file://\S+\.js:\d+:\d+)',k)
        if u and 'packages/core/dist' in u.group(1): urls.add(u.group(1))
res=subprocess.run(['node',os.path.join(HERE,'srcmap.mjs')],input='\n'.join(sorted(urls)),capture_output=True,text=True).stdout
orig={l.split('\t')[0]:l.split('\t')[1] for l in res.splitlines() if '\t' in l}
def jscat(k):
    u=re.search(r'(file://\S+|node:\S+|/\S+)',k)
    if not u:
        return 'JS: unmapped JIT code' if 'unmapped' in k else 'JS: '+k[3:40]
    u=u.group(1)
    if 'packages/core/dist' in u:
        m=re.match(r'(file://\S+\.js:\d+:\d+)',u); return 'JS holdfast '+orig.get(m.group(1) if m else u,'?').replace('../src/','')
    if '/ioredis/' in u: return 'JS ioredis '+re.sub(r'.*/ioredis/built/','',u).split(':')[0]
    if '/redis-parser/' in u: return 'JS redis-parser'
    if '/redis-semaphore/' in u: return 'JS redis-semaphore '+re.sub(r'.*/redis-semaphore/lib/','',u).split(':')[0]
    if '/p-retry/' in u or '/retry/' in u: return 'JS p-retry/retry'
    if 'node_modules' in u: return 'JS other npm: '+re.sub(r'.*node_modules/','',u).split('/')[0]
    if u.startswith('node:'): return 'JS node core '+u.split(':')[1]
    if 'client-callgrind-child' in u: return 'JS bench loop'
    return 'JS other '+u[:60]
c=collections.Counter(); jsd=collections.Counter()
for k in keys:
    v=b.get(k,0)-a.get(k,0)
    if k.startswith('JS '): c[jscat(k)]+=v; jsd[k]+=v
    else: c[cat(k)]+=v
tot=sum(c.values())
print(f'total {tot} => {tot/n:.0f}/cycle')
for k,v in c.most_common(): 
    if abs(v/n)>=50: print(f'| {k} | {v/n:,.0f} | {100*v/tot:.1f} % |')
if len(sys.argv)>6:
    for k,v in jsd.most_common(int(sys.argv[6])): print(f'{v/n:8.0f} {k[:170]}')
