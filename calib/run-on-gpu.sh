#!/usr/bin/env bash
# GPU calibration and validation on a single-GPU machine, end to end (< 8 min):
#   1. builds the standalone measuring program (calib/cuda: CUDA toolkit only)
#      and runs its numerical checks (GPU layer step, and the fp8 / mxfp8 / nvfp4 GEMMs where
#      the GPU has them) against the host reference;
#   2. builds `trainsim` (the plan, the fit and the prediction live there);
#   3. writes the plan (GEMM shapes etc. from the workload model), measures,
#      fits the profile (plus storage at $STORAGE_DIR) and prints the validation table.
# Output: gpu-calibrated.yaml (bf16/fp16 keys from the bf16 GEMM sweep, fp8 keys from the fp8
# sweep on compute capability >= 8.9, mxfp8 and nvfp4 keys from the block-scaled sweeps on
# compute capability >= 10.0, i.e. Blackwell; a GPU without a format gets no keys for it and the
# measuring program says so in one line) and gpu-calibrated-measurements.yaml (raw samples, and
# the tf32 GEMM curve the layer step ran with, which validation predicts it with).
# Usage: calib/run-on-gpu.sh [OUT_DIR]   (env: TRAINSIM=path to a built trainsim to skip
#        step 2; SHAPES="H:F:A:KV:S:B ..."; NCCL=1 to add collectives on >= 2 GPUs; JOBS;
#        CUDA_ARCHS="90" to build the measuring program for those architectures only;
#        BASE=h200-sxm-141g to also write gpu-training.yaml, that profile with the measured keys;
#        SCENARIO=s.yaml to add that training scenario's GEMMs to the sweep (calibrate --scenario), its
#        expert GEMMs also as Transformer Engine issues them (a call per expert on 4 streams);
#        SUSTAIN_S=15 the seconds of the sustained (power-capped) GEMM run per precision, 0 to skip;
#        PLAN=plan.txt, written elsewhere by `trainsim calibrate --write-plan`, the plan measured
#        (with TRAINSIM, fitted and validated here as well); or to measure on a GPU
#        node that lacks trainsim's dependencies (SimGrid, yaml-cpp, Boost, Eigen, GoogleTest), or
#        where trainsim does not build (the default plan then): the build, the
#        checks and the measuring run there, and the script prints the fit and validation
#        commands to run where trainsim is, on OUT_DIR/raw-measurements.yaml. On such a node
#        without PLAN, the script says so before building anything and measures calib/gpu-plan.txt,
#        the default plan (a test keeps it what `trainsim calibrate --backend cuda --write-plan` writes))
# OUT_DIR defaults to $OUT where the caller set it (a lent machine's folder that comes back).
# The < 8 min holds for CUDA_ARCHS=90 (one architecture) on 16 cores.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
OUT=${1:-${OUT:-$ROOT/build-gpu-calib/out}}
BUILD=$ROOT/build-gpu-calib
JOBS=${JOBS:-$(nproc)}
STORAGE_DIR=${STORAGE_DIR:-$OUT/storage}
mkdir -p "$OUT" "$STORAGE_DIR"
start=$SECONDS
step() { echo "== [$((SECONDS - start))s] $*"; }

if [ -z "${CUDACXX:-}" ] && ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi
if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "run-on-gpu.sh: no NVIDIA GPU visible (nvidia-smi -L failed); nothing to calibrate" >&2
  exit 3
fi
nvidia-smi -L

# trainsim itself needs SimGrid, yaml-cpp and Boost.Graph: where they are missing, say so now,
# before any build, and measure the default plan (fit and validate then run where trainsim is).
have_trainsim_deps() {
  [ -f /usr/include/simgrid/s4u.hpp ] && [ -f /usr/include/yaml-cpp/yaml.h ] && [ -d /usr/include/boost/graph ] &&
    [ -d /usr/include/eigen3 ] && [ -f /usr/include/gtest/gtest.h ]
}
if [ -z "${PLAN:-}" ] && [ -z "${TRAINSIM:-}" ] && ! have_trainsim_deps; then
  PLAN=$ROOT/calib/gpu-plan.txt
  echo "run-on-gpu.sh: no SimGrid / yaml-cpp / Boost.Graph / Eigen / GoogleTest here to build trainsim: measuring the default plan $PLAN"
fi

step "building the measuring program (calib/cuda)"
cmake -S "$ROOT/calib/cuda" -B "$BUILD/cuda" -DCMAKE_BUILD_TYPE=Release \
  ${CUDA_ARCHS:+-DTRAINSIM_CUDA_ARCHITECTURES="$CUDA_ARCHS"} >"$OUT/cmake-cuda.log" 2>&1 \
  || { tail -20 "$OUT/cmake-cuda.log"; exit 1; }
cmake --build "$BUILD/cuda" -j"$JOBS" >>"$OUT/cmake-cuda.log" 2>&1 || { tail -40 "$OUT/cmake-cuda.log"; exit 1; }
PROG="$BUILD/cuda/bin/trainsim-calib-cuda"

step "numerical checks: GPU layer step and low-precision (fp8, mxfp8, nvfp4) GEMMs vs host reference"
"$PROG" --check
if [ -x "$BUILD/cuda/bin/trainsim_calib_cuda_tests" ]; then "$BUILD/cuda/bin/trainsim_calib_cuda_tests" --gtest_brief=1; fi

if [ -z "${PLAN:-}" ] && [ -z "${TRAINSIM:-}" ]; then
  step "building trainsim (plan, fit, prediction)"
  # Where it does not build, the GPU's time is not lost: measure the default plan and fit elsewhere.
  if cmake -S "$ROOT" -B "$BUILD/trainsim" -DCMAKE_BUILD_TYPE=Release -DTRAINSIM_BUILD_GUI=OFF -DTRAINSIM_BUILD_CUDA=OFF \
       >"$OUT/cmake-trainsim.log" 2>&1 &&
     cmake --build "$BUILD/trainsim" -j"$JOBS" --target trainsim >>"$OUT/cmake-trainsim.log" 2>&1; then
    TRAINSIM="$BUILD/trainsim/bin/trainsim"
  else
    tail -20 "$OUT/cmake-trainsim.log"
    PLAN=$ROOT/calib/gpu-plan.txt
    echo "run-on-gpu.sh: trainsim did not build here ($OUT/cmake-trainsim.log): measuring the default plan $PLAN"
  fi
fi

if [ -n "${PLAN:-}" ] && [ ! -r "$PLAN" ]; then
  echo "run-on-gpu.sh: PLAN=$PLAN: cannot read the plan" >&2
  exit 2
fi

if [ -n "${PLAN:-}" ] && [ -z "${TRAINSIM:-}" ]; then
  step "measuring the plan $PLAN (GEMM sweep in tf32, bf16, and fp8/mxfp8/nvfp4 where supported, memory kernels, attention, layer steps${NCCL:+, NCCL})"
  "$PROG" --plan "$PLAN" --out "$OUT/raw-measurements.yaml" ${NCCL:+--nccl} ${SUSTAIN_S:+--sustain-s "$SUSTAIN_S"}
  step "measured: $OUT/raw-measurements.yaml; fit and validate it where trainsim is built:"
  echo "  trainsim calibrate --backend cuda --measurements raw-measurements.yaml -o gpu-calibrated.yaml [--storage DIR]"
  echo "      [--training-profile gpu-training.yaml --base GPU]   (a profile for training scenarios)"
  echo "  trainsim validate --profile gpu-calibrated.yaml"
  exit 0
fi


SHAPE_ARGS=()
for s in ${SHAPES:-}; do SHAPE_ARGS+=(--shape "$s"); done
if [ -n "${PLAN:-}" ]; then
  # A plan written elsewhere (`trainsim calibrate --write-plan`) is the one measured; SHAPES and
  # SCENARIO went into it there.
  [ -z "${SHAPES:-}${SCENARIO:-}" ] || echo "run-on-gpu.sh: measuring PLAN=$PLAN; SHAPES and SCENARIO are for a plan written here, and are not used"
  MEASURE_PLAN=$PLAN
else
  step "plan"
  "$TRAINSIM" calibrate --backend cuda "${SHAPE_ARGS[@]}" ${SCENARIO:+--scenario "$SCENARIO"} --write-plan "$OUT/plan.txt"
  MEASURE_PLAN=$OUT/plan.txt
fi
step "measuring $MEASURE_PLAN (GEMM sweep in tf32, bf16, and fp8/mxfp8/nvfp4 where supported, memory kernels, attention, layer steps${NCCL:+, NCCL})"
"$PROG" --plan "$MEASURE_PLAN" --out "$OUT/raw-measurements.yaml" ${NCCL:+--nccl} ${SUSTAIN_S:+--sustain-s "$SUSTAIN_S"}
step "fitting the profile (and the storage test at $STORAGE_DIR)"
"$TRAINSIM" calibrate --backend cuda --measurements "$OUT/raw-measurements.yaml" --storage "$STORAGE_DIR" \
  --storage-mib 1024 -o "$OUT/gpu-calibrated.yaml" ${BASE:+--training-profile "$OUT/gpu-training.yaml" --base "$BASE"}
step "validation: predicted (workload model + calibrated profile) vs measured layer steps"
"$TRAINSIM" validate --profile "$OUT/gpu-calibrated.yaml"
step "done: $OUT/gpu-calibrated.yaml (bf16/fp16 and fp8/mxfp8/nvfp4 keys where measured), $OUT/gpu-calibrated-measurements.yaml (samples, tf32 layer curve)"
