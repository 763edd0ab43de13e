#!/usr/bin/env bash
# Compile-time rejections of the public API: each snippet here must fail to compile with the
# message its first line names, and the control snippet must compile. Usage: run.sh CXX INCLUDE_DIR
set -uo pipefail
cxx=$1
include=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
status=0
for src in "$here"/*.cpp; do
  name=$(basename "$src")
  expect=$(sed -n '1s|^// expect: ||p' "$src")
  out=$("$cxx" -std=c++20 -fsyntax-only -I "$include" "$src" 2>&1)
  rc=$?
  if [[ "$expect" == "compiles" ]]; then
    if ((rc != 0)); then
      echo "FAIL $name: expected to compile:"; echo "$out" | head -20; status=1
    else
      echo "ok   $name compiles"
    fi
  elif ((rc == 0)); then
    echo "FAIL $name: compiled, expected an error containing: $expect"; status=1
  elif ! grep -qF -- "$expect" <<<"$out"; then
    echo "FAIL $name: failed without the expected message '$expect':"; echo "$out" | head -20
    status=1
  else
    echo "ok   $name rejected: $expect"
  fi
done
exit $status
