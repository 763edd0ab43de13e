// config::resolve() against an injected environment instead of the process's, for tests that
// check how LOCUS_* variables are read and rejected.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "config/config.hpp"
#include "locus/runtime.hpp"

namespace locus_test {

inline std::map<std::string, std::string>& fake_env() {
  static std::map<std::string, std::string> env;
  return env;
}

inline const char* fake_getenv(const char* name) {
  const auto it = fake_env().find(name);
  return it == fake_env().end() ? nullptr : it->second.c_str();
}

// Resolves `o` with `env` as the whole environment and `scheds` as the known policies.
inline locus::config::settings resolve_with(std::map<std::string, std::string> env,
                                            const locus::options& o = {},
                                            const std::vector<std::string>& scheds = {"ws"}) {
  fake_env() = std::move(env);
  return locus::config::resolve(o, scheds, &fake_getenv);
}

}  // namespace locus_test
