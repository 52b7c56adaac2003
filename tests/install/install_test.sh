#!/usr/bin/env bash
# Installs the build into a temporary prefix, then from another directory, with
# no TRAINSIM_DATA_DIR: runs the installed trainsim on an installed example
# (its data found relative to the executable), validates, and configures,
# builds and runs a project that calls Simulate through find_package(trainsim).
# usage: install_test.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
build=$1; src=$2; work=$3
rm -rf "$work"; mkdir -p "$work/elsewhere"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" > "$work/install.log"
unset TRAINSIM_DATA_DIR
cd "$work/elsewhere"
example=$prefix/share/trainsim/examples/reference-design/llama2-7b-1n-8nic.yaml
"$prefix/bin/trainsim" --version
"$prefix/bin/trainsim" run "$example" --fidelity analytical > run.txt
grep -q "step time" run.txt || { echo "no step time in:"; cat run.txt; exit 1; }
# Catalogue names resolve in the installed data, not the source tree: a node profile only the prefix has.
sed 's/^name: xe9680-h100/name: install-only/' "$prefix/share/trainsim/hardware-profiles/nodes/xe9680-h100.yaml" \
  > "$prefix/share/trainsim/hardware-profiles/nodes/install-only.yaml"
sed 's/node: xe9680-h100/node: install-only/' "$example" > install-only.yaml
"$prefix/bin/trainsim" run install-only.yaml --fidelity analytical > /dev/null
if [ -f "$prefix/share/trainsim/reference/measured.yaml" ]; then
  "$prefix/bin/trainsim" validate --fidelity analytical > validate.txt
  grep -q "mean" validate.txt || { echo "validate printed:"; cat validate.txt; exit 1; }
fi
# Moved elsewhere, the tree still finds its data (relocatable).
mv "$prefix" "$work/moved"
"$work/moved/bin/trainsim" run install-only.yaml --fidelity analytical > /dev/null
mv "$work/moved" "$prefix"
# A consumer project.
launcher=()
command -v ccache > /dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$src/tests/install/consumer" -B "$work/consumer" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" > "$work/consumer-configure.log"
cmake --build "$work/consumer" -j2 > "$work/consumer-build.log"
"$work/consumer/consumer" "$example"
echo "install test: ok"
