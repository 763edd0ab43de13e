// The effective configuration of a runtime: explicit options, then LOCUS_* variables, then
// defaults. Every rejected value names its variable and the accepted values.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "locus/runtime.hpp"

namespace locus::config {

inline constexpr std::size_t default_stack_size = 256 * 1024;
inline constexpr std::size_t min_stack_size = 16 * 1024;
inline constexpr std::size_t max_stack_size = std::size_t{1} << 30;
inline constexpr std::size_t default_size_hint_samples = std::size_t{1} << 22;
inline constexpr std::size_t min_size_hint_samples = 1024;
inline constexpr std::size_t max_size_hint_samples = std::size_t{1} << 30;

struct settings {
  std::string sched;
  std::optional<int> workers;  // unset: the topology's default
  std::string topology;        // empty: the real machine
  std::size_t stack_size = default_stack_size;
  bool stats_at_exit = false;
  bool print_config = false;
  bool pmu = false;
  bool locality = false;
  std::size_t locality_line = 0;               // 0: the topology's line size
  std::string trace;                           // empty: no trace
  const char* trace_variable = "LOCUS_TRACE";  // where `trace` came from, for error messages
  bool workspan = false;
  size_hint_source size_hints = size_hint_source::given;
  std::size_t size_hint_samples = default_size_hint_samples;
};

const char* size_hint_source_name(size_hint_source s) noexcept;

// `getenv` is injectable for tests.
using env_lookup = const char* (*)(const char*);
settings resolve(const options& explicit_options, const std::vector<std::string>& schedulers,
                 env_lookup getenv_fn = nullptr);

// The value of environment variable `name`, or null when it is unset or blank: an empty value
// counts as unset for every LOCUS_* variable.
const char* env_value(const char* name) noexcept;

// Throws config_error naming `variable`, the rejected text and what is accepted.
[[noreturn]] void reject(std::string_view variable, std::string_view text,
                         std::string_view accepted);

// Parsers, each throwing config_error that names `variable`.
// A stack size: bytes with an optional K/M/G suffix, min_stack_size .. max_stack_size.
std::size_t parse_size(std::string_view variable, std::string_view text);
// Bytes with an optional K/M/G suffix (powers of 1024), in [min, max].
std::size_t parse_bytes_in(std::string_view variable, std::string_view text, std::size_t min,
                           std::size_t max);
int parse_positive_int(std::string_view variable, std::string_view text);
// A cache line size for the locality model: a power of two from 8 to 4096 bytes (K suffix
// accepted).
std::size_t parse_line_size(std::string_view variable, std::string_view text);
bool parse_bool(std::string_view variable, std::string_view text);
// Leading and trailing blanks removed, lower case: how choices are compared.
std::string normalized(std::string_view text);
// A finite number above zero.
double parse_positive_real(std::string_view variable, std::string_view text);
// An integer in [min, max].
int parse_int_in(std::string_view variable, std::string_view text, int min, int max);
// `count` comma-separated non-negative numbers, not all zero; `meaning` names them for the
// message (e.g. "local,neighbour,remote").
std::vector<double> parse_weights(std::string_view variable, std::string_view text,
                                  std::size_t count, std::string_view meaning);
std::string parse_choice(std::string_view variable, std::string_view text,
                         const std::vector<std::string>& accepted);
// From 1 to `max_entries` comma-separated entries, each an integer in [min, max] or one of
// `words` (returned as -1 - its index); `accepted` describes them for the message.
std::vector<int> parse_int_list(std::string_view variable, std::string_view text, int min, int max,
                                const std::vector<std::string>& words, std::size_t max_entries,
                                std::string_view accepted);

}  // namespace locus::config
