#!/usr/bin/env bash
# Progress on stderr of a long verb: with --progress every phase runs from 0%
# to 100%, nothing of it reaches stdout; without --progress (stderr not a
# terminal) there is none, and stdout has the same lines but timings.
# usage: progress_check.sh VERB "PHASE|PHASE|..." COMMAND...   (PHASES "": no phases)
# PROGRESS_ONLY=1: skip the run without --progress.
set -u
verb=$1; phases=$2; shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; echo "--- stderr with --progress:"; cat "$tmp/err1"; exit 1; }
"$@" --progress > "$tmp/out1" 2> "$tmp/err1"; s1=$?
[ -s "$tmp/out1" ] || fail "nothing on stdout"
if grep -Eq "^$verb: .*[0-9]+%, " "$tmp/out1"; then fail "progress on stdout"; fi
IFS='|' read -r -a list <<< "$phases"
[ ${#list[@]} -eq 0 ] && list=("")
for p in "${list[@]}"; do
  prefix="$verb: ${p:+$p: }"
  grep -Fq "${prefix}0%, " "$tmp/err1" || fail "no '${prefix}0%' line"
  grep -Fq "${prefix}100%, " "$tmp/err1" || fail "no '${prefix}100%' line"
done
if [ "${PROGRESS_ONLY:-0}" != 1 ]; then
  "$@" > "$tmp/out2" 2> "$tmp/err2"; s2=$?
  [ "$s1" = "$s2" ] || fail "exit status $s1 with --progress, $s2 without"
  if grep -Eq "^$verb: .*[0-9]+%, " "$tmp/err2"; then fail "progress without --progress: $(cat "$tmp/err2")"; fi
  # The same results: stdout equal once timings ("0.64 s", "12 ms") are masked.
  mask() { sed -E 's/[0-9]+ per second/R/g; s/[0-9]+(\.[0-9]+)? (s|ms)\b/T/g; s/"[a-z_]*_s":[0-9.e+-]+/T/g' "$1"; }
  diff <(mask "$tmp/out1") <(mask "$tmp/out2") > "$tmp/diff" || fail "stdout differs: $(cat "$tmp/diff")"
fi
echo "ok: $(wc -l < "$tmp/err1") progress lines"
