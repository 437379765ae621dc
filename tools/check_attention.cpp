// tools/check_attention.cpp — `tessel-check attention`: one attention forward on the
// device and on the CPU backend, both against the float64 reference
// (support::reference_attention) of the same rounded inputs.
//
// Q, K, V are [batch, seq, heads, head_dim] (.npy files or random), rounded to
// --dtype; out has the input type and is widened to float32 for the report
// and --out; LSE is always asked for (fp32 [batch, heads, q_len]) and checked.
// Outputs start poisoned (NaN), so an unwritten element reads as an error.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

#include "check.hpp"
#include "check_operand.hpp"
#include "check_report.hpp"
#include "device_buffer.hpp"
#include "host_tensor.hpp"
#include "npy.hpp"
#include "output_file.hpp"
#include "reference_attention.hpp"
#include "tessel/tessel.hpp"

namespace tessel::tools {

const std::vector<option_spec> check_attention_options = {
    {"--q", true},      {"--k", true},        {"--v", true},        {"--dtype", true},  {"--causal", false},
    {"--scale", true},  {"--out", true},      {"--lse", true},      {"--batch", true},  {"--q-len", true},
    {"--kv-len", true}, {"--heads", true},    {"--kv-heads", true}, {"--head-dim", true}, {"--seed", true},
    {"--tol", true},    {"--lse-tol", true},  {"--threads", true},  {"--allow-nonfinite", false}};

namespace {

operand from_file(const std::string& path, dtype t, const char* role) {
  return read_operand(path, t, role, {4}, "4-D [batch, seq, heads, head_dim]");
}

tensor_view bshd(const void* p, dtype t, const shape_t& s, const device& dev) {
  return tensor_view::contiguous(const_cast<void*>(p), t, {s[0], s[1], s[2], s[3]}, dev);
}

struct run_result {
  std::vector<double> out;  // widened, [b, s, h, d]
  std::vector<double> lse;  // [b, h, q_len]
};

run_result run_on(const device& dev, const operand& q, const operand& k, const operand& v, dtype t, bool causal,
                  float scale, int threads) {
  support::host_tensor out(t, elements(q.shape)), lse(dtype::f32, std::size_t(q.shape[0] * q.shape[2] * q.shape[1]));
  support::fill_poison(out);
  support::fill_poison(lse);
  support::device_buffer bq(dev, q.data.bytes.size()), bk(dev, k.data.bytes.size()), bv(dev, v.data.bytes.size()),
      bo(dev, out.bytes.size()), bl(dev, lse.bytes.size());
  bq.upload(q.data.data(), q.data.bytes.size());
  bk.upload(k.data.data(), k.data.bytes.size());
  bv.upload(v.data.data(), v.data.bytes.size());
  bo.upload(out.data(), out.bytes.size());
  bl.upload(lse.data(), lse.bytes.size());
  attention_options o;
  o.causal = causal;
  o.scale = scale;
  o.lse = tensor_view::contiguous(bl.data(), dtype::f32, {q.shape[0], q.shape[2], q.shape[1]}, dev);
  const stream s = dev.kind == device_kind::host ? stream::cpu(threads) : stream::gpu(nullptr);
  attention(bshd(bq.data(), t, q.shape, dev), bshd(bk.data(), t, k.shape, dev), bshd(bv.data(), t, v.shape, dev),
            bshd(bo.data(), t, q.shape, dev), o, s);
  support::synchronize(dev);
  bo.download(out.data(), out.bytes.size());
  bl.download(lse.data(), lse.bytes.size());
  run_result r;
  r.out.resize(out.count);
  r.lse.resize(lse.count);
  for (std::size_t i = 0; i < out.count; ++i) r.out[i] = out.get(i);
  for (std::size_t i = 0; i < lse.count; ++i) r.lse[i] = lse.get(i);
  return r;
}

// Max |x − r| over rows finite in both. A row that sees no key is -inf in
// both; any other NaN/inf row counts in `mismatched` (the error is then inf),
// unless allow_nonfinite, where NaN and +inf rows may match too.
double lse_error(const std::vector<double>& ref, const std::vector<double>& x, bool allow_nonfinite,
                 std::size_t& mismatched) {
  const position_comparison c = compare_positions(ref, x);
  mismatched = c.mismatched + (allow_nonfinite ? 0 : c.nan + c.pos_inf);
  return mismatched && !allow_nonfinite ? INFINITY : c.max_abs;
}

}  // namespace

int check_attention(const parsed_args& args) {
  if (!args.positional.empty()) throw usage_error("unexpected argument '" + args.positional[0] + "'");
  const dtype t = parse_dtype(args.str("--dtype", "fp32"));
  const bool causal = args.flag("--causal");
  const double scale_arg = args.number("--scale", 0.0);
  if (args.has("--scale") && !(scale_arg > 0 && std::isfinite(float(scale_arg))))
    throw usage_error("'--scale' must be a finite value > 0");
  const double tol = args.number("--tol", default_attention_tol(t));
  const double lse_tol = args.number("--lse-tol", default_lse_tol);
  if (tol < 0 || lse_tol < 0) throw usage_error("'--tol' and '--lse-tol' must be >= 0");
  const int threads = int(args.integer("--threads", 0, 0, 4096));
  const bool files = args.has("--q") || args.has("--k") || args.has("--v");
  const bool sizes = args.has("--batch") || args.has("--q-len") || args.has("--kv-len") || args.has("--heads") ||
                     args.has("--kv-heads") || args.has("--head-dim");
  if (files && sizes) throw usage_error("give either --q/--k/--v files or sizes (--q-len ...), not both");
  if (!files && !sizes) throw usage_error("give --q Q.npy --k K.npy --v V.npy, or --q-len L [--heads H ...]");
  if (files && !(args.has("--q") && args.has("--k") && args.has("--v")))
    throw usage_error("--q, --k and --v go together");
  if (sizes && !args.has("--q-len")) throw usage_error("random inputs need --q-len");
  if (files && args.has("--seed")) throw usage_error("--seed applies to random inputs only");
  const bool allow_nonfinite = args.flag("--allow-nonfinite");
  output_set outputs;  // checked now, written at the end, all or none
  if (args.has("--out")) outputs.add("--out", args.str("--out"));
  if (args.has("--lse")) outputs.add("--lse", args.str("--lse"));

  operand q, k, v;
  std::uint64_t seed = 0;
  if (files) {
    q = from_file(args.str("--q"), t, "Q");
    k = from_file(args.str("--k"), t, "K");
    v = from_file(args.str("--v"), t, "V");
  } else {
    constexpr std::int64_t lim = 1 << 24;
    const std::int64_t B = args.integer("--batch", 1, 1, 1 << 16), Lq = args.integer("--q-len", 0, 0, lim),
                       Lk = args.integer("--kv-len", Lq, 0, lim), H = args.integer("--heads", 1, 1, 1 << 16),
                       Hk = args.integer("--kv-heads", H, 1, 1 << 16), D = args.integer("--head-dim", 64, 1, 1 << 16);
    if (H % Hk != 0)
      throw usage_error("'--kv-heads' " + std::to_string(Hk) + " must divide '--heads' " + std::to_string(H));
    if (D != 64 && D != 128) throw usage_error("'--head-dim' must be 64 or 128, got " + std::to_string(D));
    check_extent("--batch x --q-len x --heads x --head-dim", {B, Lq, H, D});
    check_extent("--batch x --kv-len x --kv-heads x --head-dim", {B, Lk, Hk, D});
    seed = std::uint64_t(args.integer("--seed", std::int64_t(support::run_seed() & 0x7fffffff), 0,
                                      std::numeric_limits<std::int64_t>::max()));
    std::mt19937_64 rng(seed);
    q = random_operand({B, Lq, H, D}, t, rng);
    k = random_operand({B, Lk, Hk, D}, t, rng);
    v = random_operand({B, Lk, Hk, D}, t, rng);
  }

  // Shapes: the message names the file and what it should be.
  const std::int64_t B = q.shape[0], Lq = q.shape[1], H = q.shape[2], D = q.shape[3];
  const std::int64_t Lk = k.shape[1], Hk = k.shape[2];
  if (D != 64 && D != 128)
    throw input_error(q.origin + ": head_dim " + std::to_string(D) + " (last dimension of " + shape_string(q.shape) +
                      ") is not supported; expected 64 or 128");
  if (k.shape[0] != B || k.shape[3] != D)
    throw input_error(k.origin + ": K has shape " + shape_string(k.shape) + ", expected [" + std::to_string(B) +
                      ", kv_len, kv_heads, " + std::to_string(D) + "] (batch and head_dim of " + q.origin + ")");
  if (v.shape != k.shape)
    throw input_error(v.origin + ": V has shape " + shape_string(v.shape) + ", expected the shape of K " +
                      shape_string(k.shape));
  if (Hk == 0 || H % Hk != 0)
    throw input_error(k.origin + ": its " + std::to_string(Hk) + " heads do not divide the " + std::to_string(H) +
                      " heads of " + q.origin + " (grouped-query attention needs heads % kv_heads == 0)");

  check_extent(q.origin + ": Q " + shape_string(q.shape), {B, Lq, H, D});
  check_extent(k.origin + ": K " + shape_string(k.shape), {B, Lk, Hk, D});

  const device dev = support::default_device();
  if (!support::device_available())
    throw input_error(std::string("this build's device (") + device_name(dev.kind) +
                      ") is not available on this machine: " + support::device_description());
  if (t == dtype::f32 && dev.kind != device_kind::host)
    throw input_error(std::string("fp32 attention runs on the CPU backend only; this build's device is ") +
                      device_name(dev.kind) + " (use --dtype bf16 or fp16, or a CPU build)");

  const float scale = float(scale_arg);  // 0: tessel's default 1/sqrt(head_dim)
  const double eff_scale = scale > 0 ? double(scale) : 1.0 / std::sqrt(double(D));
  std::printf("tessel-check attention: batch=%lld q_len=%lld kv_len=%lld heads=%lld kv_heads=%lld head_dim=%lld%s\n",
              (long long)B, (long long)Lq, (long long)Lk, (long long)H, (long long)Hk, (long long)D,
              causal ? ", causal (bottom-right)" : "");
  std::printf("  inputs %s (rounded to it), softmax fp32, output %s (widened to float32 here), scale %.6g%s%s\n",
              dtype_name(t), dtype_name(t), eff_scale, scale > 0 ? "" : " (1/sqrt(head_dim))",
              files ? "" : (", random inputs in [-1, 1), seed " + std::to_string(seed)).c_str());
  std::printf("  Q: %s %s\n  K: %s %s\n  V: %s %s\n", q.origin.c_str(), shape_string(q.shape).c_str(),
              k.origin.c_str(), shape_string(k.shape).c_str(), v.origin.c_str(), shape_string(v.shape).c_str());
  const std::string dev_label = std::string(device_name(dev.kind)) + ":" + std::to_string(dev.index);
  std::printf("  backends: %s; device %s (%s); cpu isa %s\n", built_backends(), dev_label.c_str(),
              support::device_description().c_str(), cpu_isa());
  if (dev.kind == device_kind::host)
    std::printf("  (CPU-only build: the device run and the CPU run use the same backend)\n");
  print_input_notes({&q, &k, &v}, allow_nonfinite);
  std::fflush(stdout);

  const run_result d = run_on(dev, q, k, v, t, causal, scale, threads);
  const run_result h = run_on(device::host(), q, k, v, t, causal, scale, threads);
  const support::attention_reference ref =
      support::reference_attention(bshd(q.data.data(), t, q.shape, device::host()),
                                   bshd(k.data.data(), t, k.shape, device::host()),
                                   bshd(v.data.data(), t, v.shape, device::host()), causal, eff_scale);

  const result_errors e = compare_results(ref.out, d.out, h.out, allow_nonfinite);
  std::size_t bad_dev = 0, bad_host = 0;
  const double l_dev = lse_error(ref.lse, d.lse, allow_nonfinite, bad_dev),
               l_host = lse_error(ref.lse, h.lse, allow_nonfinite, bad_host);
  std::printf("out: relative Frobenius error ||X - R||/||R|| (R = float64 attention of the rounded inputs)%s:\n",
              allow_nonfinite ? ", over the elements finite in both" : "");
  print_result_errors(e, dev_label);
  std::printf("lse: max |X - R| (natural log; rows that see no key must be -inf in both%s):\n",
              allow_nonfinite ? ", NaN/inf rows as float64's" : "");
  std::printf("  device %-8s vs float64   %s%s\n", dev_label.c_str(), format_error(l_dev).c_str(),
              bad_dev ? (" (" + std::to_string(bad_dev) + " rows -inf/NaN mismatched)").c_str() : "");
  std::printf("  cpu    %-8s vs float64   %s%s\n", "host", format_error(l_host).c_str(),
              bad_host ? (" (" + std::to_string(bad_host) + " rows -inf/NaN mismatched)").c_str() : "");
  const bool ok = e.within(tol) && bad_dev == 0 && bad_host == 0 && l_dev <= lse_tol && l_host <= lse_tol;
  std::printf("tolerance out %.1e, lse %.1e: %s\n", tol, lse_tol, ok ? "ok" : "FAIL");
  const shape_t ls{B, H, Lq};
  if (outputs.has("--out"))
    outputs.write("--out", npy_image(npy_type::f32, q.shape, std::vector<float>(d.out.begin(), d.out.end())));
  if (outputs.has("--lse"))
    outputs.write("--lse", npy_image(npy_type::f32, ls, std::vector<float>(d.lse.begin(), d.lse.end())));
  outputs.commit();
  if (outputs.has("--out"))
    std::printf("wrote %s: float32 %s (the device's output)\n", args.str("--out").c_str(),
                shape_string(q.shape).c_str());
  if (outputs.has("--lse"))
    std::printf("wrote %s: float32 %s (the device's log-sum-exp)\n", args.str("--lse").c_str(),
                shape_string(ls).c_str());
  return ok ? 0 : 1;
}

}  // namespace tessel::tools
