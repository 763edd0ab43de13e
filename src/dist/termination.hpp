// Termination detection by Dijkstra-Safra's token with message counts (Dijkstra, EWD998,
// "Shmuel Safra's version of termination detection", 1987), as UTS's MPI version uses.
//
// Every rank counts the basic messages it sent minus those it received (basic: a message that
// can make its receiver active, here those that carry tasks or task outputs) and turns black when
// it receives one. Rank 0, once passive, sends a white token with count 0 around the ring
// 0 -> 1 -> ... -> n-1 -> 0; each rank keeps it until it is passive, then adds its count,
// blackens the token if it is black itself, turns white and passes it on. When the token comes
// back to a passive white rank 0 still white and the counts sum to zero, no rank is active and no
// basic message is in flight: rank 0 announces the end. Otherwise it starts another round.
//
// Epochs: each top-level wait (or all_empty test) on a rank enters the next epoch, and a rank is
// passive for epoch e only once it has entered it; so a rank that has not yet reached its wait
// (and may still put work at the top level) holds the token. Counts are never reset: they stay
// balanced across epochs, which Safra's argument allows.
#pragma once

#include <cstdint>
#include <optional>

#include "dist/steal_protocol.hpp"

namespace locus::detail {

class termination {
 public:
  termination(int rank, int size) noexcept : rank_(rank), size_(size) {}

  void basic_sent() noexcept { ++count_; }
  void basic_received() noexcept {
    --count_;
    black_ = true;
  }

  // A token arrived: this rank holds it until it is passive.
  void token_arrived(const dist_wire::token_msg& t) noexcept { held_ = t; }
  // Rank 0 announced that `epoch` ended.
  void done_arrived(std::uint64_t epoch) noexcept {
    if (epoch > done_) done_ = epoch;
  }

  // What a passive rank that has entered `entered` epochs does next.
  struct step {
    enum class kind { none, pass_token, announce } what = kind::none;
    int to = 0;                    // pass_token: the next rank
    dist_wire::token_msg token{};  // pass_token
    std::uint64_t epoch = 0;       // announce: the epoch that ended (already marked done here)
  };
  step passive(std::uint64_t entered) noexcept;

  std::uint64_t done_epoch() const noexcept { return done_; }

 private:
  int rank_;
  int size_;
  std::int64_t count_ = 0;
  bool black_ = false;
  std::optional<dist_wire::token_msg> held_;
  bool round_out_ = false;  // rank 0: a token of its is travelling
  std::uint64_t done_ = 0;
};

}  // namespace locus::detail
