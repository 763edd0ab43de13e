// locus: locality-aware fork-join task parallelism.
#pragma once

#include "locus/algorithms.hpp"
#include "locus/assembly.hpp"
#include "locus/assembly_schedulers.hpp"
#include "locus/flow_graph.hpp"
#include "locus/hints.hpp"
#include "locus/locality.hpp"
#include "locus/memory.hpp"
#include "locus/runtime.hpp"
#include "locus/stats.hpp"
#include "locus/task_group.hpp"
#include "locus/taskq.hpp"
#include "locus/zmatrix.hpp"
