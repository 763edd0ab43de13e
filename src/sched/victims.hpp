// Victims drawn from a distribution over the workers, for a policy that biases its steals (seed
// 001 §III-B: nearer victims more likely). Built once per thief, drawn on every steal attempt.
#pragma once

#include <span>
#include <vector>

namespace locus::detail {

class context;

class victim_distribution {
 public:
  victim_distribution() = default;
  // Worker i is drawn with probability weight[i] / (sum of the weights); negative weights count
  // as 0. Throws std::invalid_argument unless there is one weight per worker.
  victim_distribution(const context& thief, std::vector<double> weight);
  // Every other worker at topology distance l from the thief weighs weight_of_level[l] (levels
  // past the end weigh 0): e.g. {0, 8, 4, 1} makes a victim one level up twice as likely as one
  // two levels up, and each of those four times a three-level one.
  static victim_distribution by_level(const context& thief,
                                      std::span<const double> weight_of_level);

  // A worker other than the thief, or -1 when every weight is 0.
  int draw(context& thief) const;

 private:
  std::vector<double> cumulative_;  // cumulative_[i]: the weights of workers 0 .. i
};

}  // namespace locus::detail
