/* tests/c_api/groups.h — the C ABI test's groups of cases, run by main.c. Each
 * records its checks through harness.h. */
#ifndef TESSEL_TEST_C_API_GROUPS_H
#define TESSEL_TEST_C_API_GROUPS_H

void gemm_tests(void);      /* gemm_test.c: results against float64 */
void attention_tests(void); /* attention_test.c: results against float64 */
void error_tests(void);     /* errors_test.c: refusals, their codes and messages, outputs untouched */
void info_tests(void);      /* info_test.c: version, status names, the per-thread message */

#endif
