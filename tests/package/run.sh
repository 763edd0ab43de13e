#!/usr/bin/env bash
# tests/package/run.sh: install a built locus into a temporary prefix, build the consumer project
# in this folder against it with find_package(locus), run it and check its output.
#
#   bash tests/package/run.sh BUILD_DIR [CXX_COMPILER [CMAKE]]
#
# BUILD_DIR is a configured and built locus build tree (e.g. build/release). CXX_COMPILER is the
# compiler that built it (default: c++), CMAKE the cmake to use (default: cmake on PATH).
# LOCUS_PACKAGE_KEEP=1 keeps the temporary folder for inspection.
set -euo pipefail

if (($# < 1 || $# > 3)); then
  echo "usage: $0 BUILD_DIR [CXX_COMPILER [CMAKE]]" >&2
  exit 2
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src_root=$(cd "$here/../.." && pwd)
build=$(cd "$1" && pwd)
cxx=${2:-c++}
cmake=${3:-cmake}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/locus-package.XXXXXX")
if [[ "${LOCUS_PACKAGE_KEEP:-0}" == 1 ]]; then
  echo "keeping $tmp"
else
  trap 'rm -rf "$tmp"' EXIT
fi
prefix="$tmp/prefix"

fail() {
  echo "package_consumer: FAILED: $*" >&2
  exit 1
}

echo "== install $build -> $prefix"
"$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
  { cat "$tmp/install.log" >&2; fail "cmake --install"; }
cat "$tmp/install.log"

config=$(find "$prefix" -name locusConfig.cmake -print -quit)
[[ -n "$config" ]] || fail "no locusConfig.cmake under $prefix"
[[ -f "$prefix/include/locus/locus.hpp" ]] || fail "include/locus/locus.hpp was not installed"
# The installed package must stand on its own: no paths into the source or build tree.
if grep -rlF -e "$src_root/" -e "$build/" "$(dirname "$config")" >"$tmp/leaks" 2>/dev/null; then
  echo "installed CMake files that refer to the source or build tree:" >&2
  cat "$tmp/leaks" >&2
  grep -rnF -e "$src_root/" -e "$build/" "$(dirname "$config")" >&2 || true
  fail "the installed package refers to $src_root or $build"
fi

generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi

echo "== configure the consumer with CMAKE_PREFIX_PATH=$prefix, CXX=$cxx"
# The consumer is configured in a clean environment as far as CMake is concerned: only the
# temporary prefix tells it where locus is.
"$cmake" -S "$here" -B "$tmp/build" "${generator[@]}" \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF ||
  fail "configuring the consumer project"
found=$(sed -n 's/^locus_DIR:PATH=//p' "$tmp/build/CMakeCache.txt")
[[ "$found" == "$prefix/"* ]] || fail "find_package(locus) found '$found', not the package in $prefix"

echo "== build the consumer"
"$cmake" --build "$tmp/build" --verbose 2>&1 | tee "$tmp/build.log" ||
  fail "building the consumer project"
if grep -q 'warning:' "$tmp/build.log"; then
  echo "note: the consumer build printed warnings (see above); locus's public headers should" \
       "compile cleanly with -Wall -Wextra -Wpedantic" >&2
fi

# run_consumer EXE NAME: runs a built consumer, which must exit 0 and print "NAME: OK".
run_consumer() {
  local exe=$1 name=$2 status=0
  echo "== run the $name"
  "$tmp/build/$exe" >"$tmp/$exe.log" 2>&1 || status=$?
  cat "$tmp/$exe.log"
  ((status == 0)) || fail "the $name exited with status $status"
  grep -qx "$name: OK" "$tmp/$exe.log" || fail "the $name did not print '$name: OK'"
}

run_consumer app "package consumer"
# The `dist` component is installed exactly when the build tree has the distributed taskq; its
# consumer runs as one rank, without mpirun.
if [[ -f "$build/liblocus_dist.a" || -f "$build/liblocus_dist.so" ]]; then
  [[ -x "$tmp/build/dist_app" ]] ||
    fail "locus was built with MPI, but find_package(locus COMPONENTS dist) did not find it"
  run_consumer dist_app "dist consumer"
fi
echo "package_consumer: passed"
