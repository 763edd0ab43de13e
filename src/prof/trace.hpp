// Chrome/Perfetto trace of which worker ran which task when (LOCUS_TRACE=file.json).
//
// Each worker appends to its own buffer (no lock, no sharing); the runtime writes them all as
// one Chrome trace JSON file after its workers have stopped. Slices nest on a worker's track:
// a child-first child's slice sits inside its parent's, and every context switch back to the
// scheduler (or straight to a resumed waiter) closes whatever is still open on the track,
// because the tasks those slices belong to now wait or run elsewhere. See docs/tracing.md.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "locus/detail/spawn.hpp"

namespace locus::prof {

enum class trace_phase : std::uint8_t {
  task_begin,    // a task starts: a child-first child, a queued task or a root
  resume_begin,  // a suspended or stolen context continues on this worker
  end,           // the innermost open slice of the track ends
  steal_out,     // flow start on the victim's track (written by the thief)
  steal_in,      // flow end on the thief's track
  migrate_out,   // flow start on the sender's track (written by the receiver)
  migrate_in,    // flow end on the receiver's track
};

struct trace_event {
  std::uint64_t ts_ns;
  // task_begin: a locus::label, or the spawn-site key (the closure's start function) when
  // `site` is set; resolved to text only when the file is written.
  const char* label;
  void (*site)(detail::spawn_record*);
  std::uint64_t flow_id;
  std::int32_t track;  // worker index the event is drawn on
  trace_phase phase;
};

// One worker's events, written by that worker's OS thread only.
class trace_buffer {
 public:
  explicit trace_buffer(int worker);

  void begin_task(const char* label, void (*site)(detail::spawn_record*));
  void begin_resume();
  void end();
  // Ends every slice still open on this track (the running context switched away).
  void close_all();
  // An item taken from `victim`'s queue (steal) or an inbox (migration): a flow arrow from the
  // victim's track to this one.
  void steal_from(int victim);
  void migrated_from(int sender);

  // The label of the next child-first spawn of this worker (locus::label), taken once.
  const char* take_label() noexcept {
    const char* l = pending_label_;
    pending_label_ = nullptr;
    return l;
  }
  void set_label(const char* l) noexcept { pending_label_ = l; }

  int worker() const noexcept { return worker_; }
  const std::vector<trace_event>& events() const noexcept { return events_; }

 private:
  void push(trace_phase p, std::int32_t track, std::uint64_t ts, std::uint64_t flow = 0,
            const char* label = nullptr, void (*site)(detail::spawn_record*) = nullptr);
  void flow(trace_phase out, trace_phase in, int from);

  int worker_;
  int depth_ = 0;  // open slices on this track
  std::uint64_t next_flow_ = 0;
  const char* pending_label_ = nullptr;
  std::vector<trace_event> events_;
};

// The output file, opened (and so validated) when the runtime starts, written when it stops.
class trace_file {
 public:
  // Throws config_error naming LOCUS_TRACE (or options::trace) when `path` cannot be written.
  trace_file(const std::string& path, const char* variable, int workers);
  trace_file(const trace_file&) = delete;
  trace_file& operator=(const trace_file&) = delete;
  ~trace_file();

  trace_buffer& buffer(int worker) { return *buffers_[static_cast<std::size_t>(worker)]; }
  // Writes every buffer; call once no worker runs any more. `process` names the process track.
  void write(const std::string& process);

 private:
  std::string path_;
  std::FILE* out_;
  std::uint64_t origin_ns_;
  std::vector<std::unique_ptr<trace_buffer>> buffers_;
};

// The name of a spawn site registered by task_group::run, or "" when unknown.
std::string spawn_site_name(void (*start)(detail::spawn_record*));

}  // namespace locus::prof
