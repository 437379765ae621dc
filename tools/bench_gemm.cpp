// tools/bench_gemm.cpp — `tessel-bench gemm`: tessel::gemm against the build's peer
// library, on the same inputs in the same process.
//
// One row per (input dtype, output dtype, transposes, batch, threads, shape).
// Operands are packed row-major buffers: A [batch, M, K] ([batch, K, M] when
// A is transposed), B [batch, K, N] ([batch, N, K]), C [batch, M, N] of the
// output type (--out f32: fp32, the default; --out input: the input type),
// batch strides M·K, K·N, M·N; batch 1 is a plain rank-2 problem. Fresh
// uniform [-1, 1) inputs, rotated over as many buffer sets as it takes for
// the bytes one contender touches in consecutive calls (A, B and its own C) to
// span env.rotate_bytes (at most 64 sets), the peer's calls half the sets
// away from tessel's (bench_ops.hpp, rotated_set), so that no call is timed
// from cache. One poisoned run of each on set 0 is checked: tessel against the
// peer (all entries), and both against float64 on 256 sampled entries; the
// threshold is --tol plus the output type's rounding (bf16 2^-8, fp16 2^-11).
// Then tessel and the peer are timed in interleaved rounds (bench_ops.hpp).
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

// A transpose combination: C = op(A)·op(B), op = identity or transpose of the stored row-major matrix.
struct trans2 {
  bool a = false, b = false;
  std::string label() const { return std::string(a ? "t" : "n") + (b ? "t" : "n"); }
  bool operator==(const trans2& o) const { return a == o.a && b == o.b; }
};

// --trans nn,nt,tn,tt | all (repeatable), or the older --trans-a / --trans-b flags (one combination).
std::vector<trans2> parse_trans(const parsed_args& args) {
  const bool ta = args.flag("--trans-a"), tb = args.flag("--trans-b");
  if (!args.has("--trans")) return {{ta, tb}};
  if (ta || tb) throw usage_error("give '--trans' or '--trans-a' / '--trans-b', not both");
  std::vector<trans2> out;
  auto add = [&](trans2 t) {
    if (std::find(out.begin(), out.end(), t) == out.end()) out.push_back(t);
  };
  for (const auto& list : args.all("--trans"))
    for (const auto& w : split(list, ',', "--trans")) {
      if (w == "all") {
        for (const trans2 t : {trans2{false, false}, trans2{false, true}, trans2{true, false}, trans2{true, true}})
          add(t);
      } else if (w.size() == 2 && (w[0] == 'n' || w[0] == 't') && (w[1] == 'n' || w[1] == 't')) {
        add({w[0] == 't', w[1] == 't'});
      } else {
        throw usage_error("'--trans' expects nn, nt, tn, tt or all (letters: A then B), got '" + w + "'");
      }
    }
  return out;
}

// --out f32|input[,...]: false = fp32 output, true = the input type.
std::vector<bool> parse_out(const parsed_args& args) {
  std::vector<bool> out;
  for (const auto& list : args.all("--out"))
    for (const auto& w : split(list, ',', "--out")) {
      bool input;
      if (w == "f32" || w == "fp32") input = false;
      else if (w == "input") input = true;
      else throw usage_error("'--out' expects f32 or input, got '" + w + "'");
      if (std::find(out.begin(), out.end(), input) == out.end()) out.push_back(input);
    }
  if (out.empty()) out = {false};
  return out;
}

std::vector<std::int64_t> parse_batches(const parsed_args& args) {
  std::vector<std::int64_t> out;
  for (const auto& list : args.all("--batch"))
    for (const auto& w : split(list, ',', "--batch")) {
      const std::int64_t b = parse_integer(w, "--batch", 1, 1 << 16);
      if (std::find(out.begin(), out.end(), b) == out.end()) out.push_back(b);
    }
  if (out.empty()) out = {1};
  return out;
}

// The unit roundoff of an output type: the largest relative error of rounding a float to it (RNE).
double unit_roundoff(dtype t) {
  return t == dtype::bf16 ? std::ldexp(1.0, -8) : t == dtype::f16 ? std::ldexp(1.0, -11) : 0.0;
}

// One rotating set: inputs on the device (and their host copies for set 0), one output per contender.
struct operand_set {
  std::unique_ptr<support::device_buffer> a, b, c_tessel, c_peer;
};

// ‖x − r‖/‖r‖ over entries sampled from a float64 product of the host inputs.
struct sampled_reference {
  std::vector<std::size_t> index;  // (z * M + i) * N + j
  std::vector<double> value;
};

sampled_reference sample_reference(const support::host_tensor& a, const support::host_tensor& b, const shape3& s,
                                   std::int64_t batch, trans2 tr, std::mt19937_64& rng) {
  sampled_reference r;
  const std::size_t total = std::size_t(batch * s.m * s.n), count = std::min<std::size_t>(256, total);
  const std::size_t sa = std::size_t(s.m * s.k), sb = std::size_t(s.k * s.n);
  std::uniform_int_distribution<std::size_t> pick(0, total - 1);
  for (std::size_t t = 0; t < count; ++t) {
    const std::size_t idx = count == total ? t : pick(rng);
    const std::int64_t z = std::int64_t(idx) / (s.m * s.n), ij = std::int64_t(idx) % (s.m * s.n);
    const std::int64_t i = ij / s.n, j = ij % s.n;
    double acc = 0;
    for (std::int64_t k = 0; k < s.k; ++k) {
      const double x = a.get(std::size_t(z) * sa + std::size_t(tr.a ? k * s.m + i : i * s.k + k));
      const double y = b.get(std::size_t(z) * sb + std::size_t(tr.b ? j * s.k + k : k * s.n + j));
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

// Poisons C (n elements of type t), runs, and returns C as floats (exact for every output type).
std::vector<float> download_poisoned_run(const device& dev, support::device_buffer& c, dtype t, std::size_t n,
                                         const std::function<void()>& run) {
  support::host_tensor h(t, n);
  support::fill_poison(h);
  c.upload(h.data(), h.bytes.size());
  run();
  support::synchronize(dev);
  c.download(h.data(), h.bytes.size());
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = h.get(i);
  return out;
}

// A packed row-major [rows, cols] matrix, or [batch, rows, cols] when batch > 1.
tensor_view matrix(void* p, dtype t, std::int64_t batch, std::int64_t rows, std::int64_t cols, const device& dev) {
  return batch > 1 ? tensor_view::contiguous(p, t, {batch, rows, cols}, dev)
                   : tensor_view::contiguous(p, t, {rows, cols}, dev);
}

std::string shape_string(const shape3& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.n) + "x" + std::to_string(s.k);
}

}  // namespace

int bench_gemm(const parsed_args& args, bench_env& env) {
  if (!args.positional.empty()) throw usage_error("unexpected argument '" + args.positional[0] + "'");
  const std::vector<shape3> shapes = parse_shapes(args);
  const std::vector<trans2> transes = parse_trans(args);
  const std::vector<bool> outs = parse_out(args);
  const std::vector<std::int64_t> batches = parse_batches(args);
  const std::string stream_choice = args.str("--stream", "default");
  if (stream_choice != "default" && stream_choice != "own")
    throw usage_error("'--stream' must be default or own, not '" + stream_choice + "'");
  if (stream_choice == "own" && !env.gpu) throw usage_error("'--stream own' applies to GPU builds only");
  env.require_device();
  bench_report& rep = *env.report;
  // --stream own: one non-blocking stream for tessel and the peer alike.
  struct own_stream {
    device dev;
    void* s = nullptr;
    ~own_stream() { support::destroy_stream(dev, s); }
  } queue{env.dev, stream_choice == "own" ? support::create_stream(env.dev) : nullptr};

  std::unique_ptr<bench::gemm_peer> peer = bench::make_gemm_peer();
  rep.add_meta("peer", peer ? peer->description() : std::string("none"));
  std::printf("peer: %s\n", peer ? peer->description().c_str() : "none (no peer library for this backend)");
  std::printf(
      "op: C[b] = op(A[b]) * op(B[b]) for b < batch, alpha 1, beta 0, fp32 accumulation; FLOPs = 2*batch*M*N*K.\n"
      "  Packed row-major buffers: A [batch,M,K] (trans n) or [batch,K,M] (t), B [batch,K,N] (n) or [batch,N,K] (t),\n"
      "  C [batch,M,N], batch strides M*K, K*N, M*N (batch 1: rank-2 views). Column 'trans': A's letter then B's,\n"
      "  as tessel's trans_a/trans_b and torch (nt = a @ b.T, both K-major); in cuBLAS's column-major terms the\n"
      "  peer computes C^T = op(B)^T op(A)^T, so 'nt' here is cuBLAS's TN. Column 'out': C's type (--out f32:\n"
      "  fp32; --out input: the input type, as torch.mm/bmm return); the peer writes the same type in its call.\n"
      "  Inputs uniform [-1, 1), fresh per buffer set, rotated over sets until the bytes one contender touches in\n"
      "  consecutive calls (A, B, its own C) span >= %.0f MiB (at most 64 sets; column 'sets'), the peer's calls\n"
      "  half the sets away from tessel's (neither reads inputs the other just read); C poisoned before the checked run.\n",
      env.rotate_bytes / (1 << 20));
  if (env.gpu) {
    const char* where = queue.s ? "one non-blocking stream of the bench's own, for tessel and the peer"
                                : "the legacy default stream, for tessel and the peer";
    std::printf("stream: %s\n", where);
    rep.add_meta("stream", where);
  }
  std::printf("seed: %llu (set TESSEL_SEED to repeat the inputs)\n", (unsigned long long)support::run_seed());
  std::printf("check: tessel vs peer over all of C, tessel and peer vs float64 on 256 sampled entries; FAIL above\n"
              "  tol + u(out) vs float64 and tol + 2u(out) vs the peer, tol = %.0e, u = output rounding: fp32 0,\n"
              "  bf16 2^-8, fp16 2^-11 (a row FAILs if tessel or the peer misses it; JSON tessel_check/peer_check)\n\n",
              env.tol);
  rep.begin_table({{"batch", "batch", "%.0f"},
                   {"shape", "shape", "%s", 16},
                   {"dtype", "dtype"},
                   {"out_dtype", "out"},
                   {"trans", "trans"},
                   {"threads", "thr", "%.0f"},
                   {"tessel_ms", "tessel ms", "%.3f", 10},
                   {"tessel_tflops", "TFLOP/s", "%.3f"},
                   {"peer", "peer", "%s", 44},
                   {"peer_ms", "peer ms", "%.3f", 10},
                   {"peer_tflops", "TFLOP/s", "%.3f"},
                   {"ratio", "tessel/peer", "%.3f"},
                   {"err_vs_peer", "err vs peer", "%.2e"},
                   {"err_vs_fp64", "err vs fp64", "%.2e"},
                   {"peer_err_vs_fp64", "peer vs fp64", "%.2e"},
                   {"sets", "sets", "%.0f"},
                   {"check", "check"}});

  std::mt19937_64 rng(support::run_seed());
  rep.add_meta("seed", std::to_string(support::run_seed()));  // as text: JSON numbers are doubles
  rep.add_meta("gemm_layout",
               "packed row-major; trans letters A then B: A [batch,M,K] (n) or [batch,K,M] (t), B [batch,K,N] (n) or "
               "[batch,N,K] (t), C [batch,M,N]; nt = torch a @ b.T = cuBLAS TN on (B, A); batch 1 = rank-2 views");
  rep.add_meta("gemm_check", "fail above tol + u(out) vs float64 (tessel and peer) and tol + 2u(out) tessel vs peer; "
                             "u: fp32 0, bf16 2^-8, fp16 2^-11");
  bool all_ok = true;
  // The output types per input type: --out input with fp32 inputs is fp32 output (one row, not two).
  auto out_types = [&](dtype t) {
    std::vector<dtype> v;
    for (const bool input : outs) {
      const dtype o = input ? t : dtype::f32;
      if (std::find(v.begin(), v.end(), o) == v.end()) v.push_back(o);
    }
    return v;
  };
  std::size_t configs = 0, config = 0;
  for (const dtype t : env.dtypes)
    configs += out_types(t).size() * transes.size() * batches.size() * env.threads.size() * shapes.size();
  for (const dtype t : env.dtypes)
    for (const dtype to : out_types(t))
      for (const trans2 tr : transes)
        for (const std::int64_t batch : batches)
          for (const int threads : env.threads)
            for (const shape3& s : shapes) {
              ++config;
              char label[200];
              std::snprintf(label, sizeof label, "[%zu/%zu] gemm %s%s %s->%s %s%s", config, configs,
                            batch > 1 ? (std::to_string(batch) + " x ").c_str() : "", shape_string(s).c_str(),
                            dtype_name(t), dtype_name(to), tr.label().c_str(),
                            env.gpu ? "" : (" " + std::to_string(threads) + " threads").c_str());
              rep.progress(std::string(label) + ": preparing inputs", true);
              const std::size_t na = std::size_t(batch * s.m * s.k), nb = std::size_t(batch * s.k * s.n),
                                nc = std::size_t(batch * s.m * s.n);
              const double touched = double(na + nb) * dtype_size(t) + double(nc) * dtype_size(to);
              const int nsets = int(std::clamp(std::ceil(env.rotate_bytes / touched), 1.0, 64.0));
              std::vector<operand_set> sets(static_cast<std::size_t>(nsets));
              support::host_tensor a0, b0;
              for (int i = 0; i < nsets; ++i) {
                support::host_tensor ha(t, na), hb(t, nb);
                support::fill_random(ha, rng);
                support::fill_random(hb, rng);
                auto& st = sets[std::size_t(i)];
                st.a = std::make_unique<support::device_buffer>(env.dev, ha.bytes.size());
                st.b = std::make_unique<support::device_buffer>(env.dev, hb.bytes.size());
                st.c_tessel = std::make_unique<support::device_buffer>(env.dev, nc * dtype_size(to));
                if (peer) st.c_peer = std::make_unique<support::device_buffer>(env.dev, nc * dtype_size(to));
                map_pages(env.dev, *st.c_tessel);
                if (peer) map_pages(env.dev, *st.c_peer);
                st.a->upload(ha.data(), ha.bytes.size());
                st.b->upload(hb.data(), hb.bytes.size());
                if (i == 0) {
                  a0 = std::move(ha);
                  b0 = std::move(hb);
                }
              }
              const std::int64_t ar = tr.a ? s.k : s.m, ac = tr.a ? s.m : s.k, br = tr.b ? s.n : s.k,
                                 bc = tr.b ? s.k : s.n;
              const gemm_options opt{1.0f, 0.0f, tr.a, tr.b};
              const stream str = env.gpu ? stream::gpu(queue.s) : stream::cpu(threads);
              std::size_t next_t = 0, next_p = 0;
              auto run_tessel = [&](std::size_t i) {
                auto& st = sets[i];
                gemm(matrix(st.a->data(), t, batch, ar, ac, env.dev), matrix(st.b->data(), t, batch, br, bc, env.dev),
                     matrix(st.c_tessel->data(), to, batch, s.m, s.n, env.dev), opt, str);
              };
              const bench::gemm_problem pp{int(s.m), int(s.n), int(s.k), t, to, tr.a, tr.b, int(batch), threads, queue.s};
              if (peer) {
                std::vector<bench::gemm_operands> ops;
                for (auto& st : sets) ops.push_back({st.a->data(), st.b->data(), st.c_peer->data()});
                peer->prepare(pp, ops);
              }

              // Correctness, once, on set 0.
              rep.progress(std::string(label) + ": checking");
              const double u = unit_roundoff(to), tol = env.tol + u, tol_peer = env.tol + 2 * u;
              const std::vector<float> out_t =
                  download_poisoned_run(env.dev, *sets[0].c_tessel, to, nc, [&] { run_tessel(0); });
              const sampled_reference ref = sample_reference(a0, b0, s, batch, tr, rng);
              const double err_fp64 = sampled_error(ref, out_t);
              double err_peer = NAN, peer_err_fp64 = NAN;
              if (peer) {
                const std::vector<float> out_p =
                    download_poisoned_run(env.dev, *sets[0].c_peer, to, nc, [&] { peer->run(0); });
                std::vector<double> dt(out_t.begin(), out_t.end()), dp(out_p.begin(), out_p.end());
                err_peer = support::relative_error(dp, dt);
                peer_err_fp64 = sampled_error(ref, out_p);
              }
              const bool tessel_ok = err_fp64 <= tol && (!peer || err_peer <= tol_peer);
              const bool peer_ok = !peer || peer_err_fp64 <= tol;
              const bool ok = tessel_ok && peer_ok;
              all_ok = all_ok && ok;

              // Timing.
              contender ct, cp;
              ct.call = [&] { run_tessel(rotated_set(next_t++, sets.size(), false)); };
              cp.call = [&] { peer->run(rotated_set(next_p++, sets.size(), true)); };
              std::vector<contender*> cs{&ct};
              if (peer) cs.push_back(&cp);
              rep.progress(std::string(label) + ": warm-up");
              for (contender* c : cs) calibrate(env.dev, *c, env.min_sample_ms);
              interleave(env.dev, cs, env.repeat, [&](int r) {
                rep.progress(std::string(label) + ": round " + std::to_string(r + 1) + "/" +
                             std::to_string(env.repeat));
              });
              const double flops = 2.0 * double(batch) * double(s.m) * double(s.n) * double(s.k);
              const double tms = median(ct.samples), tt = flops / (tms * 1e-3) / 1e12;
              record row{{"op", "gemm"}, {"shape", shape_string(s)}, {"m", (long long)s.m}, {"n", (long long)s.n},
                         {"k", (long long)s.k}, {"batch", (long long)batch}, {"dtype", dtype_name(t)},
                         {"dtype_in", dtype_name(t)}, {"out_dtype", dtype_name(to)}, {"dtype_out", dtype_name(to)},
                         {"trans", tr.label()}, {"trans_a", tr.a}, {"trans_b", tr.b},
                         {"a_major", tr.a ? "m" : "k"}, {"b_major", tr.b ? "k" : "n"},
                         {"flops", flops}, {"threads", env.gpu ? value() : value(threads)}, {"tessel_ms", tms},
                         {"tessel_tflops", tt},
                         {"tessel_min_ms", *std::min_element(ct.samples.begin(), ct.samples.end())},
                         {"tessel_max_ms", *std::max_element(ct.samples.begin(), ct.samples.end())},
                         {"tessel_calls_per_sample", ct.inner}};
              if (peer) {
                const double pms = median(cp.samples), pt = flops / (pms * 1e-3) / 1e12;
                row.insert(row.end(), {{"peer", peer->name(pp)}, {"peer_call", peer->call(pp)}, {"peer_ms", pms},
                                       {"peer_tflops", pt}, {"ratio", tt / pt},
                                       {"peer_min_ms", *std::min_element(cp.samples.begin(), cp.samples.end())},
                                       {"peer_max_ms", *std::max_element(cp.samples.begin(), cp.samples.end())},
                                       {"peer_calls_per_sample", cp.inner}, {"err_vs_peer", err_peer},
                                       {"peer_err_vs_fp64", peer_err_fp64}});
              } else {
                row.insert(row.end(), {{"peer", "none"}, {"peer_ms", value()}, {"peer_tflops", value()},
                                       {"ratio", value()}, {"err_vs_peer", value()}});
              }
              row.insert(row.end(), {{"err_vs_fp64", err_fp64}, {"sampled_entries", (long long)ref.index.size()},
                                     {"tol", tol}, {"tol_vs_peer", tol_peer},
                                     {"tessel_check", tessel_ok ? "ok" : "FAIL"},
                                     {"peer_check", peer ? value(peer_ok ? "ok" : "FAIL") : value()},
                                     {"sets", nsets}, {"rounds", env.repeat}, {"check", ok ? "ok" : "FAIL"}});
              rep.add_row(std::move(row));
            }
  rep.end_progress();
  return all_ok ? 0 : 1;
}

}  // namespace tessel::tools
