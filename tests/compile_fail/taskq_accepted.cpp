// expect: compiles
#include <locus/taskq.hpp>
struct pair {
  int a, b;
};
void sum(const pair& p, long& out) {
  out = p.a + p.b;
}
void touch(const int&) {}
void raw(void*, void*) {}
void f(long& out) {
  locus::taskq q{locus::task_function(sum), locus::task_function(touch),
                 locus::task_function(raw, 4, 0)};
  q.put(sum, pair{1, 2}, out);
  q.put(touch, 3);
  int in = 0;
  q.put(raw, &in, nullptr);
  const locus::taskq::dep d = q.put_after({}, sum, pair{3, 4}, out);
  q.put_after({d}, touch, 5);
  q.put_after({d}, raw, &in, nullptr);
  q.fence();
  q.wait();
}
