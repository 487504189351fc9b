#!/usr/bin/env bash
# Benchmarks `tpusim exec` on synthetic programs; prints wall time, simulated cycles per wall
# second and peak RSS. Results go in docs/performance.md by hand.
#   scripts/bench.sh [INSTRUCTIONS] [CHIP]
set -eo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
tpusim_build tpusim gen_program
n="${1:-100000}"
chip="${2:-tpu-v4i}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$TPUSIM_BUILD/bench/gen_program" "$n" 1 > "$work/p.tasm"
echo "program: $(grep -cv '^[;.]' "$work/p.tasm") instructions on $chip"
"$TPUSIM_BUILD/tpusim" asm "$work/p.tasm" -o "$work/p.tbin" -c "$chip"
for form in tasm tbin; do
  /usr/bin/time -f "%e %M" -o "$work/time" "$TPUSIM_BUILD/tpusim" exec -c "$chip" "$work/p.$form" \
    -o "$work/out" > "$work/summary"
  read -r wall rss_kib < "$work/time"
  cycles=$(/usr/bin/python3 -c "import json;print(json.load(open('$work/out/report.json'))['cycles'])")
  /usr/bin/python3 -c "print(f'exec $form: {$wall:.2f} s wall, {$cycles} cycles, {$cycles/max($wall,1e-3)/1e6:.1f} M simulated cycles/s, peak RSS {$rss_kib/1024:.0f} MiB')"
done
