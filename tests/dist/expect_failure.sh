#!/usr/bin/env bash
# Runs a command that must fail: passes when its exit status is not zero and its output (stdout
# and stderr together) matches the extended regular expression given first.
#   expect_failure.sh REGEX COMMAND...
set -uo pipefail
regex=$1
shift
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
if ((rc == 0)); then
  echo "expect_failure.sh: the command succeeded; it should have failed" >&2
  exit 1
fi
if ! grep -Eq -- "$regex" <<<"$out"; then
  echo "expect_failure.sh: exit status $rc, but the output does not match '$regex'" >&2
  exit 1
fi
echo "expect_failure.sh: failed as expected (exit status $rc, message found)"
