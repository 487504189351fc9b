#!/usr/bin/env bash
# Every sample workload (or the subset given with --quick) runs on every preset chip in timing
# mode and writes a whole report; teach-4x4 runs the teaching sample. One line per failure.
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
    if ! timeout 300 "$tpusim" run -q -c "$chip" -w "$w" -o "$out/r" > /dev/null 2> "$out/err" ||
       ! grep -q '"cycles"' "$out/r/report.json"; then
      echo "FAIL $name $w: $(head -c 300 "$out/err")"
      failures=$((failures + 1))
    fi
  done
done
echo "$runs runs, $failures failed"
[ "$failures" -eq 0 ]
