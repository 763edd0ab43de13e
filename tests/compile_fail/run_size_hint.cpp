// expect: task_group::run takes locus::work_hint, locus::place, locus::parent_first
#include <locus/locus.hpp>
void f() {
  locus::task_group tg;
  tg.run([] {}, locus::size_hint{1024});
  tg.wait();
}
