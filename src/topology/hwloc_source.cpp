// Loading the tree: the real machine (restricted to the process's CPU binding) or an hwloc
// synthetic description, plus the OS's NUMA distances.
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>

#include "locus/runtime.hpp"
#include "topology/cgroup.hpp"
#include "topology/impl.hpp"

namespace locus::topo {
namespace {

// More PUs than this in a synthetic description is almost certainly a typo (one worker thread
// per PU), and hwloc would happily allocate them all.
constexpr std::uint64_t kMaxSyntheticLeaves = 1U << 16;

constexpr const char* kSyntheticExample =
    "pack:2 [numa(memory=16GB)] l3:1(size=32MB) l2:8(size=1MB) l1d:1(size=32KB) core:1 pu:1";

[[noreturn]] void bad_description(std::string_view variable, std::string_view value,
                                  std::string_view why) {
  std::string msg(variable);
  msg += "=\"";
  msg += value;
  msg += "\" is not a valid topology: ";
  msg += why;
  msg +=
      ". Expected an hwloc synthetic description, levels from the top down as type:count with "
      "optional attributes, ending with pu, e.g. ";
  msg += variable;
  msg += "=\"";
  msg += kSyntheticExample;
  msg +=
      "\" (types: pack, group, die, l3, l2, l1d, core, pu; [numa] attaches a NUMA node to the "
      "level before it; sizes in KB, MB, GB are binary)";
  throw config_error(msg);
}

bool iequal_prefix(std::string_view s, std::size_t at, std::string_view word) {
  if (s.size() - at < word.size()) return false;
  for (std::size_t i = 0; i < word.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[at + i])) != word[i]) return false;
  }
  return true;
}

// hwloc reads "32MB" as 32,000,000 bytes and "32MiB" as 2^25; cache sizes are binary by every
// convention users know, so KB, MB, GB and TB in size= and memory= attributes become KiB, MiB...
std::string binary_units(std::string_view in) {
  std::string out;
  out.reserve(in.size() + 8);
  for (std::size_t i = 0; i < in.size();) {
    std::size_t len = 0;
    if (iequal_prefix(in, i, "size=")) len = 5;
    if (iequal_prefix(in, i, "memory=")) len = 7;
    const bool attribute_start = i == 0 || in[i - 1] == '(' || in[i - 1] == ' ';
    if (len == 0 || !attribute_start) {
      out += in[i++];
      continue;
    }
    out.append(in.substr(i, len));
    i += len;
    while (i < in.size() && std::isdigit(static_cast<unsigned char>(in[i]))) out += in[i++];
    if (i + 1 < in.size() && std::strchr("kKmMgGtT", in[i]) != nullptr &&
        (in[i + 1] == 'B' || in[i + 1] == 'b')) {
      out += in[i];
      out += 'i';
      out += 'B';
      i += 2;
    }
  }
  return out;
}

// The product of the level arities (memory levels in brackets and attributes skipped), or 0 when
// the description does not look like one; hwloc has the last word on validity.
std::uint64_t estimated_leaves(std::string_view desc) {
  std::uint64_t leaves = 1;
  bool any = false;
  std::size_t i = 0;
  while (i < desc.size()) {
    while (i < desc.size() && std::isspace(static_cast<unsigned char>(desc[i]))) ++i;
    const std::size_t start = i;
    int nesting = 0;
    while (i < desc.size() && (nesting > 0 || !std::isspace(static_cast<unsigned char>(desc[i])))) {
      if (desc[i] == '(' || desc[i] == '[') ++nesting;
      if ((desc[i] == ')' || desc[i] == ']') && nesting > 0) --nesting;
      ++i;
    }
    std::string_view token = desc.substr(start, i - start);
    if (token.empty() || token.front() == '[') continue;
    token = token.substr(0, token.find('('));
    if (const auto colon = token.find(':'); colon != std::string_view::npos) {
      token = token.substr(colon + 1);
    }
    std::uint64_t arity = 0;
    const auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), arity);
    if (ec != std::errc() || end != token.data() + token.size()) continue;
    any = true;
    // Saturating: both factors stay at most kMaxSyntheticLeaves + 1, so the product fits.
    const std::uint64_t cap = kMaxSyntheticLeaves + 1;
    leaves = std::min(leaves * std::min(arity, cap), cap);
  }
  return any ? leaves : 0;
}

// hwloc loads its plugins (PCI, OpenCL, GL, libxml2 and, through them, X11 and ICU) when the
// first topology is created; locus reads only CPUs, caches and NUMA nodes, and the plugins cost
// about 2 MB of resident memory in every process. They can only be declined through the
// environment, before that first init; a user's own HWLOC_PLUGINS_* setting is left alone.
void decline_hwloc_io_plugins() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (std::getenv("HWLOC_PLUGINS_BLACKLIST") == nullptr &&
        std::getenv("HWLOC_PLUGINS_PATH") == nullptr) {
      ::setenv("HWLOC_PLUGINS_BLACKLIST",
               "hwloc_pci,hwloc_opencl,hwloc_gl,hwloc_cuda,hwloc_nvml,hwloc_rsmi,hwloc_levelzero,"
               "hwloc_xml_libxml",
               0);
    }
  });
}

hwloc_handle new_topology() {
  decline_hwloc_io_plugins();
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) throw std::runtime_error("locus: hwloc_topology_init failed");
  hwloc_handle hw(raw);
  // Instruction caches, memory-side caches, I/O and Misc objects are not levels of the tree.
  hwloc_topology_set_icache_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_NONE);
  hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_NONE);
  hwloc_topology_set_type_filter(raw, HWLOC_OBJ_MEMCACHE, HWLOC_TYPE_FILTER_KEEP_NONE);
  hwloc_topology_set_type_filter(raw, HWLOC_OBJ_MISC, HWLOC_TYPE_FILTER_KEEP_NONE);
  return hw;
}

bool has_caches(hwloc_topology_t hw) {
  for (const hwloc_obj_type_t t : {HWLOC_OBJ_L1CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L3CACHE}) {
    if (hwloc_get_nbobjs_by_type(hw, t) > 0) return true;
  }
  return false;
}

hwloc_handle load_machine(unsigned long flags) {
  hwloc_handle hw = new_topology();
  hwloc_topology_set_flags(hw.get(), HWLOC_TOPOLOGY_FLAG_IS_THISSYSTEM | flags);
  if (hwloc_topology_load(hw.get()) != 0) return nullptr;
  return hw;
}

// This machine. hwloc's Linux backend reads the caches from sysfs; where the kernel shows none
// (some virtual machines), only hwloc's x86 backend finds them, by running CPUID on each PU in
// turn, which binds the loading thread to each. A thread of locus's own does that load, so that
// no thread of the program ever moves (hwloc gives its thread its binding back, and the thread
// ends).
hwloc_handle load_this_machine() {
  hwloc_handle hw = load_machine(HWLOC_TOPOLOGY_FLAG_DONT_CHANGE_BINDING);
  if (hw == nullptr)
    throw std::runtime_error("locus: hwloc could not read this machine's topology");
  if (has_caches(hw.get())) return hw;
  hwloc_handle probed;
  std::thread([&probed] { probed = load_machine(0); }).join();
  if (probed != nullptr && has_caches(probed.get())) return probed;
  return hw;
}

}  // namespace

void read_numa_distances(hwloc_topology_t hw, const std::vector<hwloc_obj_t>& numa_places,
                         topology_state& out) {
  out.numa_distances.clear();
  if (numa_places.empty()) return;
  unsigned count = 1;
  hwloc_distances_s* d = nullptr;
  const unsigned long kind = HWLOC_DISTANCES_KIND_FROM_OS | HWLOC_DISTANCES_KIND_MEANS_LATENCY;
  if (hwloc_distances_get_by_type(hw, HWLOC_OBJ_NUMANODE, &count, &d, kind, 0) != 0 || count == 0 ||
      d == nullptr) {
    return;
  }
  const std::size_t n = numa_places.size();
  std::vector<unsigned> where(n);
  bool complete = true;
  for (std::size_t i = 0; i < n && complete; ++i) {
    complete = false;
    for (unsigned j = 0; j < d->nbobjs; ++j) {
      if (d->objs[j] == numa_places[i]) {
        where[i] = j;
        complete = true;
        break;
      }
    }
  }
  if (complete) {
    out.numa_distances.resize(n * n);
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t j = 0; j < n; ++j) {
        out.numa_distances[i * n + j] =
            static_cast<unsigned>(d->values[std::size_t{where[i]} * d->nbobjs + where[j]]);
      }
    }
  }
  hwloc_distances_release(hw, d);
}

topology topology::detect() {
  hwloc_handle hw = load_this_machine();
  // Only the PUs the calling thread may run on become leaves (what `taskset` or a parent's
  // binding gives us). Not the process's binding: that is the union over all threads, and
  // helper threads such as a sanitizer's background thread are not restricted.
  hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
  if (allowed != nullptr && hwloc_get_cpubind(hw.get(), allowed, HWLOC_CPUBIND_THREAD) == 0 &&
      !hwloc_bitmap_iszero(allowed)) {
    hwloc_topology_restrict(hw.get(), allowed, 0);
  }
  hwloc_bitmap_free(allowed);
  auto p = std::make_unique<impl>();
  p->synthetic = false;
  const auto numa = build_tree(hw.get(), *p);
  if (p->leaves.empty()) throw std::runtime_error("locus: hwloc found no usable processing unit");
  read_numa_distances(hw.get(), numa, *p);
  p->default_workers = cap_workers(static_cast<int>(p->leaves.size()), cgroup_cpu_quota());
  p->hw = std::move(hw);
  return topology(std::move(p));
}

topology topology::synthetic(std::string_view description, std::string_view variable) {
  const std::string desc = binary_units(description);
  if (desc.find_first_not_of(" \t\n") == std::string::npos) {
    bad_description(variable, description, "it is empty");
  }
  if (estimated_leaves(desc) > kMaxSyntheticLeaves) {
    bad_description(variable, description,
                    "it has more than " + std::to_string(kMaxSyntheticLeaves) + " PUs");
  }
  hwloc_handle hw = new_topology();
  if (hwloc_topology_set_synthetic(hw.get(), desc.c_str()) != 0) {
    bad_description(variable, description, "hwloc cannot parse it");
  }
  if (hwloc_topology_load(hw.get()) != 0) {
    bad_description(variable, description, "hwloc cannot build it");
  }
  auto p = std::make_unique<impl>();
  p->synthetic = true;
  build_tree(hw.get(), *p);
  if (p->leaves.empty()) bad_description(variable, description, "it has no PU");
  // A synthetic machine runs one worker per PU, oversubscribed if need be.
  p->default_workers = static_cast<int>(p->leaves.size());
  p->hw = std::move(hw);  // kept for spread_over_places; never used to bind threads
  return topology(std::move(p));
}

topology topology::spread_over_places(topology whole, int workers) {
  const int leaves = whole.num_leaves();
  const int places = whole.num_numa();
  if (workers >= leaves || places < 2 || workers < 1) return whole;
  // Place p keeps its first workers / places leaves in tree order (the first workers % places
  // places one more), so that workers close in number stay close in the tree.
  std::vector<int> per_place(static_cast<std::size_t>(places), workers / places);
  for (int p = 0; p < workers % places; ++p) ++per_place[static_cast<std::size_t>(p)];
  hwloc_bitmap_t keep = hwloc_bitmap_alloc();
  if (keep == nullptr) throw std::bad_alloc();
  for (int leaf = 0; leaf < leaves; ++leaf) {
    int& quota = per_place[static_cast<std::size_t>(whole.numa_of(leaf))];
    if (quota == 0) continue;
    --quota;
    hwloc_obj_t pu =
        hwloc_get_obj_by_type(whole.impl_->hw.get(), HWLOC_OBJ_PU, static_cast<unsigned>(leaf));
    hwloc_bitmap_or(keep, keep, pu->cpuset);
  }
  hwloc_handle hw = std::move(whole.impl_->hw);
  const int restricted = hwloc_topology_restrict(hw.get(), keep, 0);
  hwloc_bitmap_free(keep);
  if (restricted != 0) throw std::runtime_error("locus: hwloc_topology_restrict failed");
  auto p = std::make_unique<impl>();
  p->synthetic = whole.impl_->synthetic;
  const auto numa = build_tree(hw.get(), *p);
  if (!p->synthetic) read_numa_distances(hw.get(), numa, *p);
  p->default_workers = static_cast<int>(p->leaves.size());
  p->hw = std::move(hw);
  return topology(std::move(p));
}

}  // namespace locus::topo
