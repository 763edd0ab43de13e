// expect: task_group(...) takes locus::work_hint and locus::size_hint
#include <locus/locus.hpp>
void f() {
  locus::task_group tg{locus::parent_first};
}
