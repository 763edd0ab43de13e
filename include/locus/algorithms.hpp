// Structured parallel patterns built on task_group.
#pragma once

#include <concepts>
#include <cstddef>
#include <tuple>
#include <type_traits>
#include <utility>

#include "locus/hints.hpp"
#include "locus/task_group.hpp"

namespace locus {

// Runs every callable, possibly in parallel, and returns when all are done. Each child carries an
// equal work hint so that hint-driven schedulers split the workers evenly.
template <class... F>
void parallel_invoke(F&&... fs) {
  static_assert(sizeof...(F) >= 1);
  if constexpr (sizeof...(F) == 1) {
    (std::forward<F>(fs)(), ...);
  } else {
    // Children 0..n-2 are spawned child-first and the last runs inline, so a one-worker run
    // executes them left to right like the serial elision.
    task_group tg{work_hint{static_cast<double>(sizeof...(F))}};
    auto refs = std::forward_as_tuple(std::forward<F>(fs)...);
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (tg.run(std::get<I>(refs), work_hint{1.0}), ...);
    }
    (std::make_index_sequence<sizeof...(F) - 1>{});
    std::get<sizeof...(F) - 1>(refs)();
    tg.wait();
  }
}

namespace detail {

template <class Index, class Body>
void parallel_for_range(Index lo, Index hi, const Body& body, std::size_t grain_size) {
  while (static_cast<std::size_t>(hi - lo) > grain_size) {
    const Index mid = lo + (hi - lo) / 2;
    task_group tg{work_hint{static_cast<double>(hi - lo)}};
    tg.run([&body, lo, mid, grain_size] { parallel_for_range(lo, mid, body, grain_size); },
           work_hint{static_cast<double>(mid - lo)});
    parallel_for_range(mid, hi, body, grain_size);
    tg.wait();
    return;
  }
  if constexpr (std::is_invocable_v<const Body&, Index>) {
    for (Index i = lo; i < hi; ++i) body(i);
  } else {
    body(lo, hi);
  }
}

// The range form wins when a body fits both, so that a body written for it keeps its meaning.
template <class Body, class Index, class T>
inline constexpr bool reduce_range_body =
    std::is_invocable_r_v<T, const Body&, Index, Index, const T&>;
template <class Body, class Index, class T>
inline constexpr bool reduce_element_body = std::is_invocable_r_v<T, const Body&, Index, const T&>;

template <class Index, class T, class Body, class Combine>
T parallel_reduce_range(Index lo, Index hi, const T& identity, const Body& body,
                        const Combine& combine, std::size_t grain_size) {
  if (static_cast<std::size_t>(hi - lo) <= grain_size) {
    if constexpr (reduce_range_body<Body, Index, T>) {
      return body(lo, hi, identity);
    } else {
      T acc = identity;
      for (Index i = lo; i < hi; ++i) acc = body(i, std::as_const(acc));
      return acc;
    }
  }
  const Index mid = lo + (hi - lo) / 2;
  T left = identity;
  task_group tg{work_hint{static_cast<double>(hi - lo)}};
  tg.run([&] { left = parallel_reduce_range(lo, mid, identity, body, combine, grain_size); },
         work_hint{static_cast<double>(mid - lo)});
  T right = parallel_reduce_range(mid, hi, identity, body, combine, grain_size);
  tg.wait();
  return combine(std::move(left), std::move(right));
}

}  // namespace detail

// Calls body(i) for every i in [first, last), or body(lo, hi) on subranges of at most `g`
// iterations when body takes two indices. Ranges are split in halves, each half hinted with its
// iteration count.
template <std::integral Index, class Body>
void parallel_for(Index first, Index last, Body body, grain g = {}) {
  static_assert(
      std::is_invocable_v<const Body&, Index> || std::is_invocable_v<const Body&, Index, Index>,
      "parallel_for body must take (Index) or (Index lo, Index hi)");
  if (last <= first) return;
  detail::parallel_for_range(first, last, body, g.value == 0 ? 1 : g.value);
}

// Reduces [first, last). The body folds part of the range into a partial result, in one of two
// forms: body(lo, hi, init) -> T folds a subrange of at most `g` iterations into init, or
// body(i, acc) -> T folds one element into acc (applied as acc = body(i, acc) to each i of such
// a subrange in increasing order, starting from identity). A body callable both ways is used in
// the range form. combine(T, T) -> T merges two partial results and must be associative;
// identity must be a neutral element of combine. The result is the same as the serial fold for
// any associative combine, whatever the schedule.
template <std::integral Index, class T, class Body, class Combine>
T parallel_reduce(Index first, Index last, T identity, Body body, Combine combine, grain g = {}) {
  static_assert(
      detail::reduce_range_body<Body, Index, T> || detail::reduce_element_body<Body, Index, T>,
      "parallel_reduce body must be T(Index lo, Index hi, const T& init) (folds a "
      "subrange) or T(Index i, const T& acc) (folds one element)");
  if (last <= first) return identity;
  return detail::parallel_reduce_range(first, last, identity, body, combine,
                                       g.value == 0 ? 1 : g.value);
}

}  // namespace locus
