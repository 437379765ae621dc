// tools/check_gemm.cpp — `tessel-check gemm`: one product on the device and on the
// CPU backend, both against a float64 reference of the same rounded inputs.
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
#include "tessel/tessel.hpp"

namespace tessel::tools {

const std::vector<option_spec> check_gemm_options = {
    {"--a", true},     {"--b", true},     {"--c", true},       {"--alpha", true},   {"--beta", true},
    {"--trans-a", false}, {"--trans-b", false}, {"--dtype", true}, {"--out", true}, {"--m", true},
    {"--n", true},     {"--k", true},     {"--batch", true},   {"--seed", true},    {"--tol", true},
    {"--threads", true}, {"--allow-nonfinite", false}};

namespace {

// An operand: its values (already rounded to its type), shape, and where it came from.
tensor_view view_of(void* p, dtype t, const shape_t& shape, const device& dev) {
  tensor_view v;
  v.data = p;
  v.type = t;
  v.dev = dev;
  v.rank = int(shape.size());
  std::int64_t st = 1;
  for (int d = v.rank - 1; d >= 0; --d) {
    v.shape[d] = shape[std::size_t(d)];
    v.stride[d] = st;
    st *= shape[std::size_t(d)];
  }
  return v;
}

operand from_file(const std::string& path, dtype t, const char* role) {
  return read_operand(path, t, role, {2, 3}, "2-D [rows, cols] or 3-D [batch, rows, cols]");
}

std::string describe(const operand& o, dtype t) {
  return o.origin + " " + shape_string(o.shape) + " as " + dtype_name(t);
}

// Runs the product on `dev` and returns C (fp32) as doubles; C starts poisoned when beta = 0.
std::vector<double> run_on(const device& dev, const operand& a, const operand& b, const operand* c,
                           const shape_t& out_shape, const gemm_options& opt, int threads, std::vector<float>& out) {
  support::host_tensor cd(dtype::f32, 0);
  std::size_t n = 1;
  for (auto d : out_shape) n *= std::size_t(d);
  if (c) cd = c->data;
  else {
    cd = support::host_tensor(dtype::f32, n);
    support::fill_poison(cd);
  }
  support::device_buffer ba(dev, a.data.bytes.size()), bb(dev, b.data.bytes.size()), bc(dev, cd.bytes.size());
  ba.upload(a.data.data(), a.data.bytes.size());
  bb.upload(b.data.data(), b.data.bytes.size());
  bc.upload(cd.data(), cd.bytes.size());
  const stream s = dev.kind == device_kind::host ? stream::cpu(threads) : stream::gpu(nullptr);
  gemm(view_of(ba.data(), a.data.type, a.shape, dev), view_of(bb.data(), b.data.type, b.shape, dev),
       view_of(bc.data(), dtype::f32, out_shape, dev), opt, s);
  support::synchronize(dev);
  bc.download(cd.data(), cd.bytes.size());
  out.resize(n);
  std::vector<double> r(n);
  for (std::size_t i = 0; i < n; ++i) r[i] = out[i] = cd.get(i);
  return r;
}

}  // namespace

int check_gemm(const parsed_args& args) {
  if (!args.positional.empty()) throw usage_error("unexpected argument '" + args.positional[0] + "'");
  const dtype t = parse_dtype(args.str("--dtype", "fp32"));
  gemm_options opt;
  opt.alpha = float(args.number("--alpha", 1.0));
  opt.beta = float(args.number("--beta", 0.0));
  opt.trans_a = args.flag("--trans-a");
  opt.trans_b = args.flag("--trans-b");
  const double tol = args.number("--tol", default_gemm_tol);
  const int threads = int(args.integer("--threads", 0, 0, 4096));
  const bool files = args.has("--a") || args.has("--b");
  const bool sizes = args.has("--m") || args.has("--n") || args.has("--k") || args.has("--batch");
  if (files && sizes) throw usage_error("give either --a/--b files or --m/--n/--k sizes, not both");
  if (!files && !sizes) throw usage_error("give --a A.npy --b B.npy, or --m M --n N --k K");
  if (files && !(args.has("--a") && args.has("--b"))) throw usage_error("--a and --b go together");
  if (sizes && !(args.has("--m") && args.has("--n") && args.has("--k")))
    throw usage_error("--m, --n and --k go together");
  if (sizes && args.has("--c")) throw usage_error("--c needs --a/--b files (random mode draws C itself)");
  if (files && opt.beta != 0.0f && !args.has("--c")) throw usage_error("--beta is not 0 but no --c file was given");
  if (files && args.has("--seed")) throw usage_error("--seed applies to random inputs only");
  const bool allow_nonfinite = args.flag("--allow-nonfinite");
  output_set outputs;  // checked now, written at the end
  if (args.has("--out")) outputs.add("--out", args.str("--out"));

  operand a, b, c;
  bool have_c = false;
  std::uint64_t seed = 0;
  if (files) {
    a = from_file(args.str("--a"), t, "A");
    b = from_file(args.str("--b"), t, "B");
    if (args.has("--c")) {
      c = from_file(args.str("--c"), dtype::f32, "C");
      have_c = true;
    }
  } else {
    constexpr std::int64_t lim = 1 << 20;
    const std::int64_t M = args.integer("--m", 0, 0, lim), N = args.integer("--n", 0, 0, lim),
                       K = args.integer("--k", 0, 0, lim), Z = args.integer("--batch", 0, 1, 4096);
    check_extent("--batch x --m x --k", {Z, M, K});
    check_extent("--batch x --k x --n", {Z, K, N});
    check_extent("--batch x --m x --n", {Z, M, N});
    seed = std::uint64_t(args.integer("--seed", std::int64_t(support::run_seed() & 0x7fffffff), 0,
                                      std::numeric_limits<std::int64_t>::max()));
    std::mt19937_64 rng(seed);
    auto shp = [&](std::int64_t r, std::int64_t q) { return Z ? shape_t{Z, r, q} : shape_t{r, q}; };
    a = random_operand(opt.trans_a ? shp(K, M) : shp(M, K), t, rng);
    b = random_operand(opt.trans_b ? shp(N, K) : shp(K, N), t, rng);
    if (opt.beta != 0.0f) {
      c = random_operand(shp(M, N), dtype::f32, rng);
      have_c = true;
    }
  }

  // Shapes: op(A) [M, K], op(B) [K, N], batch from the rank-3 operands.
  auto rows = [](const operand& o, bool tr) { return o.shape[o.shape.size() - (tr ? 1 : 2)]; };
  auto cols = [](const operand& o, bool tr) { return o.shape[o.shape.size() - (tr ? 2 : 1)]; };
  auto batch = [](const operand& o) { return o.shape.size() == 3 ? o.shape[0] : std::int64_t(1); };
  const std::int64_t M = rows(a, opt.trans_a), K = cols(a, opt.trans_a), N = cols(b, opt.trans_b);
  if (rows(b, opt.trans_b) != K)
    throw input_error(b.origin + ": " + (opt.trans_b ? "Bᵀ" : "B") + " has " + std::to_string(rows(b, opt.trans_b)) +
                      " rows, expected K = " + std::to_string(K) + " (the " + (opt.trans_a ? "rows" : "columns") +
                      " of " + a.origin + " " + shape_string(a.shape) + ")");
  if (batch(a) != 1 && batch(b) != 1 && batch(a) != batch(b))
    throw input_error(b.origin + ": batch " + std::to_string(batch(b)) + " does not match batch " +
                      std::to_string(batch(a)) + " of " + a.origin + " (expected equal, or one of them 1)");
  const bool batched = a.shape.size() == 3 || b.shape.size() == 3;
  const std::int64_t Z = batch(a) == 1 ? batch(b) : batch(a);  // a batch of 1 broadcasts (also against 0)
  const shape_t out_shape = batched ? shape_t{Z, M, N} : shape_t{M, N};
  if (have_c && c.shape != out_shape)
    throw input_error(c.origin + ": C has shape " + shape_string(c.shape) + ", expected " + shape_string(out_shape) +
                      " (M from A, N from B" + (batched ? ", batch from A/B)" : ")"));
  check_extent("the output " + shape_string(out_shape) + " (from " + a.origin + " and " + b.origin + ")",
               {Z, M, N});
  const bool c_unread = have_c && opt.beta == 0.0f;
  if (c_unread) have_c = false;  // C is not read: the output starts poisoned instead

  const device dev = support::default_device();
  if (!support::device_available())
    throw input_error(std::string("this build's device (") + device_name(dev.kind) +
                      ") is not available on this machine: " + support::device_description());

  std::printf("tessel-check gemm: M=%lld N=%lld K=%lld%s, inputs %s (rounded to it), accumulate fp32, output fp32\n",
              (long long)M, (long long)N, (long long)K, batched ? (", batch=" + std::to_string(Z)).c_str() : "",
              dtype_name(t));
  std::printf("  alpha=%g beta=%g trans_a=%s trans_b=%s%s\n", double(opt.alpha), double(opt.beta),
              opt.trans_a ? "yes" : "no", opt.trans_b ? "yes" : "no",
              files ? "" : (", random inputs in [-1, 1), seed " + std::to_string(seed)).c_str());
  std::printf("  A: %s\n  B: %s\n", describe(a, t).c_str(), describe(b, t).c_str());
  if (have_c) std::printf("  C: %s\n", describe(c, dtype::f32).c_str());
  if (c_unread) std::printf("  note: beta = 0, so %s is not read (pass --beta to use it)\n", c.origin.c_str());
  print_input_notes({&a, &b, have_c ? &c : nullptr}, allow_nonfinite);
  const std::string dev_label = std::string(device_name(dev.kind)) + ":" + std::to_string(dev.index);
  std::printf("  backends: %s; device %s (%s); cpu isa %s\n", built_backends(), dev_label.c_str(),
              support::device_description().c_str(), cpu_isa());
  if (dev.kind == device_kind::host)
    std::printf("  (CPU-only build: the device run and the CPU run use the same backend)\n");
  std::fflush(stdout);

  const operand* cp = have_c ? &c : nullptr;
  std::vector<float> dev_out, host_out;
  const std::vector<double> d = run_on(dev, a, b, cp, out_shape, opt, threads, dev_out);
  const std::vector<double> h = run_on(device::host(), a, b, cp, out_shape, opt, threads, host_out);
  auto host_view = [&](const operand& o, dtype ty) {
    return view_of(const_cast<void*>(o.data.data()), ty, o.shape, device::host());
  };
  support::host_tensor dummy(dtype::f32, 0);
  const tensor_view cv = have_c ? host_view(c, dtype::f32) : view_of(dummy.data(), dtype::f32, out_shape, device::host());
  const std::vector<double> ref = support::reference_gemm(host_view(a, t), host_view(b, t), cv, opt);

  const result_errors e = compare_results(ref, d, h, allow_nonfinite);
  std::printf("relative Frobenius error ||X - R||/||R|| (R = float64 product of the rounded inputs)%s:\n",
              allow_nonfinite ? ", over the elements finite in both" : "");
  print_result_errors(e, dev_label);
  const bool ok = e.within(tol);
  std::printf("tolerance %.1e%s: %s\n", tol, allow_nonfinite ? ", NaN/inf positions as float64's" : "",
              ok ? "ok" : "FAIL");
  if (outputs.has("--out")) {
    outputs.write("--out", npy_image(npy_type::f32, out_shape, dev_out));
    outputs.commit();
    std::printf("wrote %s: float32 %s (the device's output)\n", args.str("--out").c_str(),
                shape_string(out_shape).c_str());
  }
  return ok ? 0 : 1;
}

}  // namespace tessel::tools
