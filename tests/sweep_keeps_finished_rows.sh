#!/bin/sh
# A rerun of a sweep that forgot --resume keeps the finished rows: exit 2
# naming the flags, the file untouched; --resume completes it, --overwrite
# starts it again. Usage: sweep_keeps_finished_rows.sh TRAINSIM OUT_DIR
set -eu
TS=$1
OUT=$2
rm -rf "$OUT"
mkdir -p "$OUT"
SWEEP=examples/sweeps/llama2-70b-layouts.yaml
"$TS" sweep "$SWEEP" -o "$OUT/grid.csv" -q
rows=$(wc -l < "$OUT/grid.csv")
cp "$OUT/grid.csv" "$OUT/before.csv"
status=0
"$TS" sweep "$SWEEP" -o "$OUT/grid.csv" -q 2> "$OUT/err.txt" || status=$?
[ "$status" -eq 2 ] || { echo "rerun without --resume: exit $status, expected 2" >&2; exit 1; }
grep -q "already holds $((rows - 1)) rows: --resume keeps them" "$OUT/err.txt" || { cat "$OUT/err.txt" >&2; exit 1; }
cmp "$OUT/grid.csv" "$OUT/before.csv" || { echo "the refused rerun changed the file" >&2; exit 1; }
status=0
"$TS" sweep "$SWEEP" -o "$OUT/grid.csv" -q --resume --overwrite 2> /dev/null || status=$?
[ "$status" -eq 2 ] || { echo "--resume with --overwrite: exit $status, expected 2" >&2; exit 1; }
"$TS" sweep "$SWEEP" -o "$OUT/grid.csv" -q --resume
cmp "$OUT/grid.csv" "$OUT/before.csv"
"$TS" sweep "$SWEEP" -o "$OUT/grid.csv" -q --overwrite
[ "$(wc -l < "$OUT/grid.csv")" -eq "$rows" ]
echo "sweep keeps finished rows: ok"
