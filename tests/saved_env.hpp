// The process environment for one test: named variables are cleared (or set) and restored
// afterwards, so that tests that read LOCUS_* through the real environment do not leak settings
// into one another.
#pragma once

#include <cstdlib>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace locus_test {

class saved_env {
 public:
  // Clears every variable in `names`.
  explicit saved_env(std::initializer_list<const char*> names) {
    for (const char* name : names) save_and_set(name, nullptr);
  }
  // Sets one variable.
  saved_env(const char* name, const char* value) { save_and_set(name, value); }
  saved_env(const saved_env&) = delete;
  saved_env& operator=(const saved_env&) = delete;
  ~saved_env() {
    for (auto it = saved_.rbegin(); it != saved_.rend(); ++it) {
      if (it->second) {
        ::setenv(it->first.c_str(), it->second->c_str(), 1);
      } else {
        ::unsetenv(it->first.c_str());
      }
    }
  }

 private:
  void save_and_set(const char* name, const char* value) {
    const char* old = ::getenv(name);
    saved_.emplace_back(name, old != nullptr ? std::optional<std::string>(old) : std::nullopt);
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  std::vector<std::pair<std::string, std::optional<std::string>>> saved_;
};

}  // namespace locus_test
