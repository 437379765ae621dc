/* tests/c_api/errors_test.c — every refusal of the C ABI: its status code, a
 * message naming the function and the argument (a message of the C++ library
 * passed through as it is, "tessel::gemm: ..."), and no buffer changed — each
 * refused call is followed by a byte-for-byte comparison of every input and
 * output with its state before. Each case breaks one thing of an otherwise
 * valid call (a table row: one tensor replaced or null, or one scalar
 * argument); the valid call itself is checked to succeed, to write its
 * outputs, and to empty the thread's message. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "groups.h"
#include "harness.h"

enum { INVALID = TESSEL_ERROR_INVALID_ARGUMENT, UNSUPPORTED = TESSEL_ERROR_UNSUPPORTED, MAX_TENSORS = 5 };

/* One broken call. Left out (zero): no tensor replaced, every scalar valid. */
typedef struct refusal {
  const char* name;
  int arg;              /* 1 + the index of the tensor replaced; 0: none */
  int null;             /* pass NULL for that tensor */
  tessel_tensor with;   /* else: pass this instead */
  int32_t scalars[4];   /* gemm: trans_a, trans_b, path, threads; attention: causal, path, threads */
  float scale;          /* attention */
  tessel_status want;
  const char* phrases[4];
} refusal;

/* An op called on tensors[0..] with a row's scalars. */
typedef tessel_status (*op_call)(const tessel_tensor* const* t, const int32_t* scalars, float scale);

static tessel_status call_gemm(const tessel_tensor* const* t, const int32_t* s, float scale) {
  (void)scale;
  return tessel_gemm(t[0], t[1], t[2], 1.0f, 0.0f, s[0], s[1], s[2], s[3], NULL);
}
static tessel_status call_attention(const tessel_tensor* const* t, const int32_t* s, float scale) {
  return tessel_attention(t[0], t[1], t[2], t[3], t[4], s[0], scale, s[1], s[2], NULL);
}

static tessel_tensor with_rank(tessel_tensor t, int32_t rank) { return t.rank = rank, t; }
static tessel_tensor with_dtype(tessel_tensor t, int32_t dtype) { return t.dtype = dtype, t; }
static tessel_tensor with_shape(tessel_tensor t, const int64_t* shape) { return t.shape = shape, t; }
static tessel_tensor with_strides(tessel_tensor t, const int64_t* strides) { return t.strides = strides, t; }
static tessel_tensor with_data(tessel_tensor t, void* data) { return t.data = data, t; }
static tessel_tensor with_device(tessel_tensor t, int32_t kind, int32_t index) {
  t.device_kind = kind;
  t.device_index = index;
  return t;
}

/* Runs every row against the valid tensors `valid` (n of them) over `buffers`,
 * then the valid call, which must succeed and write output buffer `written`. */
static void run_refusals(const char* op, op_call call, const tessel_tensor* valid, int n, buffer* const* buffers,
                         const refusal* rows, size_t n_rows, int written) {
  snapshot before[MAX_TENSORS];
  for (int i = 0; i < n; ++i) before[i] = snapshot_take(buffers[i]);
  for (size_t r = 0; r < n_rows; ++r) {
    const refusal* row = &rows[r];
    tessel_tensor broken = row->with;
    const tessel_tensor* args[MAX_TENSORS];
    for (int i = 0; i < n; ++i) args[i] = &valid[i];
    if (row->arg) args[row->arg - 1] = row->null ? NULL : &broken;
    const tessel_status got = call(args, row->scalars, row->scale);
    check(got == row->want, "%s %s: status %s, expected %s (message: %s)", op, row->name, tessel_status_name(got),
          tessel_status_name(row->want), tessel_last_error());
    for (int p = 0; p < 4 && row->phrases[p]; ++p)
      check(message_has(row->phrases[p]), "%s %s: the message lacks \"%s\": %s", op, row->name, row->phrases[p],
            tessel_last_error());
    for (int i = 0; i < n; ++i)
      check(snapshot_unchanged(&before[i]), "%s %s: buffer %d was written", op, row->name, i);
  }
  const tessel_tensor* args[MAX_TENSORS];
  for (int i = 0; i < n; ++i) args[i] = &valid[i];
  const int32_t scalars[4] = {0, 0, 0, 0};
  const tessel_status ok = call(args, scalars, 0.0f);
  check(ok == TESSEL_OK, "%s: the valid call failed: %s", op, tessel_last_error());
  check(tessel_last_error()[0] == '\0', "%s: a message after a success: %s", op, tessel_last_error());
  check(!snapshot_unchanged(&before[written]), "%s: the valid call did not write its output", op);
  for (int i = 0; i < n; ++i) snapshot_free(&before[i]);
  printf("  errors: %s, %d refusals (status, message, nothing written)\n", op, (int)n_rows);
}

/* ---- gemm: a [4, 3] x b [3, 5] -> c [4, 5], fp32, host ---- */
static void gemm_errors(void) {
  rng r = case_rng("gemm errors");
  buffer ab = buffer_new(TESSEL_DTYPE_F32, 12), bb = buffer_new(TESSEL_DTYPE_F32, 15),
         cb = buffer_new(TESSEL_DTYPE_F32, 20);
  buffer* buffers[] = {&ab, &bb, &cb};
  for (int i = 0; i < 3; ++i) fill_random(buffers[i], &r, 2.0);
  view a, b, c;
  view_init(&a, &ab, 2, (const int64_t[]){4, 3}, NULL);
  view_init(&b, &bb, 2, (const int64_t[]){3, 5}, NULL);
  view_init(&c, &cb, 2, (const int64_t[]){4, 5}, NULL);
  const tessel_tensor valid[3] = {a.t, b.t, c.t}, A = a.t, B = b.t, C = c.t;
  const int64_t huge[2] = {(int64_t)1 << 40, (int64_t)1 << 40}, negative[2] = {3, -5}, wrong_k[2] = {2, 5};
  const int64_t neg_stride[2] = {-5, 1}, no_unit_stride[2] = {10, 2};
  const int cuda_not_built = strcmp(tessel_backends(), "cpu") == 0;
  const refusal rows[] = {
      {"a null", 1, 1, {0}, {0}, 0, INVALID, {"tessel_gemm: argument 'a'", "null pointer"}},
      {"c null", 3, 1, {0}, {0}, 0, INVALID, {"tessel_gemm: argument 'c'", "null pointer"}},
      {"b shape null", 2, 0, with_shape(B, NULL), {0}, 0, INVALID, {"tessel_gemm: argument 'b'", "shape is a null"}},
      {"a rank 5", 1, 0, with_rank(A, 5), {0}, 0, INVALID, {"argument 'a'", "rank 5", "expected 2 or 3"}},
      {"a rank -1", 1, 0, with_rank(A, -1), {0}, 0, INVALID, {"argument 'a'", "rank -1"}},
      {"c dtype 7", 3, 0, with_dtype(C, 7), {0}, 0, INVALID, {"argument 'c'", "dtype 7", "TESSEL_DTYPE_F32"}},
      {"a dtype -1", 1, 0, with_dtype(A, -1), {0}, 0, INVALID, {"argument 'a'", "dtype -1"}},
      {"b device 9", 2, 0, with_device(B, 9, 0), {0}, 0, INVALID, {"argument 'b'", "device_kind 9", "DEVICE_HOST"}},
      {"c device_index -2", 3, 0, with_device(C, TESSEL_DEVICE_HOST, -2), {0}, 0, INVALID,
       {"argument 'c'", "device_index -2"}},
      {"a host device_index 1", 1, 0, with_device(A, TESSEL_DEVICE_HOST, 1), {0}, 0, INVALID,
       {"argument 'a'", "device_index 1"}},
      {"a overflowing", 1, 0, with_shape(A, huge), {0}, 0, INVALID, {"tessel::gemm: argument 'a'", "int64"}},
      {"b negative extent", 2, 0, with_shape(B, negative), {0}, 0, INVALID, {"tessel::gemm: argument 'b'", "-5"}},
      {"b negative stride", 2, 0, with_strides(B, neg_stride), {0}, 0, INVALID,
       {"tessel::gemm: argument 'b'", "stride 0 is -5"}},
      {"a no unit stride", 1, 0, with_strides(A, no_unit_stride), {0}, 0, INVALID,
       {"tessel::gemm: argument 'a'", "row- or column"}},
      {"b wrong K", 2, 0, with_shape(B, wrong_k), {0}, 0, INVALID, {"tessel::gemm: argument 'b'", "rows (K"}},
      {"a null data", 1, 0, with_data(A, NULL), {0}, 0, INVALID, {"tessel::gemm: argument 'a'", "null pointer"}},
      {"c overlaps a", 3, 0, with_data(C, ab.data), {0}, 0, INVALID, {"tessel::gemm: argument 'c'", "overlaps", "'a'"}},
      {"a f32, b f16", 2, 0, with_dtype(B, TESSEL_DTYPE_F16), {0}, 0, UNSUPPORTED,
       {"tessel::gemm: unsupported dtype combination"}},
      {"c on another device", 3, 0, with_device(C, TESSEL_DEVICE_CUDA, 0), {0}, 0, INVALID,
       {"argument 'a'", "expected the device of c"}},
      {"trans_a 2", 0, 0, {0}, {2, 0, 0, 0}, 0, INVALID, {"tessel_gemm: argument 'trans_a'", "expected 0 or 1, got 2"}},
      {"trans_b -1", 0, 0, {0}, {0, -1, 0, 0}, 0, INVALID, {"tessel_gemm: argument 'trans_b'"}},
      {"path 3", 0, 0, {0}, {0, 0, 3, 0}, 0, INVALID, {"tessel_gemm: argument 'path'", "got 3"}},
      {"threads -4", 0, 0, {0}, {0, 0, 0, -4}, 0, INVALID, {"tessel_gemm: argument 'threads'", "-4"}},
  };
  run_refusals("gemm", call_gemm, valid, 3, buffers, rows, sizeof rows / sizeof rows[0], 2);
  if (cuda_not_built) { /* every operand on a backend this build lacks */
    const tessel_tensor da = with_device(A, TESSEL_DEVICE_CUDA, 0), db = with_device(B, TESSEL_DEVICE_CUDA, 0),
                        dc = with_device(C, TESSEL_DEVICE_CUDA, 0);
    snapshot s = snapshot_take(&cb);
    const tessel_status got = tessel_gemm(&da, &db, &dc, 1.0f, 0.0f, 0, 0, 0, 0, NULL);
    check(got == UNSUPPORTED && message_has("argument 'a'") && message_has("cuda device") && snapshot_unchanged(&s),
          "gemm on cuda, not built: %s: %s", tessel_status_name(got), tessel_last_error());
    snapshot_free(&s);
  }
  for (int i = 0; i < 3; ++i) buffer_free(buffers[i]);
}

/* ---- attention: q, out [1, 4, 2, 64], k, v [1, 5, 1, 64], lse [1, 2, 4], fp32, host ---- */
static void attention_errors(void) {
  rng r = case_rng("attention errors");
  buffer qb = buffer_new(TESSEL_DTYPE_F32, 512), kb = buffer_new(TESSEL_DTYPE_F32, 320),
         vb = buffer_new(TESSEL_DTYPE_F32, 320), ob = buffer_new(TESSEL_DTYPE_F32, 512),
         lb = buffer_new(TESSEL_DTYPE_F32, 8);
  buffer* buffers[] = {&qb, &kb, &vb, &ob, &lb};
  for (int i = 0; i < 5; ++i) fill_random(buffers[i], &r, 1.0);
  view q, k, v, out, lse;
  view_init(&q, &qb, 4, (const int64_t[]){1, 4, 2, 64}, NULL);
  view_init(&k, &kb, 4, (const int64_t[]){1, 5, 1, 64}, NULL);
  view_init(&v, &vb, 4, (const int64_t[]){1, 5, 1, 64}, NULL);
  view_init(&out, &ob, 4, (const int64_t[]){1, 4, 2, 64}, NULL);
  view_init(&lse, &lb, 3, (const int64_t[]){1, 2, 4}, NULL);
  const tessel_tensor valid[5] = {q.t, k.t, v.t, out.t, lse.t}, Q = q.t, K = k.t, V = v.t, L = lse.t;
  const int64_t k_len3[4] = {1, 3, 1, 64}, v_len[4] = {1, 6, 1, 64}, lse_wrong[3] = {1, 2, 5};
  const int64_t negative[4] = {1, -4, 2, 64}, d_stride2[4] = {1024, 256, 128, 2};
  const refusal rows[] = {
      {"q null", 1, 1, {0}, {0}, 0, INVALID, {"tessel_attention: argument 'q'", "null pointer"}},
      {"out null", 4, 1, {0}, {0}, 0, INVALID, {"tessel_attention: argument 'out'", "null pointer"}},
      {"k rank 3", 2, 0, with_rank(K, 3), {0}, 0, INVALID, {"argument 'k'", "rank 3, expected 4"}},
      {"v dtype 9", 3, 0, with_dtype(V, 9), {0}, 0, INVALID, {"argument 'v'", "dtype 9"}},
      {"out shape null", 4, 0, with_shape(out.t, NULL), {0}, 0, INVALID, {"argument 'out'", "shape is a null"}},
      {"lse rank 2", 5, 0, with_rank(L, 2), {0}, 0, INVALID, {"argument 'lse'", "rank 2, expected 3"}},
      {"lse f16", 5, 0, with_dtype(L, TESSEL_DTYPE_F16), {0}, 0, INVALID, {"tessel::attention: argument 'lse'", "fp32"}},
      {"lse shape", 5, 0, with_shape(L, lse_wrong), {0}, 0, INVALID, {"tessel::attention: argument 'lse'", "[1, 2, 5]"}},
      {"lse null data", 5, 0, with_data(L, NULL), {0}, 0, INVALID, {"argument 'lse'", "null pointer"}},
      {"k kv_len 3", 2, 0, with_shape(K, k_len3), {0}, 0, INVALID, {"tessel::attention: argument 'v'", "the shape of k"}},
      {"v shape", 3, 0, with_shape(V, v_len), {0}, 0, INVALID, {"tessel::attention: argument 'v'"}},
      {"q negative", 1, 0, with_shape(Q, negative), {0}, 0, INVALID, {"tessel::attention: argument 'q'", "-4"}},
      {"q head_dim stride 2", 1, 0, with_strides(Q, d_stride2), {0}, 0, INVALID,
       {"tessel::attention: argument 'q'", "contiguous"}},
      {"q bf16, rest f32", 1, 0, with_dtype(Q, TESSEL_DTYPE_BF16), {0}, 0, UNSUPPORTED,
       {"unsupported dtype combination"}},
      {"out overlaps q", 4, 0, with_data(out.t, qb.data), {0}, 0, INVALID, {"argument 'out'", "overlaps", "'q'"}},
      {"causal 2", 0, 0, {0}, {2, 0, 0}, 0, INVALID, {"tessel_attention: argument 'causal'", "0 or 1"}},
      {"scale -1", 0, 0, {0}, {0}, -1.0f, INVALID, {"'scale'"}},
      {"scale NaN", 0, 0, {0}, {0}, NAN, INVALID, {"'scale'"}},
      {"path -1", 0, 0, {0}, {0, -1, 0}, 0, INVALID, {"tessel_attention: argument 'path'"}},
      {"threads -1", 0, 0, {0}, {0, 0, -1}, 0, INVALID, {"tessel_attention: argument 'threads'"}},
  };
  run_refusals("attention", call_attention, valid, 5, buffers, rows, sizeof rows / sizeof rows[0], 3);
  for (int i = 0; i < 5; ++i) buffer_free(buffers[i]);
}

/* Shapes consistent across q, k, v and out, refused all the same: head_dim 96
 * (not provided), kv_heads that do not divide heads. */
static void attention_shape_errors(void) {
  const struct {
    const char* name;
    int64_t q[4], kv[4];
    tessel_status want;
    const char* phrases[2];
  } cases[] = {{"head_dim 96", {1, 4, 2, 96}, {1, 5, 1, 96}, UNSUPPORTED, {"tessel::attention: argument 'q'", "96"}},
               {"kv_heads 3 of 2 heads", {1, 4, 2, 64}, {1, 5, 3, 64}, INVALID, {"argument 'k'", "divide"}}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; ++c) {
    buffer b[4] = {buffer_new(TESSEL_DTYPE_F32, 4 * 2 * 96), buffer_new(TESSEL_DTYPE_F32, 5 * 3 * 96),
                   buffer_new(TESSEL_DTYPE_F32, 5 * 3 * 96), buffer_new(TESSEL_DTYPE_F32, 4 * 2 * 96)};
    view q, k, v, out;
    view_init(&q, &b[0], 4, cases[c].q, NULL);
    view_init(&k, &b[1], 4, cases[c].kv, NULL);
    view_init(&v, &b[2], 4, cases[c].kv, NULL);
    view_init(&out, &b[3], 4, cases[c].q, NULL);
    snapshot before = snapshot_take(&b[3]);
    const tessel_status got = tessel_attention(&q.t, &k.t, &v.t, &out.t, NULL, 0, 0.0f, 0, 1, NULL);
    check(got == cases[c].want && message_has(cases[c].phrases[0]) && message_has(cases[c].phrases[1]) &&
              snapshot_unchanged(&before),
          "attention %s: %s: %s", cases[c].name, tessel_status_name(got), tessel_last_error());
    snapshot_free(&before);
    for (int i = 0; i < 4; ++i) buffer_free(&b[i]);
  }
}

void error_tests(void) {
  gemm_errors();
  attention_errors();
  attention_shape_errors();
}
