// expect: locus::taskq: task input and output types must be trivially copyable
#include <locus/taskq.hpp>
#include <vector>
void first(const int& i, std::vector<int>& out) {
  out.assign(1, i);
}
void f(locus::taskq& q, std::vector<int>& out) {
  q.put(first, 1, out);
}
