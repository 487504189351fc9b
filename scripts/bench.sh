#!/usr/bin/env bash
# Benchmarks `tpusim exec` on synthetic programs; prints wall time, simulated cycles per wall
# second and peak RSS; then the memory path in bytes simulated per wall second (MEM_BYTES, default
# 256 MiB streamed, a quarter of it gathered), and the DRAM controller alone (bench/bench_dram).
# Results go in docs/performance.md by hand.
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

# Memory path: bytes simulated per wall second, streaming and gather: simple, hbm (command engine)
# and hbm with the timeline engine.
tpusim_build gen_memory
mem_bytes="${MEM_BYTES:-268435456}"
for pattern in stream gather; do
  bytes=$mem_bytes
  [ "$pattern" = gather ] && bytes=$((mem_bytes / 4))
  "$TPUSIM_BUILD/bench/gen_memory" "$pattern" "$bytes" 4 > "$work/m.tasm"
  for model in simple hbm timeline; do
    # timeline: the hbm model with its faster engine (controller.engine: timeline).
    sets=(--set "memory.model=$model")
    [ "$model" = timeline ] && sets=(--set memory.model=hbm --set memory.hbm.controller.engine=timeline)
    /usr/bin/time -f "%e %M" -o "$work/time" "$TPUSIM_BUILD/tpusim" exec -q -c "$chip" "$work/m.tasm" \
      "${sets[@]}" -o "$work/out" > /dev/null
    read -r wall rss_kib < "$work/time"
    /usr/bin/python3 - "$work/out/report.json" "$pattern" "$model" "$wall" "$rss_kib" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); pattern, model, wall, rss = sys.argv[2], sys.argv[3], float(sys.argv[4]), int(sys.argv[5])
b = r['traffic_bytes']['hbm_read']
print(f"memory {pattern:6s} {model:6s}: {b/2**20:.0f} MiB in {wall:.2f} s wall = {b/max(wall,1e-3)/1e9:.2f} GB simulated/s, "
      f"achieved {r['utilization']['memory_bandwidth']*100:.1f}% of peak, peak RSS {rss/1024:.0f} MiB")
PY
  done
done

# The DRAM controller alone (no SystemC): ns per burst and a checksum of its decisions, which two
# builds that schedule alike print equal.
tpusim_build bench_dram
for pattern in stream mixed random; do "$TPUSIM_BUILD/bench/bench_dram" "$pattern" 2000000; done
