// expect: compiles
#include <locus/locus.hpp>
void f() {
  locus::task_group tg{locus::work_hint{2.0}, locus::size_hint{1 << 20}};
  tg.run([] {}, locus::work_hint{1.0}, locus::place{0}, locus::label{"a"});
  tg.run([] {}, locus::parent_first, locus::any_place);
  tg.wait();
}
