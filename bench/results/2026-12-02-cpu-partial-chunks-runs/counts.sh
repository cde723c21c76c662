for spec in "lap3d 50" "powerlaw 50" "lap3d 10" "lap2d 10" "randsym 10" "powerlaw 10" "lap3d 1"; do
 set -- $spec
 for v in "" "-eps_cudalanczos_verify 0"; do
  for bin in /tmp/before/b /work/main/build; do
  r=$(timeout 900 $bin/bench/peers/bench_eps -case $1 -dir /tmp/cnt/mats -k $2 -tol 1e-8 -eps_type cudalanczos -eps_cudalanczos_backend host $v 2>&1 | grep '^{' | python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print(d["matvecs"], d["redone"], d["max_rel_res"], d["nconv"], "%.12g"%d["eigs"][-1])')
  echo "$spec [$v] $(basename $(dirname $bin))/$(basename $bin): $r"
  done
 done
done
