// expect: locus::taskq: task input and output types must be trivially copyable
#include <locus/taskq.hpp>
#include <string>
void length(const std::string& s, std::size_t& n) {
  n = s.size();
}
void f() {
  locus::taskq q{locus::task_function(length)};
}
