// NUMA-placed memory (locus/memory.hpp, src/mem): allocation on each place and interleaved, the
// OS binding checked through hwloc on the real machine, the recorded bindings on a synthetic
// two-NUMA topology seen by the locality model (bound pages homed at their place, interleaved
// pages alternating, bindings made or freed during a session, other runtimes' bindings ignored),
// the first-touch helper giving part i to place i, the allocator in containers, the fallback when
// the OS refuses to bind, and the rejections.
#include <gtest/gtest.h>
#include <hwloc.h>
#include <stdlib.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <list>
#include <memory>
#include <new>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "locality_fixture.hpp"
#include "locus/locus.hpp"
#include "mem/binder.hpp"
#include "mem/binding_registry.hpp"
#include "mem/first_touch.hpp"
#include "mem/pages.hpp"
#include "mem/range_map.hpp"
#include "sched/gang.hpp"
#include "sched/runtime_impl.hpp"
#include "topology/topology.hpp"

namespace {

using locus::locality_report;
using locus::place;
using locus::mem::page_home;

// Workers 0 and 1 on place 0, 2 and 3 on place 1 (with .workers = 4); with .workers = 2, worker
// 0 on place 0 and worker 1 on place 1.
constexpr const char* two_numa = "pack:2 [numa] l3:1(size=8MB) l2:4(size=1MB) core:1 pu:1";
constexpr std::size_t line = 64;

std::size_t page() {
  return locus::mem::page_size();
}

bool page_aligned(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % page() == 0;
}

// A clean environment for each test (the real machine unless a test names a topology), and no
// session left open after it.
class MemoryTest : public locus_test::locality_env_test {};

// Runs f on worker `w` of rt: a gang of one member there.
template <class F>
class one_member final : public locus::detail::gang_task {
 public:
  one_member(int w, F& f) : gang_task(1), f_(f) { workers = {w}; }
  void run_member(int) override { f_(); }

 private:
  F& f_;
};

template <class F>
void on_worker(locus::runtime& rt, int w, F f) {
  rt.exec([&] {
    locus::detail::group_state g;
    locus::detail::spawn_parent_first(g, std::make_unique<one_member<F>>(w, f));
    locus::detail::wait(g);
  });
}

void read_on(locus::runtime& rt, int w, const void* p, std::size_t bytes) {
  on_worker(rt, w, [&] { locus::locality::touch_read(p, bytes); });
}

std::vector<locus::mem::recorded_binding> recorded(locus::runtime& rt) {
  return locus::mem::binding_registry::instance().bindings_of(&rt.impl().binder);
}

template <class E, class F>
std::string message_of(F f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected an exception";
  return {};
}

// ---- the real machine ---------------------------------------------------------------------------

// The binding hwloc reads back for [p, p + bytes).
struct os_binding {
  hwloc_membind_policy_t policy{};
  std::string nodes;
};
std::string nodeset_text(const hwloc_bitmap_s* set) {
  char* text = nullptr;
  hwloc_bitmap_asprintf(&text, set);
  std::string out = text != nullptr ? text : "?";
  std::free(text);
  return out;
}
os_binding binding_of(locus::runtime& rt, const void* p, std::size_t bytes) {
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  os_binding b;
  EXPECT_EQ(hwloc_get_area_membind(rt.impl().topology.hwloc(), p, bytes, set, &b.policy,
                                   HWLOC_MEMBIND_BYNODESET),
            0);
  b.nodes = nodeset_text(set);
  hwloc_bitmap_free(set);
  return b;
}

TEST_F(MemoryTest, RealMachineAllocatesOnEachPlaceAndInterleaved) {
  locus::runtime rt{locus::options{.workers = 1}};
  const locus::memory_binding support = locus::memory_binding_support(rt);
  EXPECT_NE(support, locus::memory_binding::modeled) << "the real machine binds or refuses";
  const std::string described = rt.describe();
  EXPECT_NE(described.find(support == locus::memory_binding::os ? "memory_binding     = os"
                                                                : "memory_binding     = unavail"),
            std::string::npos)
      << described;

  const std::size_t bytes = 3 * page() + 123;
  auto check_usable = [&](void* raw) {
    ASSERT_NE(raw, nullptr);
    EXPECT_TRUE(page_aligned(raw));
    auto* b = static_cast<unsigned char*>(raw);
    for (std::size_t i = 0; i < bytes; ++i) ASSERT_EQ(b[i], 0) << "fresh pages are zero at " << i;
    for (std::size_t i = 0; i < bytes; ++i) b[i] = static_cast<unsigned char>(i * 7 + 1);
    for (std::size_t i = 0; i < bytes; ++i) {
      ASSERT_EQ(b[i], static_cast<unsigned char>(i * 7 + 1)) << i;
    }
  };
  for (int p = 0; p < rt.num_places(); ++p) {
    void* raw = locus::place_alloc(rt, bytes, place{p});
    check_usable(raw);
    if (support == locus::memory_binding::os) {
      const os_binding b = binding_of(rt, raw, bytes);
      EXPECT_EQ(b.policy, HWLOC_MEMBIND_BIND);
      EXPECT_EQ(b.nodes, nodeset_text(rt.impl().topology.place_nodeset(p)));
    }
    locus::place_free(raw, bytes);
  }
  void* spread = locus::interleaved_alloc(rt, bytes);
  check_usable(spread);
  if (support == locus::memory_binding::os) {
    EXPECT_EQ(binding_of(rt, spread, bytes).policy, HWLOC_MEMBIND_INTERLEAVE);
  }
  locus::place_free(spread, bytes);
  locus::place_free(nullptr, bytes);  // ignored
}

TEST_F(MemoryTest, RealMachineBindsExistingMemoryAndKeepsItUsable) {
  locus::runtime rt{locus::options{.workers = 1}};
  std::vector<int> v(100000);
  std::iota(v.begin(), v.end(), 0);
  // A heap block: neither end on a page boundary; the pages it overlaps are bound whole.
  EXPECT_NO_THROW(locus::bind_to_place(rt, v.data() + 1, (v.size() - 2) * sizeof(int), place{0}));
  for (std::size_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], static_cast<int>(i));
  for (int& x : v) x *= 2;
  EXPECT_EQ(v[99999], 199998);
  if (locus::memory_binding_support(rt) == locus::memory_binding::os) {
    EXPECT_EQ(binding_of(rt, v.data() + 1, sizeof(int)).policy, HWLOC_MEMBIND_BIND);
    EXPECT_NO_THROW(locus::bind_interleaved(rt, v.data(), v.size() * sizeof(int)));
    EXPECT_EQ(binding_of(rt, v.data() + 1, sizeof(int)).policy, HWLOC_MEMBIND_INTERLEAVE);
    // The OS reports a range that is not memory (the lowest pages are never mapped).
    const std::string what = message_of<std::invalid_argument>([&] {
      locus::bind_to_place(rt, reinterpret_cast<void*>(std::uintptr_t{4096}), 4096, place{0});
    });
    EXPECT_NE(what.find("is not mapped memory"), std::string::npos) << what;
  }
  EXPECT_EQ(v[12345], 24690);
}

// unbind hands bound heap memory back to the OS default before it is freed.
TEST_F(MemoryTest, RealMachineUnbindsBeforeTheHeapTakesMemoryBack) {
  locus::runtime rt{locus::options{.workers = 1}};
  std::vector<int> v(100000, 7);
  locus::bind_to_place(rt, v.data(), v.size() * sizeof(int), place{0});
  EXPECT_NO_THROW(locus::unbind(v.data(), v.size() * sizeof(int)));
  if (locus::memory_binding_support(rt) == locus::memory_binding::os) {
    EXPECT_NE(binding_of(rt, v.data() + 1, sizeof(int)).policy, HWLOC_MEMBIND_BIND);
  }
  EXPECT_TRUE(recorded(rt).empty());
  EXPECT_EQ(v[54321], 7);
}

// Freeing needs no runtime: memory may outlive the one it was placed for.
TEST_F(MemoryTest, MemoryOutlivesItsRuntime) {
  const std::size_t bytes = 5 * page();
  void* p = nullptr;
  {
    locus::runtime rt{locus::options{.workers = 2, .topology = two_numa}};
    p = locus::place_alloc(rt, bytes, place{1});
    EXPECT_EQ(recorded(rt).size(), 1u);
  }
  std::memset(p, 1, bytes);
  locus::place_free(p, bytes);
}

// ---- a synthetic topology: bindings recorded for the locality model -----------------------------

// A session in which each of `reads` (worker, range) is read once, in order.
struct read_of {
  int worker;
  const void* p;
  std::size_t bytes;
};
locality_report session_reading(locus::runtime& rt, const std::vector<read_of>& reads) {
  locus::locality::begin(rt, {.line_bytes = line});
  for (const read_of& r : reads) read_on(rt, r.worker, r.p, r.bytes);
  return locus::locality::end();
}

TEST_F(MemoryTest, ModelHomesBoundPagesAtTheirPlace) {
  locus::runtime rt{locus::options{.workers = 2, .topology = two_numa}};
  ASSERT_EQ(rt.place_of_worker(0), 0);
  ASSERT_EQ(rt.place_of_worker(1), 1);
  EXPECT_EQ(locus::memory_binding_support(rt), locus::memory_binding::modeled);
  EXPECT_NE(rt.describe().find("memory_binding     = modeled"), std::string::npos);
  const std::size_t bytes = 16 * page();
  const std::uint64_t lines = bytes / line;
  void* on1 = locus::place_alloc(rt, bytes, place{1});
  void* on0 = locus::place_alloc(rt, bytes, place{0});
  const std::vector<locus::mem::recorded_binding> r = recorded(rt);
  ASSERT_EQ(r.size(), 2u);
  for (const auto& b : r) {
    EXPECT_EQ(b.end - b.begin, bytes);
    EXPECT_EQ(b.home, page_home::on(b.begin == reinterpret_cast<std::uintptr_t>(on1) ? 1 : 0));
  }

  // Worker 0 (place 0) reading memory bound to place 1: every access is remote.
  const locality_report far = session_reading(rt, {{0, on1, bytes}});
  EXPECT_EQ(far.line_accesses, lines);
  EXPECT_EQ(far.remote_line_accesses, lines);
  EXPECT_EQ(far.remote_memory_accesses, far.memory_accesses);
  // Bound to place 0: none.
  const locality_report near = session_reading(rt, {{0, on0, bytes}});
  EXPECT_EQ(near.line_accesses, lines);
  EXPECT_EQ(near.remote_line_accesses, 0u);

  // Unbound memory is placed by first touch: local to worker 0 when it touches it first, remote
  // when worker 1 did. Bound memory ignores who touches it first.
  alignas(4096) static char unbound[16 * 4096];
  ASSERT_GE(sizeof unbound, bytes);
  EXPECT_EQ(session_reading(rt, {{0, unbound, bytes}}).remote_line_accesses, 0u);
  EXPECT_EQ(session_reading(rt, {{1, unbound, bytes}, {0, unbound, bytes}}).remote_line_accesses,
            lines);
  EXPECT_EQ(session_reading(rt, {{1, on0, bytes}, {0, on0, bytes}}).remote_line_accesses, lines)
      << "worker 1's accesses to place 0's memory are the remote ones";
  EXPECT_EQ(session_reading(rt, {{0, on1, bytes}, {1, on1, bytes}}).remote_line_accesses, lines);

  locus::place_free(on1, bytes);
  locus::place_free(on0, bytes);
  EXPECT_TRUE(recorded(rt).empty());
}

TEST_F(MemoryTest, ModelInterleavesPageByPage) {
  locus::runtime rt{locus::options{.workers = 2, .topology = two_numa}};
  const std::size_t bytes = 16 * page();
  void* spread = locus::interleaved_alloc(rt, bytes);
  const locality_report r = session_reading(rt, {{0, spread, bytes}});
  EXPECT_EQ(r.line_accesses, bytes / line);
  EXPECT_EQ(r.remote_line_accesses, bytes / line / 2) << "every other page is on place 1";
  // Existing memory, interleaved: the same.
  alignas(4096) static char existing[16 * 4096];
  locus::bind_interleaved(rt, existing, sizeof existing);
  const locality_report e = session_reading(rt, {{1, existing, sizeof existing}});
  EXPECT_EQ(e.remote_line_accesses, sizeof existing / line / 2);
  locus::place_free(spread, bytes);
}

// A binding made while the session runs moves the pages touched before it (the OS migrates them);
// a range freed while it runs is fresh again, placed by its next first touch.
TEST_F(MemoryTest, ModelFollowsBindingsAndFreesDuringTheSession) {
  locus::runtime rt{locus::options{.workers = 2, .topology = two_numa}};
  const std::size_t bytes = 8 * page();
  const std::uint64_t lines = bytes / line;
  alignas(4096) static char data[8 * 4096];
  void* bound = locus::place_alloc(rt, bytes, place{1});

  locus::locality::begin(rt, {.line_bytes = line});
  read_on(rt, 0, data, bytes);                      // first touch: place 0, local
  locus::bind_to_place(rt, data, bytes, place{1});  // moved to place 1
  read_on(rt, 0, data, bytes);                      // remote
  read_on(rt, 0, bound, bytes);                     // remote
  locus::place_free(bound, bytes);
  // The declaration names addresses only: nothing is dereferenced.
  read_on(rt, 0, bound, bytes);  // fresh pages, first touched by worker 0: local
  const locality_report r = locus::locality::end();
  EXPECT_EQ(r.line_accesses, 4 * lines);
  EXPECT_EQ(r.remote_line_accesses, 2 * lines);
}

// A range unbound before its memory is reused is placed by first touch again, in the record and
// in an open session; only the bound pages' records go, whichever runtime made them.
TEST_F(MemoryTest, UnbindEndsBindingsInTheRecordAndTheModel) {
  locus::runtime rt{locus::options{.workers = 2, .topology = two_numa}};
  locus::runtime other{locus::options{.workers = 2, .topology = two_numa}};
  const std::size_t bytes = 8 * page();
  const std::uint64_t lines = bytes / line;
  alignas(4096) static char data[16 * 4096];
  char* const second = data + bytes;
  locus::bind_to_place(rt, data, bytes, place{1});
  locus::bind_to_place(other, second, bytes, place{1});
  EXPECT_NO_THROW(locus::unbind(data + bytes / 2, bytes));  // half of each
  const std::vector<locus::mem::recorded_binding> left = recorded(rt);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].begin, reinterpret_cast<std::uintptr_t>(data));
  EXPECT_EQ(left[0].end - left[0].begin, bytes / 2);
  ASSERT_EQ(recorded(other).size(), 1u);
  EXPECT_EQ(recorded(other)[0].begin, reinterpret_cast<std::uintptr_t>(second + bytes / 2));
  EXPECT_NO_THROW(locus::unbind(data, 2 * bytes));
  EXPECT_TRUE(recorded(rt).empty());
  EXPECT_TRUE(recorded(other).empty());
  EXPECT_NO_THROW(locus::unbind(data, bytes)) << "no binding: nothing to do";

  locus::locality::begin(rt, {.line_bytes = line});
  locus::bind_to_place(rt, data, bytes, place{1});
  read_on(rt, 0, data, bytes);  // remote
  locus::unbind(data, bytes);
  read_on(rt, 0, data, bytes);  // first touched again, by worker 0: local
  const locality_report r = locus::locality::end();
  EXPECT_EQ(r.line_accesses, 2 * lines);
  EXPECT_EQ(r.remote_line_accesses, lines);

  EXPECT_THROW(locus::unbind(nullptr, bytes), std::invalid_argument);
  EXPECT_THROW(locus::unbind(data, 0), std::invalid_argument);
}

TEST_F(MemoryTest, ModelIgnoresAnotherRuntimesBindings) {
  locus::runtime a{locus::options{.workers = 2, .topology = two_numa}};
  locus::runtime b{locus::options{.workers = 2, .topology = two_numa}};
  const std::size_t bytes = 4 * page();
  void* p = locus::place_alloc(a, bytes, place{1});
  EXPECT_TRUE(recorded(b).empty());
  EXPECT_EQ(session_reading(a, {{0, p, bytes}}).remote_line_accesses, bytes / line);
  EXPECT_EQ(session_reading(b, {{0, p, bytes}}).remote_line_accesses, 0u)
      << "b's places are not a's: to b the memory is unbound";
  // Bound again by b: b's binding replaces a's.
  locus::bind_to_place(b, p, bytes, place{1});
  EXPECT_TRUE(recorded(a).empty());
  EXPECT_EQ(recorded(b).size(), 1u);
  EXPECT_EQ(session_reading(b, {{0, p, bytes}}).remote_line_accesses, bytes / line);
  locus::place_free(p, bytes);
  EXPECT_TRUE(recorded(b).empty());
}

// Inside a task, the functions without a runtime act on the task's runtime, not the default one.
TEST_F(MemoryTest, FunctionsActOnTheCallingWorkersRuntime) {
  locus::runtime rt{locus::options{.workers = 2, .topology = two_numa}};
  const std::size_t bytes = 2 * page();
  rt.exec([&] {
    EXPECT_EQ(locus::memory_binding_support(), locus::memory_binding::modeled);
    void* p = locus::place_alloc(bytes, place{1});
    void* q = locus::interleaved_alloc(bytes);
    locus::bind_to_place(q, page(), place{0});
    std::vector<int, locus::place_allocator<int>> v(1000, 7, locus::place_allocator<int>(place{1}));
    EXPECT_EQ(std::accumulate(v.begin(), v.end(), 0), 7000);
    const auto r = recorded(rt);
    EXPECT_EQ(r.size(), 4u);  // p, q's first page and the rest of q, v
    locus::place_free(p, bytes);
    locus::place_free(q, bytes);
  });
  EXPECT_TRUE(recorded(rt).empty());
}

// ---- first touch by place
// -------------------------------------------------------------------------

TEST_F(MemoryTest, FirstTouchGivesPartIToPlaceI) {
  locus::runtime rt{locus::options{.workers = 4, .topology = two_numa}};
  ASSERT_EQ(rt.place_of_worker(1), 0);
  ASSERT_EQ(rt.place_of_worker(2), 1);
  const std::size_t bytes = 2 * 32 * page();
  const std::size_t half = bytes / 2;
  const std::uint64_t half_lines = half / line;
  alignas(4096) static unsigned char data[2 * 32 * 4096];
  ASSERT_EQ(sizeof data, bytes);
  std::memset(data, 0xff, bytes);

  locus::locality::begin(rt, {.line_bytes = line});
  locus::first_touch_by_place(rt, data, bytes);
  // Each part read by the other worker of its own place: local.
  read_on(rt, 1, data, half);
  read_on(rt, 3, data + half, half);
  const locality_report local = locus::locality::end();
  EXPECT_EQ(local.line_accesses, 4 * half_lines) << "the helper's writes are declared";
  EXPECT_EQ(local.remote_line_accesses, 0u);
  for (std::size_t i = 0; i < bytes; ++i) ASSERT_EQ(data[i], 0) << "zero-filled at " << i;

  locus::locality::begin(rt, {.line_bytes = line});
  locus::first_touch_by_place(rt, data, bytes);
  // Each part read by the other place: remote.
  read_on(rt, 2, data, half);
  read_on(rt, 0, data + half, half);
  const locality_report far = locus::locality::end();
  EXPECT_EQ(far.line_accesses, 4 * half_lines);
  EXPECT_EQ(far.remote_line_accesses, 2 * half_lines);

  // From inside a task, without naming the runtime.
  std::memset(data, 0xff, bytes);
  rt.exec([&] { locus::first_touch_by_place(data, bytes); });
  for (std::size_t i = 0; i < bytes; ++i) ASSERT_EQ(data[i], 0) << i;
}

TEST_F(MemoryTest, FirstTouchPartsTileTheRangeAtPageBoundaries) {
  using locus::mem::part_of;
  const std::uintptr_t base = 1000 * page();
  // 10 pages in 4 parts: 2.5, 5 and 7.5 pages moved down to 2, 5 and 7.
  const std::vector<std::pair<std::size_t, std::size_t>> pages{{0, 2}, {2, 5}, {5, 7}, {7, 10}};
  for (int i = 0; i < 4; ++i) {
    const auto part = part_of(base, 10 * page(), i, 4);
    EXPECT_EQ(part.begin, base + pages[static_cast<std::size_t>(i)].first * page()) << i;
    EXPECT_EQ(part.end, base + pages[static_cast<std::size_t>(i)].second * page()) << i;
  }
  // Unaligned and small: the parts still tile it, every inner boundary on a page boundary, and a
  // range within one page goes to a single part.
  for (const auto& [offset, bytes] : std::vector<std::pair<std::size_t, std::size_t>>{
           {100, 7 * page() + 3}, {4000, 300}, {1, 3 * page()}, {0, 1}}) {
    const std::uintptr_t begin = base + offset;
    std::uintptr_t at = begin;
    int nonempty = 0;
    for (int i = 0; i < 3; ++i) {
      const auto part = part_of(begin, bytes, i, 3);
      EXPECT_EQ(part.begin, at) << offset << "+" << bytes << " part " << i;
      EXPECT_LE(part.begin, part.end);
      if (i > 0 && part.begin != begin) {
        EXPECT_EQ(part.begin % page(), 0u);
      }
      nonempty += part.end > part.begin ? 1 : 0;
      at = part.end;
    }
    EXPECT_EQ(at, begin + bytes);
    if ((begin % page()) + bytes <= page()) {
      EXPECT_EQ(nonempty, 1) << offset << "+" << bytes;
    }
  }
}

// ---- the allocator
// ---------------------------------------------------------------------------------

TEST_F(MemoryTest, AllocatorPlacesContainers) {
  locus::runtime rt{locus::options{.workers = 2, .topology = two_numa}};
  using alloc = locus::place_allocator<double>;
  std::vector<double, alloc> v(4096, 1.5, alloc(rt, place{1}));
  EXPECT_TRUE(page_aligned(v.data()));
  EXPECT_EQ(v.get_allocator().where().id, 1);
  for (int i = 0; i < 10000; ++i) v.push_back(0.5);  // grows into new allocations, bound too
  EXPECT_DOUBLE_EQ(std::accumulate(v.begin(), v.end(), 0.0), 4096 * 1.5 + 5000.0);
  const std::size_t bytes = v.size() * sizeof(double);
  const locality_report r = session_reading(rt, {{0, v.data(), bytes}});
  EXPECT_EQ(r.remote_line_accesses, r.line_accesses);
  EXPECT_EQ(r.line_accesses, (bytes + line - 1) / line);

  std::vector<double, alloc> spread(4 * page() / sizeof(double), 2.0, alloc::interleaved(rt));
  EXPECT_TRUE(spread.get_allocator().is_interleaved());
  const locality_report s =
      session_reading(rt, {{0, spread.data(), spread.size() * sizeof(double)}});
  EXPECT_EQ(s.remote_line_accesses, s.line_accesses / 2);

  // Any two free each other's memory; moving a container takes its allocator along.
  EXPECT_TRUE(v.get_allocator() == spread.get_allocator());
  std::vector<double, alloc> w(alloc(rt, place{0}));
  w = std::move(v);
  EXPECT_EQ(w.get_allocator().where().id, 1);
  // Rebinding keeps the place (node-based containers allocate nodes through it).
  std::list<int, locus::place_allocator<int>> l(locus::place_allocator<int>(rt, place{1}));
  l.push_back(3);
  EXPECT_EQ(l.get_allocator().where().id, 1);
  EXPECT_EQ(alloc(rt, place{0}).allocate(0), nullptr);
  EXPECT_THROW((void)alloc(rt, place{0}).allocate(SIZE_MAX / sizeof(double) + 1),
               std::bad_array_new_length);
  EXPECT_THROW((std::vector<double, alloc>(4, 1.0, alloc(rt, place{2}))), std::out_of_range);
}

// ---- rejections
// ----------------------------------------------------------------------------------

TEST_F(MemoryTest, RejectsBadPlacesEmptyRangesAndImpossibleSizes) {
  locus::runtime rt{locus::options{.workers = 2, .topology = two_numa}};
  EXPECT_EQ(message_of<std::out_of_range>([&] { (void)locus::place_alloc(rt, 100, place{2}); }),
            "locus::place_alloc: place 2 is not one of this runtime's 2 places (0 to 1); memory "
            "goes on one of them, or interleaved over all of them");
  EXPECT_NE(message_of<std::out_of_range>([&] {
              (void)locus::place_alloc(rt, 100, locus::any_place);
            }).find("place -1 (any_place) is not one of this runtime's 2 places"),
            std::string::npos);
  alignas(4096) static char data[4096];
  EXPECT_NE(message_of<std::out_of_range>([&] {
              locus::bind_to_place(rt, data, sizeof data, place{-5});
            }).find("locus::bind_to_place: place -5 is not one of"),
            std::string::npos);

  EXPECT_NE(message_of<std::invalid_argument>([&] {
              (void)locus::place_alloc(rt, 0, place{0});
            }).find("locus::place_alloc: zero bytes"),
            std::string::npos);
  EXPECT_NE(message_of<std::invalid_argument>([&] {
              (void)locus::interleaved_alloc(rt, 0);
            }).find("zero bytes"),
            std::string::npos);
  EXPECT_NE(message_of<std::invalid_argument>([&] {
              locus::bind_to_place(rt, data, 0, place{0});
            }).find("locus::bind_to_place: an empty range (0 bytes)"),
            std::string::npos);
  EXPECT_NE(message_of<std::invalid_argument>([&] {
              locus::first_touch_by_place(rt, nullptr, 10);
            }).find("locus::first_touch_by_place: a null pointer"),
            std::string::npos);
  EXPECT_THROW(locus::bind_interleaved(rt, data, 0), std::invalid_argument);
  EXPECT_THROW(locus::bind_to_place(rt, reinterpret_cast<void*>(UINTPTR_MAX - 10), 100, place{0}),
               std::invalid_argument);

  EXPECT_THROW((void)locus::place_alloc(rt, SIZE_MAX, place{0}), std::bad_alloc);  // no page count
  EXPECT_THROW((void)locus::interleaved_alloc(rt, SIZE_MAX / 2), std::bad_alloc);  // no memory
  EXPECT_TRUE(recorded(rt).empty()) << "nothing was bound";
}

// ---- when the OS refuses
// ---------------------------------------------------------------------------

int refused_errno = 0;
int bind_calls = 0;
int refusing(hwloc_topology*, const void*, std::size_t, const hwloc_bitmap_s*,
             locus::mem::os_policy, bool) {
  ++bind_calls;
  return refused_errno;
}

TEST_F(MemoryTest, RefusedBindingsAllocateUnboundAndSaySo) {
  const locus::topo::topology machine = locus::topo::topology::detect();
  const std::size_t bytes = 2 * page();
  void* p = locus::mem::map_pages(bytes);
  const locus::mem::page_span span = locus::mem::pages_of(p, bytes);
  auto& registry = locus::mem::binding_registry::instance();
  for (const int err : {ENOSYS, EXDEV, EPERM}) {
    refused_errno = err;
    bind_calls = 0;
    locus::mem::place_binder binder(machine, &refusing);
    testing::internal::CaptureStderr();
    EXPECT_EQ(binder.support(), locus::memory_binding::unavailable) << err;
    EXPECT_NE(binder.unavailable_reason().find(std::strerror(err)), std::string::npos)
        << binder.unavailable_reason();
    EXPECT_NO_THROW(binder.bind(span, 0, true));
    EXPECT_NO_THROW(binder.interleave(span, false));
    const std::string warning = testing::internal::GetCapturedStderr();
    EXPECT_TRUE(registry.bindings_of(&binder).empty()) << "nothing is recorded that is not bound";
    EXPECT_EQ(bind_calls, 1) << "once refused, the binder stops asking";
    if (machine.num_numa() == 1) {
      EXPECT_EQ(warning, "") << "one place: binding changes nothing";
    }
  }
  // An accepting OS: bound and recorded. Errors that are the caller's are thrown.
  refused_errno = 0;
  {
    locus::mem::place_binder binder(machine, &refusing);
    binder.bind(span, 0, false);
    EXPECT_EQ(binder.support(), locus::memory_binding::os);
    ASSERT_EQ(registry.bindings_of(&binder).size(), 1u);
    refused_errno = EFAULT;
    EXPECT_THROW(binder.bind(span, 0, true), std::invalid_argument);
    refused_errno = ENOMEM;
    EXPECT_THROW(binder.interleave(span, true), std::bad_alloc);
    EXPECT_EQ(binder.support(), locus::memory_binding::os);
  }
  locus::mem::unmap_pages(p, bytes);
}

// ---- the range map under the registry and the model
// ------------------------------------------------

TEST(MemoryRangeMap, AssignAndEraseCutTheRangesTheyOverlap) {
  locus::mem::range_map<int> m;
  m.assign(100, 200, 1);
  m.assign(150, 160, 2);  // splits [100, 200)
  m.assign(300, 400, 3);
  m.erase(180, 350);  // the tail of the first, the head of the third
  std::vector<std::tuple<std::uintptr_t, std::uintptr_t, int>> got;
  for (const auto& [begin, e] : m.ranges()) got.emplace_back(begin, e.end, e.value);
  const std::vector<std::tuple<std::uintptr_t, std::uintptr_t, int>> want{
      {100, 150, 1}, {150, 160, 2}, {160, 180, 1}, {350, 400, 3}};
  EXPECT_EQ(got, want);
  ASSERT_NE(m.first_overlapping(170, 500), nullptr);
  EXPECT_EQ(*m.first_overlapping(170, 500), 1);
  EXPECT_EQ(*m.first_overlapping(155, 156), 2);
  EXPECT_EQ(m.first_overlapping(180, 350), nullptr);
  EXPECT_EQ(*m.first_overlapping(200, 351), 3);
  m.erase_if([](int v) { return v == 1; });
  EXPECT_EQ(m.size(), 2u);
  m.assign(0, 1000, 4);
  EXPECT_EQ(m.size(), 1u);
}

}  // namespace
