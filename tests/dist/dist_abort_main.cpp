// A task that throws on rank 1 must end the whole job with a message naming rank 1 and the
// error (tests/dist/expect_failure.sh checks the exit status and the output). Not a GoogleTest
// program: its whole point is that it does not return.
#include <chrono>
#include <stdexcept>
#include <thread>

#include "locus/dist_taskq.hpp"
#include "locus/runtime.hpp"

namespace {

locus::dist_taskq* q = nullptr;

// Throws where it runs on rank 1; elsewhere puts a copy of itself and naps before joining it,
// leaving it queued for an idle rank 1 to steal.
void throw_on_rank_one(const int& hops) {
  if (q->rank() == 1) throw std::runtime_error("boom from a task");
  if (hops > 0) {
    q->put(throw_on_rank_one, hops - 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    q->wait();
  }
}

}  // namespace

int main() {
  locus::dist_taskq queue{locus::task_function(throw_on_rank_one)};
  q = &queue;
  locus::root_exec([&] {
    if (queue.rank() == 0) queue.put(throw_on_rank_one, 200);
    queue.wait();
  });
  return 0;  // reached only if no task ever ran on rank 1: the driver then fails the test
}
