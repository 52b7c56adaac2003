#!/bin/sh
# An output never replaces what it should not: run --trace refuses a file the
# scenario reads (its node profile here), and --trace, sweep -o and
# calibrate -o refuse a pipe (opening one would wait for a reader), each
# exit 2 with the input untouched. Usage: outputs_never_replace_inputs.sh TRAINSIM OUT_DIR
set -eu
TS=$1
OUT=$2
rm -rf "$OUT"
mkdir -p "$OUT"
cp hardware-profiles/nodes/xe9680-h100.yaml "$OUT/node.yaml"
cp "$OUT/node.yaml" "$OUT/node.before"
sed "s|node: xe9680-h100|node: $OUT/node.yaml|" examples/reference-design/llama2-7b-1n-8nic.yaml > "$OUT/s.yaml"
expect2() {
  status=0
  timeout 60 "$@" > /dev/null 2> "$OUT/err.txt" || status=$?
  [ "$status" -eq 2 ] || { echo "$*: exit $status, expected 2" >&2; cat "$OUT/err.txt" >&2; exit 1; }
}
expect2 "$TS" run "$OUT/s.yaml" --trace "$OUT/node.yaml"
grep -q "is a file the scenario reads" "$OUT/err.txt" || { cat "$OUT/err.txt" >&2; exit 1; }
cmp "$OUT/node.yaml" "$OUT/node.before" || { echo "--trace replaced the node profile" >&2; exit 1; }
mkfifo "$OUT/pipe.json"
expect2 "$TS" run "$OUT/s.yaml" --trace "$OUT/pipe.json"
grep -q "not a regular file" "$OUT/err.txt" || { cat "$OUT/err.txt" >&2; exit 1; }
expect2 "$TS" sweep examples/sweeps/llama2-70b-layouts.yaml -o "$OUT/pipe.json" -q
expect2 "$TS" calibrate --backend cpu -o "$OUT/pipe.json"
[ -p "$OUT/pipe.json" ] || { echo "the pipe was replaced" >&2; exit 1; }
expect2 "$TS" calibrate --backend cpu -o "$OUT/p.yaml" --name 'a: b'
# calibrate never writes over what it reads (measurements or a trace taken on the
# cluster) nor one of its outputs over another.
cp tests/data/gpu-measurements-h200.yaml "$OUT/m.yaml"
cp "$OUT/m.yaml" "$OUT/m.before"
expect2 "$TS" calibrate --backend cuda --measurements "$OUT/m.yaml" -o "$OUT/m.yaml"
grep -q "is the --measurements input" "$OUT/err.txt" || { cat "$OUT/err.txt" >&2; exit 1; }
cmp "$OUT/m.yaml" "$OUT/m.before" || { echo "calibrate replaced its --measurements input" >&2; exit 1; }
cp "$OUT/m.yaml" "$OUT/x-measurements.yaml"
expect2 "$TS" calibrate --backend cuda --measurements "$OUT/x-measurements.yaml" -o "$OUT/x.yaml"
grep -q "the measurements file written beside -o" "$OUT/err.txt" || { cat "$OUT/err.txt" >&2; exit 1; }
cmp "$OUT/x-measurements.yaml" "$OUT/m.before" || { echo "calibrate replaced its --measurements input" >&2; exit 1; }
expect2 "$TS" calibrate --backend cuda --measurements "$OUT/m.yaml" -o "$OUT/t.yaml" --training-profile "$OUT/t.yaml" --base h200-sxm-141g
grep -q "are the same file" "$OUT/err.txt" || { cat "$OUT/err.txt" >&2; exit 1; }
[ ! -e "$OUT/t.yaml" ] || { echo "calibrate wrote a profile it refused" >&2; exit 1; }
printf 'Start (ns),Duration (ns),Name,Result,CorrID,Pid,Tid,T-Pri,Thread Name\n' > "$OUT/trace.csv"
cp "$OUT/trace.csv" "$OUT/trace.before"
expect2 "$TS" calibrate --host-trace "$OUT/trace.csv" --framework megatron-bridge-perf -o "$OUT/trace.csv"
grep -q "is the --host-trace input" "$OUT/err.txt" || { cat "$OUT/err.txt" >&2; exit 1; }
cmp "$OUT/trace.csv" "$OUT/trace.before" || { echo "calibrate replaced its --host-trace input" >&2; exit 1; }
echo "outputs never replace inputs: ok"
