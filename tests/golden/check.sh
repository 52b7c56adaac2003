#!/usr/bin/env bash
# Golden-output test of a CLI command: runs it, compares stdout+stderr and the
# exit status with tests/golden/NAME.out. TRAINSIM_UPDATE_GOLDEN=1 rewrites it.
# usage: check.sh NAME EXPECTED_STATUS COMMAND...
set -u
name=$1; want=$2; shift 2
dir=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$dir/../.." && pwd)
cd "$src"
got=$("$@" 2>&1); status=$?
# Paths in messages are relative to the source tree; normalise absolute ones.
got=${got//$src\//}
# Under the sanitizer build, ASan warns (three lines, once) when SimGrid's
# actors switch stacks; it is about ASan's bookkeeping, not the output.
# Qt's note on the session's runtime folder (the GUI's tests) is about the
# machine, not the output either.
got=$(printf '%s\n' "$got" | awk '/^==[0-9]+==WARNING: ASan is ignoring requested __asan_handle_no_return/ {skip = 3} skip > 0 {skip--; next} /^QStandardPaths: / {next} {print}')
if [ "${TRAINSIM_UPDATE_GOLDEN:-0}" = 1 ]; then
  printf '%s\n' "$got" > "$dir/$name.out"; echo "updated $name.out"; exit 0
fi
if [ "$status" != "$want" ]; then
  echo "exit status $status, expected $want"; printf '%s\n' "$got"; exit 1
fi
diff -u "$dir/$name.out" <(printf '%s\n' "$got") || { echo "output differs from tests/golden/$name.out (TRAINSIM_UPDATE_GOLDEN=1 to accept)"; exit 1; }
