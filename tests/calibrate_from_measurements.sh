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
# A Blackwell sweep (compute capability >= 10.0) adds the block-scaled formats' keys, each from its own sweep.
"$TS" calibrate --backend cuda --measurements tests/data/gpu-measurements-synthetic-blackwell.yaml -o "$OUT/blackwell.yaml"
for key in "  mxfp8: 1125" "  nvfp4: 1950" "    mxfp8: 1" "    nvfp4: 1" "    mxfp8: 500" "    nvfp4: 900"; do
  grep -q "^$key  # calibrated: synthetic" "$OUT/blackwell.yaml" || { echo "missing '$key' in $OUT/blackwell.yaml" >&2; exit 1; }
done
grep -q "gemm_nvfp4: {precision: nvfp4" "$OUT/blackwell-measurements.yaml"
"$TS" validate --profile "$OUT/blackwell.yaml" > "$OUT/validate-blackwell.txt"
grep -q "over 2 layer shapes" "$OUT/validate-blackwell.txt"
# The Hopper-like file has no block-scaled samples: no such keys.
if grep -q "mxfp8\|nvfp4" "$OUT/synthetic-gpu.yaml"; then echo "block-scaled keys without block-scaled samples" >&2; exit 1; fi
echo "calibrate + validate from synthetic GPU measurements: ok"
