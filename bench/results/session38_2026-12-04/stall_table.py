#!/usr/bin/env python3
"""Warp-stall table of an Nsight Compute source page: `ncu -i R.ncu-rep --page source --csv
--print-source sass > R.csv`, then `stall_table.py R.csv [N]` prints the stall reasons over the
kernel and the N instructions with the most samples (session 38, call 2)."""
import csv,sys,collections
f=sys.argv[1]
rows=list(csv.reader(open(f)))
hdr=rows[1]; data=rows[2:]
ix={h:i for i,h in enumerate(hdr)}
stall_cols=[h for h in hdr if h.startswith('stall_') and '(Not Issued)' not in h]
tot=collections.Counter(); total=0
recs=[]
for r in data:
    if len(r)<len(hdr): continue
    s=int(r[ix['Warp Stall Sampling (All Samples)']] or 0)
    total+=s
    for c in stall_cols:
        v=r[ix[c]]
        if v and v!='-': tot[c]+=int(v)
    recs.append((s,r[ix['Address']][-5:],r[ix['Source']].strip(),{c:int(r[ix[c]]) for c in stall_cols if r[ix[c]] not in ('','-','0')}, r[ix['Instructions Executed']]))
print('total samples',total)
for c,v in tot.most_common(12): print(f'{c:28s} {v:8d} {100*v/total:5.1f}%')
print('--- top instructions')
for s,a,src,d,ex in sorted(recs,key=lambda x:-x[0])[:int(sys.argv[2]) if len(sys.argv)>2 else 30]:
    top=sorted(d.items(),key=lambda x:-x[1])[:3]
    print(f'{s:7d} {100*s/total:5.1f}% {a} {src[:60]:60s} ex={ex} {top}')
