#include "harness/regions.hpp"

#include <exception>
#include <string>

#include <locus/runtime.hpp>

#if LOCUS_BENCH_PEERS
#include <omp.h>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#endif

namespace locus_bench {

namespace {

class serial_region final : public region {
 public:
  void execute(const std::function<void()>& f) override { f(); }
};

class locus_region final : public region {
 public:
  explicit locus_region(locus::runtime& rt) : rt_(rt) {}
  void execute(const std::function<void()>& f) override {
    rt_.exec([&f] { f(); });
  }

 private:
  locus::runtime& rt_;
};

#if LOCUS_BENCH_PEERS

class tbb_region final : public region {
 public:
  explicit tbb_region(int workers) : arena_(workers) { arena_.initialize(); }
  void execute(const std::function<void()>& f) override {
    arena_.execute([&f] { f(); });
  }

 private:
  tbb::task_arena arena_;
};

class omp_region final : public region {
 public:
  explicit omp_region(int workers) : workers_(workers) { omp_set_dynamic(0); }
  void execute(const std::function<void()>& f) override {
    std::exception_ptr error;
#pragma omp parallel num_threads(workers_) default(none) shared(f, error)
    {
#pragma omp single
      {
        try {
          f();
        } catch (...) {
          error = std::current_exception();
        }
      }
    }
    if (error) std::rethrow_exception(error);
  }

 private:
  int workers_;
};

struct tbb_settings {
  explicit tbb_settings(int max_workers)
      : parallelism(tbb::global_control::max_allowed_parallelism,
                    static_cast<std::size_t>(max_workers)),
        stack(tbb::global_control::thread_stack_size, std::size_t{256} << 20) {}
  tbb::global_control parallelism;
  tbb::global_control stack;
};

#endif

}  // namespace

std::unique_ptr<region> make_serial_region() {
  return std::make_unique<serial_region>();
}

std::unique_ptr<region> make_locus_region(locus::runtime& rt) {
  return std::make_unique<locus_region>(rt);
}

#if LOCUS_BENCH_PEERS

std::unique_ptr<region> make_tbb_region(int workers) {
  return std::make_unique<tbb_region>(workers);
}

std::unique_ptr<region> make_omp_region(int workers) {
  return std::make_unique<omp_region>(workers);
}

std::shared_ptr<void> make_tbb_settings(int max_workers) {
  return std::make_shared<tbb_settings>(max_workers < 1 ? 1 : max_workers);
}

#else

std::unique_ptr<region> make_tbb_region(int) {
  throw usage_error("--impl tbb: this locus-bench was built without LOCUS_BENCH_PEERS");
}

std::unique_ptr<region> make_omp_region(int) {
  throw usage_error("--impl omp: this locus-bench was built without LOCUS_BENCH_PEERS");
}

std::shared_ptr<void> make_tbb_settings(int) {
  return nullptr;
}

#endif

}  // namespace locus_bench
