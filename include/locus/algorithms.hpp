// Structured parallel patterns built on task_group.
#pragma once

#include <concepts>
#include <cstddef>
#include <optional>
#include <tuple>
#include <type_traits>
#include <utility>

#include "locus/hints.hpp"
#include "locus/task_group.hpp"

namespace locus {

// A callable that runs at a place: an argument of parallel_invoke whose child carries
// locus::place{p} (and its descendants with it).
template <class F>
struct placed {
  place where;
  F fn;
  void operator()() { fn(); }
};
template <class F>
placed<std::decay_t<F>> on_place(place where, F&& fn) {
  return {where, std::forward<F>(fn)};
}

namespace detail {
template <class F>
inline constexpr bool is_placed = false;
template <class F>
inline constexpr bool is_placed<placed<F>> = true;

template <class G>
void run_child(task_group& tg, G&& g) {
  if constexpr (is_placed<std::remove_cvref_t<G>>) {
    tg.run(g.fn, work_hint{1.0}, g.where);
  } else {
    tg.run(std::forward<G>(g), work_hint{1.0});
  }
}
}  // namespace detail

// Runs every callable, possibly in parallel, and returns when all are done. Each child carries an
// equal work hint so that hint-driven schedulers split the workers evenly. A callable wrapped in
// on_place(p, f) runs as a child at place p.
template <class... F>
void parallel_invoke(F&&... fs) {
  static_assert(sizeof...(F) >= 1);
  constexpr bool any_placed = (detail::is_placed<std::remove_cvref_t<F>> || ...);
  if constexpr (sizeof...(F) == 1 && !any_placed) {
    (std::forward<F>(fs)(), ...);
  } else {
    // Children 0..n-2 are spawned child-first and the last runs inline, so a one-worker run
    // executes them left to right like the serial elision; when some callable names a place,
    // the last one is spawned too (running inline, it would keep the caller's place).
    constexpr std::size_t spawned = any_placed ? sizeof...(F) : sizeof...(F) - 1;
    task_group tg{work_hint{static_cast<double>(sizeof...(F))}};
    auto refs = std::forward_as_tuple(std::forward<F>(fs)...);
    [&]<std::size_t... I>(std::index_sequence<I...>) {
      (detail::run_child(tg, std::get<I>(refs)), ...);
    }
    (std::make_index_sequence<spawned>{});
    if constexpr (!any_placed) std::get<sizeof...(F) - 1>(refs)();
    tg.wait();
  }
}

// The index range [row_begin, row_end) x [col_begin, col_end) of a two-dimensional
// parallel_for, and the blocks its body is given.
template <std::integral Index>
struct range2d {
  Index row_begin, row_end, col_begin, col_end;
  Index rows() const noexcept { return row_end - row_begin; }
  Index cols() const noexcept { return col_end - col_begin; }
  bool empty() const noexcept { return row_end <= row_begin || col_end <= col_begin; }
  // Iterations in the range.
  std::size_t size() const noexcept {
    return empty() ? 0 : static_cast<std::size_t>(rows()) * static_cast<std::size_t>(cols());
  }
};

template <std::integral Index>
range2d(Index, Index, Index, Index) -> range2d<Index>;

namespace detail {

// How a parallel loop is cut: its leaves' size, and the bytes an iteration touches (0: no size
// hints). Lives in the loop's caller, which outlives every task of the loop.
struct loop_split {
  std::size_t grain_rows = 1;
  std::size_t grain_cols = 1;
  std::size_t item_bytes = 0;
};

template <class Index>
task_group loop_group(Index iterations, const loop_split& split) {
  const double work = static_cast<double>(iterations);
  if (split.item_bytes == 0) return task_group{work_hint{work}};
  return task_group{work_hint{work},
                    size_hint{static_cast<std::size_t>(iterations) * split.item_bytes}};
}

template <class Index, class Body>
void parallel_for_range(Index lo, Index hi, const Body& body, const loop_split& split) {
  while (static_cast<std::size_t>(hi - lo) > split.grain_rows) {
    const Index mid = lo + (hi - lo) / 2;
    task_group tg = loop_group(hi - lo, split);
    tg.run([&body, &split, lo, mid] { parallel_for_range(lo, mid, body, split); },
           work_hint{static_cast<double>(mid - lo)});
    parallel_for_range(mid, hi, body, split);
    tg.wait();
    return;
  }
  if constexpr (std::is_invocable_v<const Body&, Index>) {
    for (Index i = lo; i < hi; ++i) body(i);
  } else {
    body(lo, hi);
  }
}

template <class Index, class Body>
void run_block(const range2d<Index>& b, const Body& body) {
  if constexpr (std::is_invocable_v<const Body&, const range2d<Index>&>) {
    body(b);
  } else {
    for (Index i = b.row_begin; i < b.row_end; ++i) {
      for (Index j = b.col_begin; j < b.col_end; ++j) body(i, j);
    }
  }
}

// Halves, rows first: a block both of whose dimensions exceed their grains is cut into a top
// and a bottom half, and each of those into a left and a right half (`cols_next`), so the leaves
// and their order are those of a quadrant recursion (a one-worker run visits them in the order of
// the serial recursion); a block with one dimension within its grain is halved along the other.
// The first half is spawned, the second run by the caller. Halves, not quadrants, because of
// what a thief of the node's continuation takes: under plain child-first stealing the thief of a
// quadrant node's took the top-right quadrant and left the bottom-left one to the owner, so the
// parts met along a column (a halo of one cache line per row), and ws, which queues the further
// children of a group whose continuation was taken, gave out the rest one steal per quadrant; the
// thief of a halved node's continuation takes the whole bottom half, and the parts meet along a
// row (bench/README, "heat2d's cut").
template <class Index, class Body>
void parallel_for_blocks(const range2d<Index>& b, const Body& body, const loop_split& split,
                         bool cols_next = false) {
  const bool rows = static_cast<std::size_t>(b.rows()) > split.grain_rows;
  const bool cols = static_cast<std::size_t>(b.cols()) > split.grain_cols;
  if (!rows && !cols) {
    run_block(b, body);
    return;
  }
  const bool cut_rows = rows && !(cols && cols_next);
  range2d<Index> first = b;
  range2d<Index> second = b;
  if (cut_rows) {
    first.row_end = second.row_begin = b.row_begin + b.rows() / 2;
  } else {
    first.col_end = second.col_begin = b.col_begin + b.cols() / 2;
  }
  task_group tg = loop_group(b.size(), split);
  tg.run([&body, &split, first, cut_rows] { parallel_for_blocks(first, body, split, cut_rows); },
         work_hint{static_cast<double>(first.size())});
  parallel_for_blocks(second, body, split, cut_rows);
  tg.wait();
}

// Reads a loop's hints into `split` (a grain applies to both dimensions of a two-dimensional
// loop) and returns its place, if one is named.
template <class... H>
std::optional<place> read_loop_hints(loop_split& split, const H&... hints) {
  std::optional<place> where;
  (
      [&](const auto& h) {
        using hint = std::decay_t<decltype(h)>;
        if constexpr (std::is_same_v<hint, grain>) {
          split.grain_rows = split.grain_cols = h.value == 0 ? 1 : h.value;
        } else if constexpr (std::is_same_v<hint, grain2d>) {
          split.grain_rows = h.rows == 0 ? 1 : h.rows;
          split.grain_cols = h.cols == 0 ? 1 : h.cols;
        } else if constexpr (std::is_same_v<hint, item_size>) {
          split.item_bytes = h.bytes;
        } else {
          where = h;
        }
      }(hints),
      ...);
  return where;
}

// Runs a whole loop here, or as a child at `where` (its tasks inherit the place).
template <class Loop>
void run_loop_at(const std::optional<place>& where, const Loop& loop) {
  if (!where) {
    loop();
    return;
  }
  task_group tg;
  tg.run([&loop] { loop(); }, *where);
  tg.wait();
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
// iteration count. Hints: locus::grain{g}; locus::item_size{bytes}, the bytes one iteration
// touches (each group of the split then carries a size_hint); and locus::place{p}, which runs the
// whole loop as a child at place p (its tasks inherit it).
template <std::integral Index, class Body, class... H>
void parallel_for(Index first, Index last, Body body, H... hints) {
  static_assert(
      std::is_invocable_v<const Body&, Index> || std::is_invocable_v<const Body&, Index, Index>,
      "parallel_for body must take (Index) or (Index lo, Index hi)");
  static_assert((detail::one_of<H, grain, item_size, place> && ...),
                "parallel_for takes locus::grain, locus::item_size and locus::place hints");
  if (last <= first) return;
  detail::loop_split split;
  const std::optional<place> where = detail::read_loop_hints(split, hints...);
  detail::run_loop_at(where, [&] { detail::parallel_for_range(first, last, body, split); });
}

// Calls body(block) on blocks of at most rows x cols iterations that together cover `range` once,
// or body(i, j) for every (i, j) in it when body takes two indices. The range is halved
// recursively, its rows and then each half's columns (only the dimension that exceeds its grain,
// if one is already within it), which gives the blocks of a recursion into quadrants in the same
// order; each half is hinted with its number of iterations, the second run by the caller. Hints:
// locus::grain2d{rows, cols} (or locus::grain{g} for both; default 1 x 1), locus::item_size{bytes}
// and locus::place{p}, as for the one-dimensional form.
template <std::integral Index, class Body, class... H>
void parallel_for(const range2d<Index>& range, Body body, H... hints) {
  static_assert(std::is_invocable_v<const Body&, const range2d<Index>&> ||
                    std::is_invocable_v<const Body&, Index, Index>,
                "a two-dimensional parallel_for body must take (const locus::range2d<Index>&) "
                "or (Index row, Index col)");
  static_assert((detail::one_of<H, grain, grain2d, item_size, place> && ...),
                "a two-dimensional parallel_for takes locus::grain2d (or locus::grain), "
                "locus::item_size and locus::place hints");
  if (range.empty()) return;
  detail::loop_split split;
  const std::optional<place> where = detail::read_loop_hints(split, hints...);
  detail::run_loop_at(where, [&] { detail::parallel_for_blocks(range, body, split); });
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
