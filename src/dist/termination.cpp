#include "dist/termination.hpp"

namespace locus::detail {

termination::step termination::passive(std::uint64_t entered) noexcept {
  step s;
  const int next = (rank_ + 1) % size_;
  if (rank_ != 0) {
    if (!held_ || held_->epoch > entered) return s;
    s.what = step::kind::pass_token;
    s.to = next;
    s.token = {held_->epoch, held_->count + count_, held_->black || black_};
    black_ = false;
    held_.reset();
    return s;
  }
  const std::uint64_t epoch = done_ + 1;
  if (entered < epoch) return s;  // rank 0 has not reached this epoch's wait yet
  if (held_) {
    const dist_wire::token_msg t = *held_;
    held_.reset();
    round_out_ = false;
    if (t.epoch == epoch && !t.black && !black_ && t.count + count_ == 0) {
      done_ = epoch;
      s.what = step::kind::announce;
      s.epoch = epoch;
      return s;
    }
  }
  if (round_out_) return s;
  black_ = false;
  round_out_ = true;
  s.what = step::kind::pass_token;
  s.to = next;
  s.token = {epoch, 0, false};
  return s;
}

}  // namespace locus::detail
