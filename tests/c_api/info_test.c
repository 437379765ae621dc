/* tests/c_api/info_test.c — what the C ABI says about itself: the runtime's
 * version against the header's, the status names, the tessel_tensor layout a
 * foreign caller mirrors, and the message being the calling thread's own. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <threads.h>

#include "groups.h"
#include "harness.h"

/* The layout a ctypes / Rust mirror of tessel_tensor relies on (LP64). */
_Static_assert(sizeof(void*) != 8 || sizeof(tessel_tensor) == 40, "tessel_tensor is 40 bytes on LP64");
_Static_assert(sizeof(void*) != 8 || offsetof(tessel_tensor, dtype) == 24, "dtype follows the three pointers");
_Static_assert(sizeof(void*) != 8 || offsetof(tessel_tensor, device_index) == 36, "device_index is last");

static void versions(void) {
  const int32_t v = tessel_c_api_version();
  check(v == TESSEL_C_API_VERSION, "library version %d, header version %d", (int)v, (int)TESSEL_C_API_VERSION);
  check(TESSEL_C_API_VERSION_COMPATIBLE(v), "TESSEL_C_API_VERSION_COMPATIBLE(%d) is false", (int)v);
  check(!TESSEL_C_API_VERSION_COMPATIBLE(v + 10000), "a next major version counts as compatible");
  check(!TESSEL_C_API_VERSION_COMPATIBLE(TESSEL_C_API_VERSION - 1), "an older library counts as compatible");
  check(TESSEL_C_API_VERSION_COMPATIBLE(TESSEL_C_API_VERSION + 1), "a newer patch counts as incompatible");
  printf("  info: C ABI version %d (header %d), backends \"%s\"\n", (int)v, (int)TESSEL_C_API_VERSION,
         tessel_backends());
}

static void status_names(void) {
  const struct {
    tessel_status status;
    const char* name;
  } names[] = {{TESSEL_OK, "TESSEL_OK"},
               {TESSEL_ERROR_INVALID_ARGUMENT, "TESSEL_ERROR_INVALID_ARGUMENT"},
               {TESSEL_ERROR_UNSUPPORTED, "TESSEL_ERROR_UNSUPPORTED"},
               {TESSEL_ERROR_DEVICE, "TESSEL_ERROR_DEVICE"},
               {TESSEL_ERROR_OUT_OF_MEMORY, "TESSEL_ERROR_OUT_OF_MEMORY"},
               {TESSEL_ERROR_INTERNAL, "TESSEL_ERROR_INTERNAL"},
               {99, "unknown status"},
               {-1, "unknown status"}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; ++i)
    check(strcmp(tessel_status_name(names[i].status), names[i].name) == 0, "tessel_status_name(%d) is \"%s\"",
          (int)names[i].status, tessel_status_name(names[i].status));
}

/* A thread's own call: one that fails (bad trans_b) or succeeds. */
static int thread_call(void* fail) {
  float a[4] = {1, 2, 3, 4}, b[4] = {1, 0, 0, 1}, c[4];
  const int64_t shape[2] = {2, 2};
  const tessel_tensor ta = {a, shape, NULL, TESSEL_DTYPE_F32, 2, TESSEL_DEVICE_HOST, 0};
  const tessel_tensor tb = {b, shape, NULL, TESSEL_DTYPE_F32, 2, TESSEL_DEVICE_HOST, 0};
  const tessel_tensor tc = {c, shape, NULL, TESSEL_DTYPE_F32, 2, TESSEL_DEVICE_HOST, 0};
  const tessel_status s = tessel_gemm(&ta, &tb, &tc, 1.0f, 0.0f, 0, fail ? 5 : 0, TESSEL_PATH_FASTEST, 1, NULL);
  const int right = fail ? s == TESSEL_ERROR_INVALID_ARGUMENT && message_has("'trans_b'")
                         : s == TESSEL_OK && tessel_last_error()[0] == '\0' && c[1] == 2 && c[2] == 3;
  return right;
}

static void per_thread_message(void) {
  const tessel_status s = tessel_gemm(NULL, NULL, NULL, 1.0f, 0.0f, 0, 0, 0, 0, NULL);
  check(s == TESSEL_ERROR_INVALID_ARGUMENT && message_has("'a'"), "gemm(NULL, ...) gave %s: %s",
        tessel_status_name(s), tessel_last_error());
  for (int fail = 0; fail < 2; ++fail) {
    thrd_t t;
    int right = 0;
    check(thrd_create(&t, thread_call, fail ? (void*)1 : NULL) == thrd_success && thrd_join(t, &right) == thrd_success
              && right, "a thread's %s call: wrong status or message", fail ? "failing" : "succeeding");
    check(message_has("tessel_gemm: argument 'a'"), "another thread's call changed this thread's message to: %s",
          tessel_last_error());
  }
}

void info_tests(void) {
  versions();
  status_names();
  per_thread_message();
}
