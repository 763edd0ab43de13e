// Spawn-site names for traces: task_group::run registers each closure type's start function at
// static initialisation (no code on the spawn path); the trace writer looks names up by it.
#include <map>
#include <mutex>
#include <string>
#include <string_view>

#include "prof/trace.hpp"
#include "sched/worker.hpp"

namespace locus {
namespace {

using start_fn = void (*)(detail::spawn_record*);

struct site_registry {
  std::mutex mutex;
  std::map<start_fn, std::string_view> names;
};

site_registry& sites() {
  // Constructed on first use: registrations run during other translation units' static
  // initialisation, in no particular order.
  static site_registry r;
  return r;
}

// The closure type out of type_name<T>()'s __PRETTY_FUNCTION__: GCC writes
// "... [with T = fib(int)::<lambda()>; std::string_view = ...]", Clang "... [T = (lambda at
// f.cpp:3:5)]".
std::string_view closure_type(std::string_view pretty) {
  const auto at = pretty.find("T = ");
  if (at == std::string_view::npos) return pretty;
  std::string_view t = pretty.substr(at + 4);
  if (const auto semi = t.find("; "); semi != std::string_view::npos) {
    t = t.substr(0, semi);
  } else if (const auto close = t.rfind(']'); close != std::string_view::npos) {
    t = t.substr(0, close);
  }
  return t;
}

}  // namespace

namespace detail {

bool register_spawn_site(start_fn start, std::string_view name) noexcept {
  try {
    site_registry& r = sites();
    const std::lock_guard lock(r.mutex);
    r.names.emplace(start, name);
  } catch (...) {
    return false;  // the site stays unnamed ("task")
  }
  return true;
}

void set_spawn_label(const char* name) noexcept {
  worker* w = current_worker();
  if (w != nullptr && w->trace != nullptr) w->trace->set_label(name);
}

}  // namespace detail

namespace prof {

std::string spawn_site_name(start_fn start) {
  site_registry& r = sites();
  const std::lock_guard lock(r.mutex);
  const auto it = r.names.find(start);
  return it == r.names.end() ? std::string() : std::string(closure_type(it->second));
}

}  // namespace prof
}  // namespace locus
