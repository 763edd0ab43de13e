// Every lazy push numa-ws makes, for tests that check where work went (seed 001 §III-B: a push
// lands in the single-entry mailbox of a worker of the frame's place, or the frame runs where it
// is after the threshold of failed tries). Off (one relaxed load per push) unless an observer is
// installed.
#pragma once

namespace locus::detail {

struct numa_ws_push_event {
  int pusher = 0;         // the worker that pushed
  int place = 0;          // the frame's place
  int target = -1;        // the worker whose mailbox took it, or -1: it runs on the pusher
  int failures = 0;       // the frame's failed tries so far (this push's included)
  int target_place = -1;  // the place of `target`
};

using numa_ws_push_observer = void (*)(const numa_ws_push_event&);

// Installs `observer` for every runtime in the process (null removes it). It runs on the
// pusher's thread, during the push.
void set_numa_ws_push_observer(numa_ws_push_observer observer) noexcept;

}  // namespace locus::detail
