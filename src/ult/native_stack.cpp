#include <pthread.h>

#include "ult/context.hpp"

namespace locus::ult {

stack describe_native_stack() noexcept {
  stack s;
  pthread_attr_t attr;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    void* addr = nullptr;
    std::size_t size = 0;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0) {
      s.lo = static_cast<std::byte*>(addr);
      s.size = size;
    }
    pthread_attr_destroy(&attr);
  }
#if defined(LOCUS_TSAN)
  s.sanitizer_fiber = __tsan_get_current_fiber();
#endif
  return s;
}

}  // namespace locus::ult
