/* tests/c_api/main.c — the C ABI's test: a C program (C11, no C++) linked
 * only against libtessel_c. Prints the run seed (TESSEL_SEED replays it),
 * runs every group (the device cases where a CUDA device is present),
 * exits 1 if any check failed. */
#include <stdio.h>

#include "device.h"
#include "groups.h"
#include "harness.h"

int main(void) {
#if defined(__SANITIZE_ADDRESS__)
  printf("built with AddressSanitizer\n");
#endif
  printf("tessel C ABI test: TESSEL_SEED=%llu (set it to replay), backends: %s\n", (unsigned long long)run_seed(),
         tessel_backends());
  printf("device cases: %s\n", device_available() ? "run on CUDA device 0" : "skipped (no CUDA device, or no cuda backend)");
  info_tests();
  gemm_tests();
  attention_tests();
  error_tests();
  printf("%d checks, %d failed\n", checks(), failures());
  return failures() ? 1 : 0;
}
