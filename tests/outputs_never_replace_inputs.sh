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
echo "outputs never replace inputs: ok"
