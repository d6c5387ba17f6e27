#!/usr/bin/env bash
# Usage: loadtest/cg-fanout.sh /path/to/cairn-bench [outdir]
# Callgrind instructions per position for the fan-out benchmark, by differencing P=30000 and P=10000 runs,
# for K=1 and K=20 friends (--rounds 1). Prints raw I refs per run and the per-position figures.
set -euo pipefail
bin=${1:?usage: $0 /path/to/cairn-bench [outdir]}
out=${2:-/tmp}
declare -A I
for K in 1 20; do
  for P in 30000 10000; do
    f="$out/cg-$K-$P.out"
    valgrind --tool=callgrind --callgrind-out-file="$f" "$bin" fanout --friends "$K" --positions "$P" --rounds 1 \
      >"$out/cg-$K-$P.stdout" 2>"$out/cg-$K-$P.stderr"
    n=$(sed -n 's/.*Collected : *\([0-9]*\).*/\1/p' "$out/cg-$K-$P.stderr" | tail -1)
    [ -n "$n" ] || n=$(sed -n 's/^summary: *\([0-9]*\).*/\1/p' "$f" | tail -1)
    I[$K-$P]=$n
    echo "K=$K P=$P I_refs=$n"
  done
done
for K in 1 20; do
  echo "K=$K per_position=$(( (I[$K-30000] - I[$K-10000]) / 20000 )) (exact: $(echo "scale=1; (${I[$K-30000]} - ${I[$K-10000]}) / 20000" | bc 2>/dev/null || echo n/a))"
done
