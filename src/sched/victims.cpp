#include "sched/victims.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "sched/context.hpp"

namespace locus::detail {

victim_distribution::victim_distribution(const context& thief, std::vector<double> weight) {
  if (static_cast<int>(weight.size()) != thief.workers()) {
    throw std::invalid_argument("locus: a victim distribution needs one weight per worker (" +
                                std::to_string(thief.workers()) + "), not " +
                                std::to_string(weight.size()));
  }
  weight[static_cast<std::size_t>(thief.self())] = 0;  // never itself
  double total = 0;
  cumulative_.reserve(weight.size());
  for (const double w : weight) {
    total += std::max(0.0, w);
    cumulative_.push_back(total);
  }
}

victim_distribution victim_distribution::by_level(const context& thief,
                                                  std::span<const double> weight_of_level) {
  std::vector<double> weight(static_cast<std::size_t>(thief.workers()), 0.0);
  for (int v = 0; v < thief.workers(); ++v) {
    const auto level = static_cast<std::size_t>(thief.distance(thief.self(), v));
    if (level < weight_of_level.size())
      weight[static_cast<std::size_t>(v)] = weight_of_level[level];
  }
  return victim_distribution(thief, std::move(weight));
}

int victim_distribution::draw(context& thief) const {
  if (cumulative_.empty() || cumulative_.back() <= 0) return -1;
  // 32 random bits scaled onto [0, total): fine-grained enough for any weights a policy uses.
  const double x = cumulative_.back() * (static_cast<double>(thief.random()) / 4294967296.0);
  // x < the total, so some worker of nonzero weight has a cumulative weight above it.
  return static_cast<int>(std::upper_bound(cumulative_.begin(), cumulative_.end(), x) -
                          cumulative_.begin());
}

}  // namespace locus::detail
