#include "prof/trace.hpp"

#include <time.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "locus/runtime.hpp"

namespace locus::prof {
namespace {

std::uint64_t now_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

void put_json_string(std::FILE* out, std::string_view s) {
  std::fputc('"', out);
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      std::fputc('\\', out);
      std::fputc(c, out);
    } else if (u < 0x20) {
      std::fprintf(out, "\\u%04x", u);
    } else {
      std::fputc(c, out);
    }
  }
  std::fputc('"', out);
}

}  // namespace

trace_buffer::trace_buffer(int worker) : worker_(worker) {
  // Enough for small runs without growing; large ones grow geometrically.
  events_.reserve(1 << 12);
}

void trace_buffer::push(trace_phase p, std::int32_t track, std::uint64_t ts, std::uint64_t flow,
                        const char* label, void (*site)(detail::spawn_record*)) {
  events_.push_back(trace_event{ts, label, site, flow, track, p});
}

void trace_buffer::begin_task(const char* label, void (*site)(detail::spawn_record*)) {
  ++depth_;
  push(trace_phase::task_begin, worker_, now_ns(), 0, label, site);
}

void trace_buffer::begin_resume() {
  ++depth_;
  push(trace_phase::resume_begin, worker_, now_ns());
}

void trace_buffer::end() {
  // A slice closed by a switch back to the scheduler has no second end.
  if (depth_ == 0) return;
  --depth_;
  push(trace_phase::end, worker_, now_ns());
}

void trace_buffer::close_all() {
  if (depth_ == 0) return;
  const std::uint64_t ts = now_ns();
  for (; depth_ > 0; --depth_) push(trace_phase::end, worker_, ts);
}

void trace_buffer::flow(trace_phase out, trace_phase in, int from) {
  // Unique across workers: the thief's index in the high bits.
  const std::uint64_t id = (static_cast<std::uint64_t>(worker_ + 1) << 40) | ++next_flow_;
  const std::uint64_t ts = now_ns();
  push(out, from, ts, id);
  push(in, worker_, ts, id);
}

void trace_buffer::steal_from(int victim) {
  flow(trace_phase::steal_out, trace_phase::steal_in, victim);
}

void trace_buffer::migrated_from(int sender) {
  flow(trace_phase::migrate_out, trace_phase::migrate_in, sender);
}

trace_file::trace_file(const std::string& path, const char* variable, int workers)
    : path_(path),
      out_(path.empty() ? nullptr : std::fopen(path.c_str(), "w")),
      origin_ns_(now_ns()) {
  if (out_ == nullptr) {
    const std::string why = path.empty() ? "an empty path" : std::strerror(errno);
    throw config_error("locus: invalid " + std::string(variable) + "='" + path +
                       "': cannot open it for writing (" + why +
                       "); accepted values: a writable file path for the Chrome trace JSON");
  }
  buffers_.reserve(static_cast<std::size_t>(workers));
  for (int i = 0; i < workers; ++i) buffers_.push_back(std::make_unique<trace_buffer>(i));
}

trace_file::~trace_file() {
  if (out_ != nullptr) std::fclose(out_);
}

void trace_file::write(const std::string& process) {
  if (out_ == nullptr) return;
  std::FILE* o = out_;
  std::fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", o);
  std::fputs("{\"ph\":\"M\",\"pid\":1,\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":", o);
  put_json_string(o, process);
  std::fputs("}}", o);
  for (const auto& b : buffers_) {
    std::fprintf(o,
                 ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_name\",\"args\":{"
                 "\"name\":\"worker %d\"}}",
                 b->worker(), b->worker());
    std::fprintf(o,
                 ",\n{\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"name\":\"thread_sort_index\",\"args\":{"
                 "\"sort_index\":%d}}",
                 b->worker(), b->worker());
  }
  for (const auto& b : buffers_) {
    for (const trace_event& e : b->events()) {
      const std::uint64_t rel = e.ts_ns > origin_ns_ ? e.ts_ns - origin_ns_ : 0;
      // Microseconds with nanosecond digits: the format's unit, without losing order.
      std::fprintf(o, ",\n{\"pid\":1,\"tid\":%d,\"ts\":%llu.%03llu", e.track,
                   static_cast<unsigned long long>(rel / 1000),
                   static_cast<unsigned long long>(rel % 1000));
      switch (e.phase) {
        case trace_phase::task_begin: {
          std::fputs(",\"ph\":\"B\",\"cat\":\"task\",\"name\":", o);
          std::string name;
          if (e.label != nullptr) {
            name = e.label;
          } else if (e.site != nullptr) {
            name = spawn_site_name(e.site);
          }
          put_json_string(o, name.empty() ? "task" : name);
          break;
        }
        case trace_phase::resume_begin:
          std::fputs(",\"ph\":\"B\",\"cat\":\"resume\",\"name\":\"continuation\"", o);
          break;
        case trace_phase::end:
          std::fputs(",\"ph\":\"E\"", o);
          break;
        case trace_phase::steal_out:
        case trace_phase::steal_in:
          std::fprintf(o, ",\"ph\":\"%s\",\"cat\":\"steal\",\"name\":\"steal\",\"id\":%llu",
                       e.phase == trace_phase::steal_out ? "s" : "f",
                       static_cast<unsigned long long>(e.flow_id));
          break;
        case trace_phase::migrate_out:
        case trace_phase::migrate_in:
          std::fprintf(o, ",\"ph\":\"%s\",\"cat\":\"migration\",\"name\":\"migration\",\"id\":%llu",
                       e.phase == trace_phase::migrate_out ? "s" : "f",
                       static_cast<unsigned long long>(e.flow_id));
          break;
      }
      std::fputc('}', o);
    }
  }
  std::fputs("\n]}\n", o);
  if (std::fclose(o) != 0) {
    std::fprintf(stderr, "locus: writing the trace '%s' failed: %s\n", path_.c_str(),
                 std::strerror(errno));
  }
  out_ = nullptr;
}

}  // namespace locus::prof
