// A fixture for tests that run locality sessions on runtimes made from the environment: the
// variables they read are cleared for the test and restored after it, and no session is left
// open.
#pragma once

#include <gtest/gtest.h>

#include "locus/locality.hpp"
#include "saved_env.hpp"

namespace locus_test {

class locality_env_test : public testing::Test {
 protected:
  void TearDown() override {
    if (locus::locality::recording()) (void)locus::locality::end();
  }

 private:
  saved_env env_{"LOCUS_LOCALITY", "LOCUS_LOCALITY_LINE", "LOCUS_TOPOLOGY", "LOCUS_WORKERS",
                 "LOCUS_SCHED"};
};

}  // namespace locus_test
