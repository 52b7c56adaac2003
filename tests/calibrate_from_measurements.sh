#!/bin/sh
# The trainsim half of calib/run-on-gpu.sh, on a synthetic measurements file
# (no GPU): fit and write the profile and its sidecar, then validate the layer
# steps with them. Usage: calibrate_from_measurements.sh TRAINSIM OUT_DIR
set -eu
TS=$1
OUT=$2
mkdir -p "$OUT"
"$TS" calibrate --backend cuda --measurements tests/data/gpu-measurements-synthetic.yaml -o "$OUT/synthetic-gpu.yaml"
# bf16 and fp8 keys come from their own sweeps, marked calibrated; the tf32 curve goes to the sidecar.
grep -q "^  bf16: 640  # calibrated: synthetic" "$OUT/synthetic-gpu.yaml"
grep -q "^  fp8: 1120  # calibrated: synthetic" "$OUT/synthetic-gpu.yaml"
grep -q "profile_16bit: bf16" "$OUT/synthetic-gpu-measurements.yaml"
"$TS" validate --profile "$OUT/synthetic-gpu.yaml" > "$OUT/validate.txt"
grep -q "over 2 layer shapes" "$OUT/validate.txt"
echo "calibrate + validate from synthetic GPU measurements: ok"
