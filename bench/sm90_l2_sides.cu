// bench/sm90_l2_sides.cu — which of the H100's two L2 partitions each SM reads through,
// measured by latency, and where the block scheduler puts a persistent grid's blocks:
// the diagnostic behind the unit-order experiments (bench/notes/cuda_gemm.md, session 25).
//
// Usage: sm90_l2_sides [TABLE]   (nvcc -O2 -std=c++17 -arch=sm_90a bench/sm90_l2_sides.cu -o sides;
//                                 the device step `l2sides` runs it)
//
// Every launch runs one block per SM (dynamic shared memory above half an SM's).
//   placement: where a grid of one block per SM, and one of 2-block clusters, land
//              (block -> %smid), twice each (does it repeat?).
//   touch:     after an L2 flush, the block on one reference SM reads every SM's 512
//              lines; then each SM chases its own lines (dependent ld.global.cg loads).
//              Where the partition an SM reads through keeps copies of lines homed in
//              the other one (H100 does), an SM of the reference's partition finds all
//              of its lines near and one of the other partition only about half of
//              them: its mean latency is higher. The SMs split in two by that latency;
//              a second touch from an SM of the other group must give the mirror split.
// Writes TABLE (if given), the unit orders the sm90_parts part `order` uses:
//   sm90_side_sm_count, sm90_side_rank[smid]: single blocks, partition 0's SMs first,
//     each partition in the default placement's block order;
//   sm90_pair_block_count, sm90_pair_rank[smid]: 2-block clusters, ranked by where the
//     default single-block placement has their SMs (the same order over SMs as single blocks).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <utility>
#include <vector>

#define CHECK(x)                                                                                \
  do {                                                                                          \
    cudaError_t e_ = (x);                                                                       \
    if (e_ != cudaSuccess) {                                                                    \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      std::exit(1);                                                                             \
    }                                                                                           \
  } while (0)

constexpr int kLines = 512, kWordsPerLine = 32, kMaxSm = 256;

__device__ unsigned sm_id() {
  unsigned r;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
  return r;
}

__global__ void placement(unsigned* sm_of_block) {
  if (threadIdx.x == 0) sm_of_block[blockIdx.x] = sm_id();
}

// The block on SM `ref` reads every line of buf (into L2: the line's home and ref's partition).
__global__ void touch(const unsigned* buf, long long words, unsigned ref, unsigned* sink, unsigned* done) {
  if (sm_id() != ref) return;
  unsigned acc = 0;
  for (long long i = threadIdx.x * kWordsPerLine; i < words; i += blockDim.x * kWordsPerLine) acc += __ldcg(buf + i);
  if (acc == 0xffffffffu) sink[0] = acc;
  if (threadIdx.x == 0) atomicAdd(done, 1u);
}

// Each SM chases its own region: word 0 of each line holds the next line's word index.
__global__ void own(const unsigned* buf, unsigned long long* cycles, unsigned* sink) {
  const unsigned sm = sm_id();
  if (threadIdx.x != 0 || sm >= kMaxSm) return;
  const unsigned* region = buf + std::size_t(sm) * kLines * kWordsPerLine;
  unsigned idx = 0;
  const long long t0 = clock64();
  for (int i = 0; i < kLines; ++i) idx = __ldcg(region + idx);
  const long long t1 = clock64();
  cycles[sm] = (unsigned long long)(t1 - t0);
  if (idx == 0xffffffffu) sink[0] = idx;
}

// A launch of `placement` over `blocks` blocks in clusters of `cluster` (attr: its one attribute).
static cudaLaunchConfig_t placement_config(int blocks, int cluster, int smem, cudaLaunchAttribute* attr) {
  cudaLaunchConfig_t cfg{};
  attr->id = cudaLaunchAttributeClusterDimension;
  attr->val.clusterDim.x = unsigned(cluster), attr->val.clusterDim.y = attr->val.clusterDim.z = 1;
  cfg.gridDim = dim3(blocks), cfg.blockDim = dim3(32), cfg.dynamicSmemBytes = smem, cfg.attrs = attr, cfg.numAttrs = 1;
  return cfg;
}

static std::vector<unsigned> place(unsigned* d_sm, int blocks, int cluster, int smem) {
  cudaLaunchAttribute attr;
  const cudaLaunchConfig_t cfg = placement_config(blocks, cluster, smem, &attr);
  CHECK(cudaMemset(d_sm, 0xff, kMaxSm * 4));
  CHECK(cudaLaunchKernelEx(&cfg, placement, d_sm));
  CHECK(cudaDeviceSynchronize());
  std::vector<unsigned> sm(blocks);
  CHECK(cudaMemcpy(sm.data(), d_sm, blocks * 4, cudaMemcpyDeviceToHost));
  return sm;
}

static void print_table(FILE* f, const char* name, const std::vector<int>& v) {
  std::fprintf(f, "__device__ constexpr unsigned char %s[%d] = {", name, kMaxSm);
  for (int s = 0; s < kMaxSm; ++s) std::fprintf(f, "%s%d", s ? ", " : "", v[s]);
  std::fprintf(f, "};\n");
}

int main(int argc, char** argv) {
  int dev = 0, sms = 0, smem = 0;
  CHECK(cudaGetDevice(&dev));
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  CHECK(cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  if (sms > kMaxSm) return std::fprintf(stderr, "sm90_l2_sides: %d SMs, at most %d handled\n", sms, kMaxSm), 1;
  const int big = smem * 3 / 4;  // one block per SM
  CHECK(cudaFuncSetAttribute(placement, cudaFuncAttributeMaxDynamicSharedMemorySize, big));
  CHECK(cudaFuncSetAttribute(placement, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  CHECK(cudaFuncSetAttribute(touch, cudaFuncAttributeMaxDynamicSharedMemorySize, big));
  CHECK(cudaFuncSetAttribute(own, cudaFuncAttributeMaxDynamicSharedMemorySize, big));

  const long long words = (long long)kMaxSm * kLines * kWordsPerLine;
  std::vector<unsigned> host(words, 0);
  for (int r = 0; r < kMaxSm; ++r)
    for (int j = 0; j < kLines; ++j)
      host[(std::size_t(r) * kLines + j) * kWordsPerLine] = unsigned((j + 1) % kLines) * kWordsPerLine;
  unsigned *buf, *d_sm, *sink, *done;
  unsigned long long* cycles;
  void* flush;
  const std::size_t flush_bytes = 512ull << 20;  // ten times the L2
  CHECK(cudaMalloc(&buf, words * 4));
  CHECK(cudaMalloc(&d_sm, kMaxSm * 4));
  CHECK(cudaMalloc(&sink, 4));
  CHECK(cudaMalloc(&done, 4));
  CHECK(cudaMalloc(&cycles, kMaxSm * 8));
  CHECK(cudaMalloc(&flush, flush_bytes));
  CHECK(cudaMemcpy(buf, host.data(), words * 4, cudaMemcpyHostToDevice));

  // ---- placement of single blocks
  const std::vector<unsigned> order = place(d_sm, sms, 1, big);
  std::vector<int> present, pos(kMaxSm, -1);
  for (int b = 0; b < sms; ++b)
    if (order[b] < kMaxSm && pos[order[b]] < 0) pos[order[b]] = b, present.push_back(int(order[b]));
  std::sort(present.begin(), present.end());
  std::printf("SMs: %d, %zu distinct smids seen (largest %d)\nsingle blocks, block -> smid:", sms, present.size(),
              present.empty() ? -1 : present.back());
  for (int b = 0; b < sms; ++b) std::printf(" %u", order[b]);
  std::printf("\nsingle blocks: a second launch %s\n",
              place(d_sm, sms, 1, big) == order ? "put every block on the same SM" : "put blocks elsewhere");
  if (present.size() != std::size_t(sms)) return std::printf("not one block per SM: stop\n"), 1;

  // ---- touch: reference present[0], then the first SM of the other group
  std::vector<int> part(kMaxSm, -1);
  std::vector<double> lat[2];
  int refs[2] = {present.front(), -1};
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1)
      for (int s : present)
        if (part[s] == 1 && refs[1] < 0) refs[1] = s;
    if (refs[pass] < 0) break;
    CHECK(cudaMemset(flush, pass + 1, flush_bytes));
    CHECK(cudaMemset(done, 0, 4));
    touch<<<sms, 1024, big>>>(buf, words, unsigned(refs[pass]), sink, done);
    CHECK(cudaGetLastError());
    own<<<sms, 32, big>>>(buf, cycles, sink);
    CHECK(cudaGetLastError());
    CHECK(cudaDeviceSynchronize());
    unsigned touched = 0;
    std::vector<unsigned long long> hc(kMaxSm);
    CHECK(cudaMemcpy(&touched, done, 4, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(hc.data(), cycles, kMaxSm * 8, cudaMemcpyDeviceToHost));
    lat[pass].assign(kMaxSm, 0);
    std::vector<double> v;
    for (int s : present) v.push_back(lat[pass][s] = double(hc[s]) / kLines);
    std::sort(v.begin(), v.end());
    double best = -1, cut = 0;  // the split of the sorted latencies with the largest between-group variance
    for (std::size_t i = 1; i < v.size(); ++i) {
      const double m0 = std::accumulate(v.begin(), v.begin() + i, 0.0) / i,
                   m1 = std::accumulate(v.begin() + i, v.end(), 0.0) / (v.size() - i);
      const double between = double(i) * (v.size() - i) * (m1 - m0) * (m1 - m0);
      if (between > best) best = between, cut = (v[i - 1] + v[i]) / 2;
    }
    int low = 0, agree = 0;
    for (int s : present) {
      low += lat[pass][s] < cut;
      if (pass == 0) part[s] = lat[0][s] < cut ? 0 : 1;
      else agree += (lat[1][s] < cut) == (part[s] == 1);
    }
    std::printf("touch by SM %d (%u block touched): own-chase latency %.1f-%.1f cycles a load, split at %.1f: %d below, %zu above",
                refs[pass], touched, v.front(), v.back(), cut, low, v.size() - low);
    if (pass == 1) std::printf("; %d of %zu SMs in the mirror of the first split", agree, present.size());
    std::printf("\n");
  }
  std::printf("per SM (smid: partition, latency after touch 1, touch 2):");
  for (int s : present) std::printf("%s %d:%d/%.0f/%.0f", s % 8 ? "" : "\n ", s, part[s], lat[0][s], lat[1].empty() ? 0.0 : lat[1][s]);
  int n0 = 0, changes = 0;
  for (int s : present) n0 += part[s] == 0;
  for (int b = 1; b < sms; ++b) changes += part[order[b]] != part[order[b - 1]];
  std::printf("\npartitions: %d and %zu SMs; the default placement changes partition %d times over its %d blocks\n", n0,
              present.size() - n0, changes, sms);

  // ---- placement of 2-block clusters (a persistent grid of as many as fit)
  cudaLaunchAttribute attr;
  const cudaLaunchConfig_t cfg = placement_config(2, 2, big, &attr);
  int clusters = 0;
  CHECK(cudaOccupancyMaxActiveClusters(&clusters, placement, &cfg));
  const std::vector<unsigned> pair_sm = place(d_sm, 2 * clusters, 2, big);
  std::printf("pairs: %d clusters of 2 at once; cluster -> smids:", clusters);
  std::vector<std::pair<int, int>> by_pos;  // (position of the pair's first SM in the single-block order, cluster)
  int one_tpc = 0, mixed = 0;
  for (int c = 0; c < clusters; ++c) {
    const unsigned a = pair_sm[2 * c] & 255, b = pair_sm[2 * c + 1] & 255;
    std::printf(" (%u %u)", a, b);
    one_tpc += a / 2 == b / 2;
    mixed += part[a] != part[b];
    by_pos.push_back({std::min(pos[a], pos[b]), c});
  }
  std::sort(by_pos.begin(), by_pos.end());
  std::vector<int> pair_rank(kMaxSm, 255), side_rank(kMaxSm, 255);
  for (int r = 0; r < clusters; ++r) {
    const int c = by_pos[r].second;
    pair_rank[pair_sm[2 * c] & 255] = pair_rank[pair_sm[2 * c + 1] & 255] = r;
  }
  std::printf("\npairs: %d of %d clusters on smids 2k and 2k+1; %d across the two partitions; a second launch %s\n",
              one_tpc, clusters, mixed,
              place(d_sm, 2 * clusters, 2, big) == pair_sm ? "put every block on the same SM" : "put blocks elsewhere");

  if (argc > 1) {
    int r = 0;
    for (int pt = 0; pt < 2; ++pt)
      for (int b = 0; b < sms; ++b)
        if (part[order[b]] == pt) side_rank[order[b]] = r++;
    FILE* f = std::fopen(argv[1], "w");
    if (!f) return std::perror(argv[1]), 1;
    std::fprintf(f, "// generated by bench/sm90_l2_sides.cu on the GPU it describes; not a source file\n");
    std::fprintf(f, "constexpr int sm90_side_sm_count = %zu, sm90_pair_block_count = %d;\n", present.size(), 2 * clusters);
    print_table(f, "sm90_side_rank", side_rank);
    print_table(f, "sm90_pair_rank", pair_rank);
    std::fclose(f);
  }
  return 0;
}
