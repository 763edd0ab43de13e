// The order in which an interleaved invocation runs its configurations in each round. A run can
// be slower right after a particular other configuration: on Heat2D here, whichever ran right
// after OpenMP's took longer, also once OpenMP's threads slept (bench/README, "A run right after
// OpenMP's"). Starting each round one configuration later keeps every configuration's
// predecessor the same inside a round, so one configuration pays for OpenMP in most rounds: with
// locus ws, locus adws, oneTBB and OpenMP, ws runs right after OpenMP in three rounds of four and
// oneTBB never does. The rounds therefore follow a Williams design, a Latin square in which, inside
// the rounds, every configuration runs right after every other one equally often: once each in
// every `configs` rounds for an even count, twice in every 2 x `configs` for an odd one. The first
// run of a round follows the last run of the round before; that adds one predecessor per
// configuration and period, which no order of equal rounds can spread evenly over the others.
#pragma once

#include <cstddef>

namespace locus_bench {

// The configuration (0 .. configs - 1) that runs at position `slot` of round `round`.
std::size_t configuration_at(std::size_t round, std::size_t slot, std::size_t configs) noexcept;

}  // namespace locus_bench
