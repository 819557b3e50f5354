import re,sys,collections,bisect
# usage: self.txt perf.map -> Counter name->self Ir (JIT addresses mapped to perf map names; others kept)
def load(selftxt, perfmap):
    ents=[]
    for line in open(perfmap):
        p=line.rstrip('\n').split(' ',2)
        if len(p)<3: continue
        ents.append((int(p[0],16),int(p[1],16),p[2]))
    ents.sort(); starts=[e[0] for e in ents]
    d=collections.Counter(); unm=0
    for line in open(selftxt):
        m=re.match(r'\s*([\d,]+) \([^)]*\)\s+(.*)$',line)
        if not m or 'PROGRAM TOTALS' in line: continue
        v=int(m.group(1).replace(',','')); f=m.group(2)
        a=re.match(r'\?\?\?:0x([0-9a-f]+) \[\?\?\?\]',f)
        if a:
            addr=int(a.group(1),16); i=bisect.bisect_right(starts,addr)-1
            # latest (re)definition wins: search backwards for containing range
            name=None
            j=i
            while j>=0 and j>i-50:
                s,sz,n=ents[j]
                if s<=addr<s+sz: name=n; break
                j-=1
            f='JS '+(name or 'unmapped')
        d[f]+=v
    return d
