#!/bin/sh
# `trainsim calibrate --host-trace` end to end on a synthetic Nsight Systems
# CUDA API trace (no GPU): the framework profile it writes carries the measured
# host cost per kernel, and a scenario run with it is host-bound where the base
# is not. Usage: calibrate_host_trace.sh TRAINSIM OUT_DIR
set -eu
TS=$1
OUT=$2
mkdir -p "$OUT"
# What nsys stats prints before the CSV, the header, then a thread that
# launches a kernel every 60 us, with a 2 ms wait for the GPU every 100
# launches and a 40 ms idle gap between the 10 steps.
awk 'BEGIN {
  print "Processing [report.sqlite] with [cuda_api_trace.py]... "
  print "Start (ns),Duration (ns),Name,Result,CorrID,Pid,Tid,T-Pri,Thread Name"
  t = 1000000000
  for (step = 0; step < 10; step++) {
    for (k = 0; k < 1000; k++) {
      t += 60000
      printf "%.0f,4000,cudaLaunchKernel_v7000,0,%d,77,77,20,python\n", t, step * 1000 + k
      if (k % 100 == 99) { printf "%.0f,2000000,cudaStreamSynchronize_v3020,0,0,77,77,20,python\n", t + 5000; t += 2000000 }
    }
    t += 40000000
  }
}' > "$OUT/trace.csv"
"$TS" calibrate --host-trace "$OUT/trace.csv" --framework megatron-bridge-perf -o "$OUT/measured-host.yaml" > "$OUT/calibrate.txt"
grep -q "^host_us_per_kernel: 60  # measured: $OUT/trace.csv" "$OUT/measured-host.yaml"
grep -q "9990 gaps of 10000 launches on 1 thread; 9 idle gaps" "$OUT/measured-host.yaml"
# The same trace taken on a Grace tray: the profile holds the figure on the reference host.
"$TS" calibrate --host-trace "$OUT/trace.csv" --framework megatron-bridge-perf --node gb200-nvl72 -o "$OUT/grace.yaml" > /dev/null
grep -q "^host_us_per_kernel: 21.8 " "$OUT/grace.yaml"
# A run with the measured profile: Qwen3-235B-A22B's 16 local experts per GPU wait for a 60 us host.
SC=examples/moe/qwen3-235b-a22b-32n-8nic.yaml
base=$("$TS" run $SC --fidelity analytical --set training.framework=megatron-bridge-perf --json | sed -n 's/.*"step_time_s": *\([0-9.e+-]*\).*/\1/p' | head -1)
measured=$("$TS" run $SC --fidelity analytical --set training.framework="$OUT/measured-host.yaml" --json | sed -n 's/.*"step_time_s": *\([0-9.e+-]*\).*/\1/p' | head -1)
awk -v a="$base" -v b="$measured" 'BEGIN { if (!(b > a * 1.05)) { print "a 60 us host did not slow the step: " a " s -> " b " s" > "/dev/stderr"; exit 1 } }'
# Not a CUDA API trace: exit 2, naming the file.
printf 'a,b\n1,2\n' > "$OUT/not-a-trace.csv"
rc=0
"$TS" calibrate --host-trace "$OUT/not-a-trace.csv" --framework megatron-bridge-perf -o "$OUT/never.yaml" 2> "$OUT/err.txt" || rc=$?
[ $rc -eq 2 ] || { echo "a file without the trace's columns: exit $rc, expected 2" >&2; exit 1; }
grep -q "not-a-trace.csv: no header with Start, Duration, Name and Tid" "$OUT/err.txt"
[ ! -e "$OUT/never.yaml" ]
echo "calibrate --host-trace: ok ($base s with the base's host cost, $measured s with the measured one)"
