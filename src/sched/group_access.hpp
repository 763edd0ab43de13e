// The join state inside a locus::task_group, for the layers built on task groups (taskq,
// assemblies), which spawn into it without going through task_group::run.
#pragma once

#include "locus/task_group.hpp"

namespace locus::detail {

struct group_access {
  static group_state& of(task_group& tg) noexcept { return tg.state_; }
};

}  // namespace locus::detail
