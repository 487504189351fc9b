#!/usr/bin/env bash
# Every sample workload (or the subset given with --quick) runs on every preset chip in timing
# mode and writes a whole report (report.json naming the chip, with cycles, and operators whose
# MACs sum to its own; ops.csv with a row per operator; a trace); teach-4x4 runs the teaching
# sample. One line per failure.
#   run_matrix.sh TPUSIM SOURCE_DIR [--quick]
set -u
tpusim=$1 source=$2 quick=${3:-}
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
cd "$source" || exit 2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
if [ "$quick" = --quick ]; then
  workloads=(workloads/resnet50.yaml workloads/mobilenetv2.yaml workloads/bert-base-layer-s128.yaml
             workloads/gpt2-small-decode.yaml workloads/scalesim/alexnet.csv)
else
  workloads=(workloads/*.yaml workloads/tpuv3/*.yaml workloads/tpuv1/*.yaml workloads/scalesim/*.csv)
fi
failures=0 runs=0
for chip in configs/chips/*.yaml; do
  name=$(basename "$chip" .yaml)
  list=("${workloads[@]}")
  [ "$name" = teach-4x4 ] && list=(workloads/teach/matmul-4x4.yaml)
  for w in "${list[@]}"; do
    runs=$((runs + 1))
    # A fresh directory per run, so that a run that writes nothing cannot pass on the last one's.
    rm -rf "$out/r"
    if ! timeout 300 "$tpusim" run -q -c "$chip" -w "$w" -o "$out/r" > /dev/null 2> "$out/err"; then
      echo "FAIL $name $w: $(head -c 300 "$out/err")"
      failures=$((failures + 1))
    elif ! /usr/bin/python3 - "$out/r" "$name" > "$out/err" 2>&1 <<'PY'
import csv, json, sys
out, chip = sys.argv[1], sys.argv[2]
r = json.load(open(out + "/report.json"))
assert r["chip"] == chip, f"report names chip {r['chip']}"
assert r["cycles"] > 0, "no cycles"
assert r["macs"] == sum(o["macs"] for o in r["ops"]), "the operators' MACs do not sum to the run's"
assert r["ops"], "no operators"
rows = list(csv.DictReader(open(out + "/ops.csv")))
assert len(rows) == len(r["ops"]), f"ops.csv has {len(rows)} rows for {len(r['ops'])} operators"
assert json.load(open(out + "/trace.json"))["traceEvents"], "empty trace"
PY
    then
      echo "FAIL $name $w: report: $(tail -n 1 "$out/err")"
      failures=$((failures + 1))
    fi
  done
done
echo "$runs runs, $failures failed"
[ "$failures" -eq 0 ]
