/* tests/c_api/device.h — the C ABI test's device cases: host buffers mirrored
 * on a CUDA device, so that each host case can run once more on device
 * tensors, on a stream of its own, against the same float64 reference.
 *
 * Contract: device_available() is 1 where the test was built with the CUDA
 * runtime (the cuda backend), tessel_backends() names cuda and a device is
 * present; else 0 (then the device cases are skipped, and say so once).
 * device_put(v) copies v's whole buffer (padding included) to new device
 * memory and points v's tensor at it (TESSEL_DEVICE_CUDA, device 0);
 * device_get(v) waits for device_stream(), copies the whole buffer back over
 * the host one, frees the device copy and points v at the host again.
 * device_stream() is the stream the cases pass to the ABI. A CUDA call that
 * fails is a failed check (with its error string), and the case stops. */
#ifndef TESSEL_TEST_C_API_DEVICE_H
#define TESSEL_TEST_C_API_DEVICE_H
#include "harness.h"

int device_available(void);
int device_put(view* v);
int device_get(view* v);
void* device_stream(void);

#endif
