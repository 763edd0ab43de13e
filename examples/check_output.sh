#!/usr/bin/env bash
# examples/check_output.sh REGEX COMMAND [ARGS...]: runs COMMAND, shows its output, and passes
# only when it exits with status 0 AND its output has a line matching the extended regular
# expression REGEX (ctest's PASS_REGULAR_EXPRESSION alone would ignore the exit status).
set -uo pipefail
regex=$1
shift
out=$("$@" 2>&1)
status=$?
printf '%s\n' "$out"
if ((status != 0)); then
  echo "check_output: '$1' exited with status $status" >&2
  exit "$status"
fi
if ! grep -Eq -- "$regex" <<<"$out"; then
  echo "check_output: no line of the output matches '$regex'" >&2
  exit 1
fi
