// tools/bench_attention.cpp — `tessel-bench attention`: tessel::attention against the
// build's attention peer (an unfused OpenBLAS attention on the CPU, none on GPUs),
// on the same inputs in the same process.
//
// Per (dtype, threads, head_dim, seq, causal): q, k, v [batch, seq, heads|kv_heads,
// head_dim] uniform [-1, 1) rounded to the dtype, fresh per buffer set, rotated
// over as many sets as span env.rotate_bytes (at most 64), the peer's calls half
// the sets away from tessel's (bench_ops.hpp, rotated_set). tessel's out has the
// input type, the peer's is fp32 (from the same values widened). One poisoned
// run of each on set 0 is checked: tessel against the peer (all of out) and
// both against float64 (support::reference_attention) on sampled query rows.
// tessel's first run is also measured for peak RSS growth (Linux: VmHWM reset
// through /proc/self/clear_refs). Then both are timed in interleaved rounds;
// a call that took >= 100 ms in its checked run is not run again to warm up.
// The peer needs q_len·kv_len floats (one head at a time): above --peer-max-gib
// it is skipped for that row and the row says so; tessel still runs.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>
#include <sstream>

#include "bench_ops.hpp"
#include "check.hpp"
#include "device_buffer.hpp"
#include "host_tensor.hpp"
#include "attention_peer.hpp"
#include "reference_attention.hpp"
#include "tessel/tessel.hpp"

namespace tessel::tools {
namespace {

constexpr std::size_t sampled_rows = 32;
constexpr double long_call_ms = 100.0;

std::vector<std::int64_t> int_list(const parsed_args& args, const char* name, const std::string& fallback,
                                   std::int64_t lo, std::int64_t hi) {
  std::vector<std::int64_t> out;
  for (const auto& w : split(args.str(name, fallback), ',', name)) out.push_back(parse_integer(w, name, lo, hi));
  return out;
}

// Resident memory from /proc/self/status in KiB; -1 where unavailable.
long long status_kib(const char* key) {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind(key, 0) == 0) {
      std::istringstream in(line.substr(std::string(key).size()));
      long long v = -1;
      in >> v;
      return v;
    }
  return -1;
}
bool reset_peak_rss() {
  std::ofstream f("/proc/self/clear_refs");
  f << "5";
  f.flush();
  return bool(f);
}

struct bshd_set {
  std::unique_ptr<support::device_buffer> q, k, v, out, out_peer;
};

struct problem {
  std::int64_t batch, q_len, kv_len, heads, kv_heads, head_dim;
  bool causal;
  float scale;
  dtype type;
};

// float64 rows (b, i, h) of the reference: `row` = (b·q_len + i)·heads + h, `value` head_dim each.
struct sampled_reference {
  std::vector<std::size_t> row;
  std::vector<double> value;
};

sampled_reference sample_reference(const problem& p, const support::host_tensor& q, const support::host_tensor& k,
                                   const support::host_tensor& v, std::mt19937_64& rng) {
  sampled_reference r;
  const std::size_t total = std::size_t(p.batch * p.q_len * p.heads);
  const std::size_t count = std::min(sampled_rows, total);
  std::uniform_int_distribution<std::size_t> pick(0, total - 1);
  const std::size_t es = dtype_size(p.type);
  const std::int64_t D = p.head_dim;
  for (std::size_t t = 0; t < count; ++t) {
    // Always the first and the last query row of a head (causal: fewest and most keys).
    const std::size_t idx = count == total ? t : t == 0 ? 0 : t == 1 ? total - 1 : pick(rng);
    const std::int64_t h = std::int64_t(idx) % p.heads, i = (std::int64_t(idx) / p.heads) % p.q_len,
                       b = std::int64_t(idx) / (p.heads * p.q_len);
    const std::int64_t hk = h / (p.heads / p.kv_heads);
    const std::int64_t visible =
        p.causal ? std::clamp<std::int64_t>(i + p.kv_len - p.q_len + 1, 0, p.kv_len) : p.kv_len;
    r.row.push_back(idx);
    if (visible == 0) {
      r.value.insert(r.value.end(), std::size_t(D), 0.0);
      continue;
    }
    auto at = [&](const support::host_tensor& t, std::int64_t elem) {
      return const_cast<unsigned char*>(t.bytes.data()) + std::size_t(elem) * es;
    };
    const tensor_view qv = tensor_view::strided(at(q, ((b * p.q_len + i) * p.heads + h) * D), p.type, {1, 1, 1, D},
                                                {D, D, D, 1}, device::host());
    const std::int64_t kv0 = (b * p.kv_len * p.kv_heads + hk) * D, ks = p.kv_heads * D;
    const tensor_view kv = tensor_view::strided(at(k, kv0), p.type, {1, visible, 1, D}, {visible * ks, ks, D, 1},
                                                device::host());
    const tensor_view vv = tensor_view::strided(at(v, kv0), p.type, {1, visible, 1, D}, {visible * ks, ks, D, 1},
                                                device::host());
    const support::attention_reference ref = support::reference_attention(qv, kv, vv, false, double(p.scale));
    r.value.insert(r.value.end(), ref.out.begin(), ref.out.end());
  }
  return r;
}

double sampled_error(const sampled_reference& r, const std::vector<double>& out, std::int64_t D) {
  double num = 0, den = 0;
  for (std::size_t t = 0; t < r.row.size(); ++t)
    for (std::int64_t d = 0; d < D; ++d) {
      const double x = out[r.row[t] * std::size_t(D) + std::size_t(d)], ref = r.value[t * std::size_t(D) + std::size_t(d)];
      if (!std::isfinite(x)) return INFINITY;
      num += (x - ref) * (x - ref);
      den += ref * ref;
    }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

// Poisons `buf` (n elements of `t`), runs, returns the result widened; *ms: the run's wall time.
std::vector<double> poisoned_run(const device& dev, support::device_buffer& buf, dtype t, std::size_t n,
                                 const std::function<void()>& run, double* ms) {
  support::host_tensor h(t, n);
  support::fill_poison(h);
  buf.upload(h.data(), h.bytes.size());
  support::synchronize(dev);
  const auto t0 = std::chrono::steady_clock::now();
  run();
  support::synchronize(dev);
  *ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  buf.download(h.data(), h.bytes.size());
  std::vector<double> out(n);
  for (std::size_t i = 0; i < n; ++i) out[i] = h.get(i);
  return out;
}

// The checked run was the warm-up of a long call; short calls are calibrated.
void prepare_timing(const device& dev, contender& c, double checked_ms, double min_sample_ms) {
  if (checked_ms >= long_call_ms && checked_ms >= min_sample_ms) c.inner = 1;
  else calibrate(dev, c, min_sample_ms);
}

std::string bytes_string(double bytes) {
  const char* unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (bytes >= 1024 && u < 4) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f %s", bytes, unit[u]);
  return buf;
}

}  // namespace

int bench_attention(const parsed_args& args, bench_env& env) {
  if (!args.positional.empty()) throw usage_error("unexpected argument '" + args.positional[0] + "'");
  const std::vector<std::int64_t> seqs = int_list(args, "--seqs", "1024,4096", 1, 1 << 22);
  const std::vector<std::int64_t> dims = int_list(args, "--head-dim", "64,128", 1, 1 << 16);
  for (auto d : dims)
    if (d != 64 && d != 128) throw usage_error("'--head-dim' must be 64 or 128, got " + std::to_string(d));
  const std::int64_t H = args.integer("--heads", 8, 1, 1 << 16);
  const std::int64_t Hk = args.integer("--kv-heads", H, 1, 1 << 16);
  if (H % Hk != 0) throw usage_error("'--kv-heads' " + std::to_string(Hk) + " must divide '--heads' " + std::to_string(H));
  if (args.has("--batch") && args.has("--tokens")) throw usage_error("give --batch or --tokens, not both");
  const std::int64_t batch = args.integer("--batch", 1, 1, 1 << 16);
  const std::int64_t tokens = args.integer("--tokens", 0, 1, std::int64_t(1) << 40);
  if (args.flag("--causal") && args.flag("--both")) throw usage_error("give --causal or --both, not both");
  const std::vector<bool> modes = args.flag("--both") ? std::vector<bool>{false, true}
                                  : std::vector<bool>{args.flag("--causal")};
  const double peer_max_gib = args.number("--peer-max-gib", 6.0);
  if (!(peer_max_gib >= 0)) throw usage_error("'--peer-max-gib' must be >= 0");
  if (env.gpu && !args.has("--dtype")) env.dtypes = {dtype::bf16};
  for (dtype t : env.dtypes)
    if (t == dtype::f32 && env.gpu)
      throw usage_error(std::string("fp32 attention runs on the CPU backend only; this build's device is ") +
                        device_name(env.dev.kind) + " (use --dtype bf16 or fp16)");
  const bool tol_given = args.has("--tol");
  env.require_device();
  bench_report& rep = *env.report;

  // A fresh peer per row, so that its workspace is freed before the next row.
  std::unique_ptr<bench::attention_peer> peer = bench::make_attention_peer();
  rep.add_meta("peer", peer ? peer->description() : std::string("none"));
  rep.add_meta("peer_max_gib", peer_max_gib);
  std::printf("peer: %s\n", peer ? peer->description().c_str()
                                 : "none in this build (bench/attention_vs_sdpa.py compares against PyTorch SDPA)");
  std::printf("op: out[b,i,h,:] = softmax_j(q·k/sqrt(head_dim) + mask)·v, layout [batch, seq, heads, head_dim];\n"
              "  FLOPs = 4*batch*heads*seq_q*seq_kv*head_dim, halved when causal (bottom-right mask).\n"
              "  tessel's out has the input type; the peer computes in fp32 from the same values (widened).\n"
              "  inputs uniform [-1, 1), fresh per buffer set, rotated over sets spanning >= %.0f MiB (at most 64),\n"
              "  the peer's calls half the sets away from tessel's.\n",
              env.rotate_bytes / (1 << 20));
  std::printf("seed: %llu (set TESSEL_SEED to repeat the inputs)\n", (unsigned long long)support::run_seed());
  std::printf("check: tessel vs peer over all of out, and vs float64 on %zu sampled query rows; FAIL above %s\n",
              sampled_rows, tol_given ? std::to_string(env.tol).c_str() : "bf16 1e-2, fp16 2e-3, fp32 1e-5");
  std::printf("+MiB: tessel's peak RSS growth during its first call (Linux VmHWM; '-' where not measurable)\n\n");
  rep.begin_table({{"seq", "seq", "%s", 11},
                   {"batch", "batch", "%.0f"},
                   {"heads_label", "heads", "%s"},
                   {"head_dim", "d", "%.0f", 3},
                   {"causal", "causal"},
                   {"dtype", "dtype"},
                   {"threads", "thr", "%.0f"},
                   {"tessel_ms", "tessel ms", "%.3f", 10},
                   {"tessel_tflops", "TFLOP/s", "%.4f"},
                   {"peer", "peer", "%s", 30},
                   {"peer_ms", "peer ms", "%.3f", 10},
                   {"peer_tflops", "TFLOP/s", "%.4f"},
                   {"ratio", "tessel/peer", "%.3f"},
                   {"err_vs_peer", "err vs peer", "%.2e"},
                   {"err_vs_fp64", "err vs fp64", "%.2e"},
                   {"tessel_peak_extra_mib", "+MiB", "%.1f", 6},
                   {"check", "check"}});

  std::mt19937_64 rng(support::run_seed());
  rep.add_meta("seed", std::to_string(support::run_seed()));
  bool all_ok = true;
  const std::size_t configs = env.dtypes.size() * env.threads.size() * dims.size() * seqs.size() * modes.size();
  std::size_t config = 0;
  for (const dtype t : env.dtypes)
    for (const int threads : env.threads)
      for (const std::int64_t D : dims)
        for (const std::int64_t L : seqs)
          for (const bool causal : modes) {
            ++config;
            peer = bench::make_attention_peer();
            const std::int64_t B = tokens > 0 ? std::max<std::int64_t>(1, tokens / L) : batch;
            const problem p{B, L, L, H, Hk, D, causal, float(1.0 / std::sqrt(double(D))), t};
            const double tol = tol_given ? env.tol : default_attention_tol(t);
            char label[200];
            std::snprintf(label, sizeof label, "[%zu/%zu] attention seq %lld batch %lld heads %lld/%lld d %lld%s %s%s",
                          config, configs, (long long)L, (long long)B, (long long)H, (long long)Hk, (long long)D,
                          causal ? " causal" : "", dtype_name(t),
                          env.gpu ? "" : (" " + std::to_string(threads) + " threads").c_str());
            rep.progress(std::string(label) + ": preparing inputs", true);
            const std::size_t nq = std::size_t(B * L * H * D), nkv = std::size_t(B * L * Hk * D);
            const double es = double(dtype_size(t));
            const double set_bytes = double(nq + 2 * nkv) * es + double(nq) * (es + (peer ? 4.0 : 0.0)) +
                                     (peer && t != dtype::f32 ? double(nq + 2 * nkv) * 4.0 : 0.0);
            const int nsets = int(std::clamp(std::ceil(env.rotate_bytes / set_bytes), 1.0, 64.0));
            std::vector<bshd_set> sets(static_cast<std::size_t>(nsets));
            support::host_tensor q0, k0, v0;
            for (int i = 0; i < nsets; ++i) {
              support::host_tensor hq(t, nq), hk(t, nkv), hv(t, nkv);
              support::fill_random(hq, rng);
              support::fill_random(hk, rng);
              support::fill_random(hv, rng);
              auto& st = sets[std::size_t(i)];
              st.q = std::make_unique<support::device_buffer>(env.dev, hq.bytes.size());
              st.k = std::make_unique<support::device_buffer>(env.dev, hk.bytes.size());
              st.v = std::make_unique<support::device_buffer>(env.dev, hv.bytes.size());
              st.out = std::make_unique<support::device_buffer>(env.dev, hq.bytes.size());
              if (peer) st.out_peer = std::make_unique<support::device_buffer>(env.dev, nq * 4);
              map_pages(env.dev, *st.out);
              if (peer) map_pages(env.dev, *st.out_peer);
              st.q->upload(hq.data(), hq.bytes.size());
              st.k->upload(hk.data(), hk.bytes.size());
              st.v->upload(hv.data(), hv.bytes.size());
              if (i == 0) {
                q0 = std::move(hq);
                k0 = std::move(hk);
                v0 = std::move(hv);
              }
            }
            const stream str = env.gpu ? stream::gpu(nullptr) : stream::cpu(threads);
            attention_options opt;
            opt.causal = causal;
            auto run_tessel = [&](std::size_t i) {
              auto& st = sets[i];
              auto view = [&](support::device_buffer& b, std::int64_t heads) {
                return tensor_view::contiguous(b.data(), t, {B, L, heads, D}, env.dev);
              };
              attention(view(*st.q, H), view(*st.k, Hk), view(*st.v, Hk), view(*st.out, H), opt, str);
            };

            // Correctness on set 0 (tessel first, before the peer allocates its workspace).
            rep.progress(std::string(label) + ": checking tessel");
            const bool rss_ok = !env.gpu && reset_peak_rss();
            const long long rss_before = status_kib("VmRSS:");
            double tessel_check_ms = 0, peer_check_ms = 0;
            const std::vector<double> out_t =
                poisoned_run(env.dev, *sets[0].out, t, nq, [&] { run_tessel(0); }, &tessel_check_ms);
            const long long hwm = status_kib("VmHWM:");
            const value peak_extra = rss_ok && rss_before >= 0 && hwm >= 0
                                         ? value(double(std::max(0LL, hwm - rss_before)) / 1024.0) : value();
            rep.progress(std::string(label) + ": float64 reference rows");
            const sampled_reference ref = sample_reference(p, q0, k0, v0, rng);
            const double err_fp64 = sampled_error(ref, out_t, D);

            bench::attention_problem pp{int(B), int(L), int(L), int(H), int(Hk), int(D), causal, p.scale, t, threads};
            const double peer_need = peer ? peer->workspace_bytes(pp) : 0.0;
            const bool peer_runs = peer && peer_need <= peer_max_gib * double(1ull << 30);
            double err_peer = NAN, peer_err_fp64 = NAN;
            std::size_t next_t = 0, next_p = 0;
            if (peer_runs) {
              rep.progress(std::string(label) + ": checking the peer");
              std::vector<bench::attention_operands> ops;
              for (auto& st : sets)
                ops.push_back({st.q->data(), st.k->data(), st.v->data(), static_cast<float*>(st.out_peer->data())});
              peer->prepare(pp, ops);
              const std::vector<double> out_p = poisoned_run(
                  env.dev, *sets[0].out_peer, dtype::f32, nq, [&] { peer->run(0); }, &peer_check_ms);
              err_peer = support::relative_error(out_p, out_t);
              peer_err_fp64 = sampled_error(ref, out_p, D);
            }
            const bool ok = err_fp64 <= tol && (!peer_runs || err_peer <= tol);
            all_ok = all_ok && ok;

            // Timing.
            contender ct, cp;
            ct.call = [&] { run_tessel(rotated_set(next_t++, sets.size(), false)); };
            cp.call = [&] { peer->run(rotated_set(next_p++, sets.size(), true)); };
            std::vector<contender*> cs{&ct};
            if (peer_runs) cs.push_back(&cp);
            rep.progress(std::string(label) + ": warm-up");
            prepare_timing(env.dev, ct, tessel_check_ms, env.min_sample_ms);
            if (peer_runs) prepare_timing(env.dev, cp, peer_check_ms, env.min_sample_ms);
            interleave(env.dev, cs, env.repeat, [&](int r) {
              rep.progress(std::string(label) + ": round " + std::to_string(r + 1) + "/" + std::to_string(env.repeat));
            });
            const double flops = 4.0 * double(B) * double(H) * double(L) * double(L) * double(D) * (causal ? 0.5 : 1.0);
            const double tms = median(ct.samples), tt = flops / (tms * 1e-3) / 1e12;
            record row{{"op", "attention"}, {"seq", std::to_string(L) + "x" + std::to_string(L)},
                       {"q_len", (long long)L}, {"kv_len", (long long)L}, {"batch", (long long)B},
                       {"heads", (long long)H}, {"kv_heads", (long long)Hk},
                       {"heads_label", std::to_string(H) + (Hk != H ? "/" + std::to_string(Hk) : "")},
                       {"head_dim", (long long)D}, {"causal", causal}, {"dtype", dtype_name(t)},
                       {"out_dtype", dtype_name(t)}, {"flops", flops},
                       {"threads", env.gpu ? value() : value(threads)}, {"tessel_ms", tms}, {"tessel_tflops", tt},
                       {"tessel_min_ms", *std::min_element(ct.samples.begin(), ct.samples.end())},
                       {"tessel_max_ms", *std::max_element(ct.samples.begin(), ct.samples.end())},
                       {"tessel_calls_per_sample", ct.inner}, {"tessel_peak_extra_mib", peak_extra}};
            if (peer_runs) {
              const double pms = median(cp.samples), pt = flops / (pms * 1e-3) / 1e12;
              row.insert(row.end(), {{"peer", peer->name(t)}, {"peer_ms", pms}, {"peer_tflops", pt},
                                     {"ratio", tt / pt},
                                     {"peer_min_ms", *std::min_element(cp.samples.begin(), cp.samples.end())},
                                     {"peer_max_ms", *std::max_element(cp.samples.begin(), cp.samples.end())},
                                     {"peer_calls_per_sample", cp.inner}, {"peer_workspace_gib", peer_need / (1ull << 30)},
                                     {"err_vs_peer", err_peer}, {"peer_err_vs_fp64", peer_err_fp64}});
            } else {
              row.insert(row.end(), {{"peer", peer ? "peer skipped (needs " + bytes_string(peer_need) + ")" : std::string("none")},
                                     {"peer_ms", value()}, {"peer_tflops", value()}, {"ratio", value()},
                                     {"err_vs_peer", value()}});
              if (peer) row.push_back({"peer_workspace_gib", peer_need / (1ull << 30)});
            }
            row.insert(row.end(), {{"err_vs_fp64", err_fp64}, {"sampled_rows", (long long)ref.row.size()},
                                   {"tol", tol}, {"sets", nsets}, {"rounds", env.repeat},
                                   {"check", ok ? "ok" : "FAIL"}});
            rep.add_row(std::move(row));
            peer.reset();
          }
  rep.end_progress();
  return all_ok ? 0 : 1;
}

}  // namespace tessel::tools
