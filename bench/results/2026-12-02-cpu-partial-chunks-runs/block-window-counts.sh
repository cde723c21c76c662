for bin in /tmp/before/b /work/main/build; do
for spec in "dense2048 10 4" "dense2048 50 4" "dense4096 10 4" "powerlaw 1 2" "lap3d 1 2" "randsym 10 4"; do
 set -- $spec
 r=$(timeout 900 $bin/bench/peers/bench_eps -case $1 -dir /tmp/cnt/mats -k $2 -tol 1e-8 -eps_type cudalanczos -eps_cudalanczos_backend host -eps_cudalanczos_block_size $3 -eps_view 2>&1 | python3 -c '
import json,sys,re
t=sys.stdin.read(); d=[json.loads(l) for l in t.splitlines() if l.startswith("{")][0]
fp=re.findall(r"(\d+) full orthogonalization passes",t)[-1]
print(d["matvecs"], d["passes"], d["verification"], "fullpasses",fp, d["max_rel_res"], "%.13g"%d["eigs"][0], d["nconv"], d["time_s"])')
 echo "$bin $spec: $r"
done; done
