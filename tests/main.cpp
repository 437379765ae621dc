// tests/main.cpp — prints the run seed and the device before any test runs.
#include <gtest/gtest.h>

#include <cstdio>

#include "asan.hpp"
#include "device_buffer.hpp"
#include "host_tensor.hpp"
#include "tessel/tessel.hpp"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
#if TESSEL_TEST_ASAN
  std::printf("[ tessel   ] built with AddressSanitizer\n");  // scripts/test.sh's cpu-sanitize step looks for this line
#endif
#if defined(TESSEL_CUDA_CHECK_ONLY)
  std::printf("[ tessel   ] the CUDA code is compiled with few optimisations (TESSEL_CUDA_CHECK_ONLY): a build to check, not to time\n");
#endif
  std::printf("[ tessel   ] TESSEL_SEED=%llu (set it to replay), backends: %s, cpu isa: %s, device: %s\n",
              static_cast<unsigned long long>(tessel::support::run_seed()), tessel::built_backends(),
              tessel::cpu_isa(), tessel::support::device_description().c_str());
  return RUN_ALL_TESTS();
}
