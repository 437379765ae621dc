// tools/bench_gemm.cpp — `tessel-bench gemm`: tessel::gemm against the build's peer
// library, on the same inputs in the same process.
//
// Per (dtype, threads, shape): fresh uniform [-1, 1) inputs, rotated over as
// many buffer sets as it takes to span env.rotate_bytes (at most 64), so that
// small shapes are not timed from cache; C is fp32 for both. One poisoned run
// of each on set 0 is checked: tessel against the peer (all entries) and
// both against float64 on 256 sampled entries. Then tessel and the peer are
// timed in interleaved rounds (bench_ops.hpp).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>

#include "bench_ops.hpp"
#include "device_buffer.hpp"
#include "host_tensor.hpp"
#include "peer.hpp"
#include "tessel/tessel.hpp"

namespace tessel::tools {
namespace {

struct shape3 {
  std::int64_t m, n, k;
};

std::vector<shape3> parse_shapes(const parsed_args& args) {
  std::vector<shape3> out;
  constexpr std::int64_t lim = 1 << 17;
  for (const auto& list : args.all("--shapes"))
    for (const auto& w : split(list, ',', "--shapes")) {
      const std::int64_t s = parse_integer(w, "--shapes", 1, lim);
      out.push_back({s, s, s});
    }
  for (const auto& w : args.all("--shape")) {
    const auto parts = split(w, 'x', "--shape");
    if (parts.size() != 3) throw usage_error("'--shape' expects MxNxK, got '" + w + "'");
    out.push_back({parse_integer(parts[0], "--shape M", 1, lim), parse_integer(parts[1], "--shape N", 1, lim),
                   parse_integer(parts[2], "--shape K", 1, lim)});
  }
  if (out.empty()) out = {{1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096}};
  return out;
}

// One rotating set: inputs on the device (and their host copies for set 0), two fp32 outputs.
struct operand_set {
  std::unique_ptr<support::device_buffer> a, b, c_tessel, c_peer;
};

// ‖x − r‖/‖r‖ over entries sampled from a float64 product of the host inputs.
struct sampled_reference {
  std::vector<std::size_t> index;  // i * N + j
  std::vector<double> value;
};

sampled_reference sample_reference(const support::host_tensor& a, const support::host_tensor& b, const shape3& s,
                                   bool ta, bool tb, std::mt19937_64& rng) {
  sampled_reference r;
  const std::size_t total = std::size_t(s.m * s.n), count = std::min<std::size_t>(256, total);
  std::uniform_int_distribution<std::size_t> pick(0, total - 1);
  for (std::size_t t = 0; t < count; ++t) {
    const std::size_t idx = count == total ? t : pick(rng);
    const std::int64_t i = std::int64_t(idx) / s.n, j = std::int64_t(idx) % s.n;
    double acc = 0;
    for (std::int64_t k = 0; k < s.k; ++k) {
      const double x = a.get(std::size_t(ta ? k * s.m + i : i * s.k + k));
      const double y = b.get(std::size_t(tb ? j * s.k + k : k * s.n + j));
      acc += x * y;
    }
    r.index.push_back(idx);
    r.value.push_back(acc);
  }
  return r;
}

double sampled_error(const sampled_reference& r, const std::vector<float>& out) {
  double num = 0, den = 0;
  for (std::size_t t = 0; t < r.index.size(); ++t) {
    const double x = out[r.index[t]];
    if (!std::isfinite(x)) return INFINITY;
    num += (x - r.value[t]) * (x - r.value[t]);
    den += r.value[t] * r.value[t];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

std::vector<float> download_poisoned_run(const device& dev, support::device_buffer& c, std::size_t n,
                                         const std::function<void()>& run) {
  support::host_tensor h(dtype::f32, n);
  support::fill_poison(h);
  c.upload(h.data(), h.bytes.size());
  run();
  support::synchronize(dev);
  c.download(h.data(), h.bytes.size());
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = h.get(i);
  return out;
}

tensor_view matrix(void* p, dtype t, std::int64_t rows, std::int64_t cols, const device& dev) {
  return tensor_view::contiguous(p, t, {rows, cols}, dev);
}

}  // namespace

int bench_gemm(const parsed_args& args, bench_env& env) {
  if (!args.positional.empty()) throw usage_error("unexpected argument '" + args.positional[0] + "'");
  const std::vector<shape3> shapes = parse_shapes(args);
  const bool ta = args.flag("--trans-a"), tb = args.flag("--trans-b");
  env.require_device();
  bench_report& rep = *env.report;

  std::unique_ptr<bench::gemm_peer> peer = bench::make_gemm_peer();
  rep.add_meta("peer", peer ? peer->description() : std::string("none"));
  std::printf("peer: %s\n", peer ? peer->description().c_str() : "none (no peer library for this backend)");
  std::printf("op: C[M,N] (fp32) = %s * %s, FLOPs = 2*M*N*K; inputs uniform [-1, 1), fresh per buffer set, rotated over\n"
              "  sets spanning >= %.0f MiB (at most 64 sets; column 'sets'); C poisoned before the checked run.\n",
              ta ? "A^T" : "A", tb ? "B^T" : "B", env.rotate_bytes / (1 << 20));
  std::printf("seed: %llu (set TESSEL_SEED to repeat the inputs)\n", (unsigned long long)support::run_seed());
  std::printf("check: tessel vs peer over all of C, and tessel vs float64 on 256 sampled entries; FAIL above %.0e\n\n",
              env.tol);
  rep.begin_table({{"shape", "shape", "%s", 16},
                   {"dtype", "dtype"},
                   {"threads", "thr", "%.0f"},
                   {"tessel_ms", "tessel ms", "%.3f", 10},
                   {"tessel_tflops", "TFLOP/s", "%.3f"},
                   {"peer", "peer", "%s", 26},
                   {"peer_ms", "peer ms", "%.3f", 10},
                   {"peer_tflops", "TFLOP/s", "%.3f"},
                   {"ratio", "tessel/peer", "%.3f"},
                   {"err_vs_peer", "err vs peer", "%.2e"},
                   {"err_vs_fp64", "err vs fp64", "%.2e"},
                   {"sets", "sets", "%.0f"},
                   {"check", "check"}});

  std::mt19937_64 rng(support::run_seed());
  rep.add_meta("seed", std::to_string(support::run_seed()));  // as text: JSON numbers are doubles
  bool all_ok = true;
  const std::size_t configs = env.dtypes.size() * env.threads.size() * shapes.size();
  std::size_t config = 0;
  for (const dtype t : env.dtypes)
    for (const int threads : env.threads)
      for (const shape3& s : shapes) {
        ++config;
        char label[160];
        std::snprintf(label, sizeof label, "[%zu/%zu] gemm %lldx%lldx%lld %s%s", config, configs, (long long)s.m,
                      (long long)s.n, (long long)s.k, dtype_name(t),
                      env.gpu ? "" : (" " + std::to_string(threads) + " threads").c_str());
        rep.progress(std::string(label) + ": preparing inputs", true);
        const std::size_t na = std::size_t(s.m * s.k), nb = std::size_t(s.k * s.n), nc = std::size_t(s.m * s.n);
        const double set_bytes = double(na + nb) * dtype_size(t) + 2.0 * double(nc) * 4;
        const int nsets = int(std::clamp(std::ceil(env.rotate_bytes / set_bytes), 1.0, 64.0));
        std::vector<operand_set> sets(static_cast<std::size_t>(nsets));
        support::host_tensor a0, b0;
        for (int i = 0; i < nsets; ++i) {
          support::host_tensor ha(t, na), hb(t, nb);
          support::fill_random(ha, rng);
          support::fill_random(hb, rng);
          auto& st = sets[std::size_t(i)];
          st.a = std::make_unique<support::device_buffer>(env.dev, ha.bytes.size());
          st.b = std::make_unique<support::device_buffer>(env.dev, hb.bytes.size());
          st.c_tessel = std::make_unique<support::device_buffer>(env.dev, nc * 4);
          st.c_peer = std::make_unique<support::device_buffer>(env.dev, nc * 4);
          st.a->upload(ha.data(), ha.bytes.size());
          st.b->upload(hb.data(), hb.bytes.size());
          if (i == 0) {
            a0 = std::move(ha);
            b0 = std::move(hb);
          }
        }
        const std::int64_t ar = ta ? s.k : s.m, ac = ta ? s.m : s.k, br = tb ? s.n : s.k, bc = tb ? s.k : s.n;
        const gemm_options opt{1.0f, 0.0f, ta, tb};
        const stream str = env.gpu ? stream::gpu(nullptr) : stream::cpu(threads);
        std::size_t next_t = 0, next_p = 0;
        auto run_tessel = [&](std::size_t i) {
          auto& st = sets[i];
          gemm(matrix(st.a->data(), t, ar, ac, env.dev), matrix(st.b->data(), t, br, bc, env.dev),
               matrix(st.c_tessel->data(), dtype::f32, s.m, s.n, env.dev), opt, str);
        };
        if (peer) {
          std::vector<bench::gemm_operands> ops;
          for (auto& st : sets) ops.push_back({st.a->data(), st.b->data(), static_cast<float*>(st.c_peer->data())});
          peer->prepare({int(s.m), int(s.n), int(s.k), t, ta, tb, threads}, ops);
        }

        // Correctness, once, on set 0.
        rep.progress(std::string(label) + ": checking");
        const std::vector<float> out_t =
            download_poisoned_run(env.dev, *sets[0].c_tessel, nc, [&] { run_tessel(0); });
        const sampled_reference ref = sample_reference(a0, b0, s, ta, tb, rng);
        const double err_fp64 = sampled_error(ref, out_t);
        double err_peer = NAN, peer_err_fp64 = NAN;
        if (peer) {
          const std::vector<float> out_p =
              download_poisoned_run(env.dev, *sets[0].c_peer, nc, [&] { peer->run(0); });
          std::vector<double> dt(out_t.begin(), out_t.end()), dp(out_p.begin(), out_p.end());
          err_peer = support::relative_error(dp, dt);
          peer_err_fp64 = sampled_error(ref, out_p);
        }
        const bool ok = err_fp64 <= env.tol && (!peer || err_peer <= env.tol);
        all_ok = all_ok && ok;

        // Timing.
        contender ct, cp;
        ct.call = [&] { run_tessel(next_t++ % sets.size()); };
        cp.call = [&] { peer->run(next_p++ % sets.size()); };
        std::vector<contender*> cs{&ct};
        if (peer) cs.push_back(&cp);
        rep.progress(std::string(label) + ": warm-up");
        for (contender* c : cs) calibrate(env.dev, *c, env.min_sample_ms);
        interleave(env.dev, cs, env.repeat, [&](int r) {
          rep.progress(std::string(label) + ": round " + std::to_string(r + 1) + "/" + std::to_string(env.repeat));
        });
        const double flops = 2.0 * double(s.m) * double(s.n) * double(s.k);
        const double tms = median(ct.samples), tt = flops / (tms * 1e-3) / 1e12;
        record row{{"op", "gemm"}, {"shape", std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k)},
                   {"m", (long long)s.m}, {"n", (long long)s.n}, {"k", (long long)s.k}, {"dtype", dtype_name(t)},
                   {"out_dtype", "fp32"}, {"trans_a", ta}, {"trans_b", tb},
                   {"threads", env.gpu ? value() : value(threads)}, {"tessel_ms", tms}, {"tessel_tflops", tt},
                   {"tessel_min_ms", *std::min_element(ct.samples.begin(), ct.samples.end())},
                   {"tessel_max_ms", *std::max_element(ct.samples.begin(), ct.samples.end())},
                   {"tessel_calls_per_sample", ct.inner}};
        if (peer) {
          const double pms = median(cp.samples), pt = flops / (pms * 1e-3) / 1e12;
          row.insert(row.end(), {{"peer", peer->name(t)}, {"peer_ms", pms}, {"peer_tflops", pt}, {"ratio", tt / pt},
                                 {"peer_min_ms", *std::min_element(cp.samples.begin(), cp.samples.end())},
                                 {"peer_max_ms", *std::max_element(cp.samples.begin(), cp.samples.end())},
                                 {"peer_calls_per_sample", cp.inner}, {"err_vs_peer", err_peer},
                                 {"peer_err_vs_fp64", peer_err_fp64}});
        } else {
          row.insert(row.end(), {{"peer", "none"}, {"peer_ms", value()}, {"peer_tflops", value()}, {"ratio", value()},
                                 {"err_vs_peer", value()}});
        }
        row.insert(row.end(), {{"err_vs_fp64", err_fp64}, {"sets", nsets}, {"rounds", env.repeat},
                               {"check", ok ? "ok" : "FAIL"}});
        rep.add_row(std::move(row));
      }
  rep.end_progress();
  return all_ok ? 0 : 1;
}

}  // namespace tessel::tools
