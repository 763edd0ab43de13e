// A distributed queue's settings, read from the environment when the queue is created.
#pragma once

#include <cstddef>

namespace locus::detail {

struct dist_config {
  // LOCUS_DIST_STEAL: how many tasks a steal across ranks takes: 0 means half of the victim's
  // migratable tasks (HotSLAW's StealHalf across nodes, the default), else at most this many
  // ("one" is 1).
  std::size_t chunk = 0;
  // LOCUS_DIST_POOL: how many queued tasks a rank keeps migratable at once (a bound: only the
  // shallowest level of puts enters the pool, so it fills only where one task puts many).
  std::size_t pool = 4096;
  // LOCUS_DIST_NODE_SIZE: 0 means ranks share a node when MPI_Get_processor_name says so;
  // N > 0 pretends ranks r and r' share one when r / N == r' / N (a synthetic layout, to test
  // victim selection by node on one machine, as LOCUS_TOPOLOGY does for workers).
  std::size_t node_size = 0;
  // LOCUS_DIST_DELAY_US: a test hook; before handling each message the communication thread
  // sleeps a random time up to this many microseconds, to shake out races in the protocol.
  unsigned delay_us = 0;

  // Throws locus::config_error naming the variable and its accepted values.
  static dist_config from_environment();
};

}  // namespace locus::detail
