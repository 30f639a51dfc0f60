// Cooperative groups at block and warp level, one source for both backends: the host backend
// runs these kernels and pins their outputs (tests/unit/host/host_cooperative_groups_test.cpp),
// and NVRTC compiles the same file for the GPU (tests/unit/nvrtc/cooperative_groups_test.cpp).
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cooperative_groups/scan.h>

namespace cg = cooperative_groups;

// Per warp, cg::reduce over tiled_partition<32> with every operator of reduce.h; 6 ints a warp.
__global__ void warp_reduce(const int* x, int* out, const float* xf, float* outf) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  const int i = blockIdx.x * block.size() + block.thread_rank();
  const int v = x[i];
  const unsigned u = static_cast<unsigned>(v);
  const int sum = cg::reduce(warp, v, cg::plus<int>());
  const int lo = cg::reduce(warp, v, cg::less<int>());
  const int hi = cg::reduce(warp, v, cg::greater<int>());
  const unsigned a = cg::reduce(warp, u, cg::bit_and<unsigned>());
  const unsigned o = cg::reduce(warp, u, cg::bit_or<unsigned>());
  const unsigned e = cg::reduce(warp, u, cg::bit_xor<unsigned>());
  const float f = cg::reduce(warp, xf[i], cg::plus<float>());
  const int w = blockIdx.x * warp.meta_group_size() + warp.meta_group_rank();
  if (warp.thread_rank() == 0) {
    int* row = out + 6 * w;
    row[0] = sum;
    row[1] = lo;
    row[2] = hi;
    row[3] = static_cast<int>(a);
    row[4] = static_cast<int>(o);
    row[5] = static_cast<int>(e);
    outf[w] = f;
  }
}

// Tiles of 8: a shfl_down tree, its sum at out[the tile's place]; every thread's place too.
__global__ void tile8_sum(const float* x, float* out, unsigned* places) {
  cg::thread_block block = cg::this_thread_block();
  auto tile = cg::tiled_partition<8>(block);
  cg::thread_block_tile<8> same = tile; // the parent forgotten, the place kept
  const unsigned i = blockIdx.x * block.size() + block.thread_rank();
  float v = x[i];
  for (int o = tile.size() / 2; o > 0; o /= 2)
    v += tile.shfl_down(v, o);
  if (tile.thread_rank() == 0)
    out[blockIdx.x * tile.meta_group_size() + tile.meta_group_rank()] = v;
  places[i] = same.meta_group_rank() * 1000 + same.meta_group_size() * 10 + tile.thread_rank();
}

// The even tiles of 8 shuffle and sync while the odd ones of the same warp already wait at the
// block's barrier: a tile's operations wait for its own lanes alone.
__global__ void tiles_apart(int* out) {
  __shared__ int s[64];
  cg::thread_block block = cg::this_thread_block();
  auto tile = cg::tiled_partition<8>(block);
  int v = tile.thread_rank() + 1;
  if (tile.meta_group_rank() % 2 == 0) {
    for (int o = 4; o > 0; o /= 2)
      v += tile.shfl_xor(v, o);
    tile.sync();
  }
  s[block.thread_rank()] = v;
  cg::sync(block);
  out[blockIdx.x * 64 + block.thread_rank()] = s[block.thread_rank() ^ 8];
}

// Block barriers through cg::sync and thread_block::sync, in a 3-D block of a 2-D grid: each
// thread ends with twice the value two ranks on; -1 where the block's indices disagree with
// threadIdx, blockIdx and blockDim.
__global__ void block_rotate(const int* x, int* out) {
  __shared__ int s[256];
  cg::thread_block block = cg::this_thread_block();
  const unsigned n = block.size(), r = block.thread_rank();
  const unsigned base = (blockIdx.y * gridDim.x + blockIdx.x) * n;
  s[r] = x[base + r];
  cg::sync(block);
  const int next = s[(r + 1) % n];
  block.sync();
  s[r] = next * 2;
  cg::sync(block);
  int result = s[(r + 1) % n];
  const dim3 t = block.thread_index(), g = block.group_index(), d = block.dim_threads();
  if (t.x != threadIdx.x || t.y != threadIdx.y || t.z != threadIdx.z || g.x != blockIdx.x ||
      g.y != blockIdx.y || d.x != blockDim.x || d.y != blockDim.y || d.z != blockDim.z ||
      block.num_threads() != n ||
      r != threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z))
    result = -1;
  out[base + r] = result;
}

// Votes of tiles of 16: ballot (bits by rank in the tile), any and all, 3 words a tile; and per
// thread the tile's lanes holding the same x % 3 (match_any).
__global__ void tile16_votes(const int* x, unsigned* out, unsigned* matches) {
  auto tile = cg::tiled_partition<16>(cg::this_thread_block());
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int p = x[i] > 0;
  const unsigned b = tile.ballot(p);
  const int any = tile.any(p), all = tile.all(p);
  matches[i] = tile.match_any(x[i] % 3);
  if (tile.thread_rank() == 0) {
    unsigned* row = out + 3 * (blockIdx.x * tile.meta_group_size() + tile.meta_group_rank());
    row[0] = b;
    row[1] = any;
    row[2] = all;
  }
}

// Warp-aggregated compaction: in each branch the lanes there are the coalesced group; per thread
// its group's size and rank (positive branch: size * 100 + a reduce over the group).
__global__ void compact_positive(const int* x, int* out, int* count, int* groups, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const int v = x[i];
  if (v > 0) {
    cg::coalesced_group g = cg::coalesced_threads();
    int at = 0;
    if (g.thread_rank() == 0) at = atomicAdd(count, static_cast<int>(g.size()));
    at = g.shfl(at, 0);
    out[at + g.thread_rank()] = v;
    groups[i] = static_cast<int>(g.size()) * 100 + cg::reduce(g, 1, cg::plus<int>());
  } else {
    cg::coalesced_group g = cg::coalesced_threads();
    groups[i] = -(static_cast<int>(g.size()) * 100 + static_cast<int>(g.thread_rank()));
  }
}

// Scans of a warp and of tiles of 4 partitioned from it.
__global__ void tile_scans(const int* x, int* inclusive, int* exclusive, int* running_max,
                           float* quarter) {
  auto warp = cg::tiled_partition<32>(cg::this_thread_block());
  auto four = cg::tiled_partition<4>(warp);
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  inclusive[i] = cg::inclusive_scan(warp, x[i]);
  exclusive[i] = cg::exclusive_scan(warp, x[i]);
  running_max[i] = cg::inclusive_scan(warp, x[i], cg::greater<int>());
  quarter[i] = cg::inclusive_scan(four, 0.1f * static_cast<float>(x[i]), cg::plus<float>()) +
               1000.0f * static_cast<float>(four.meta_group_rank());
}

// tiled_partition(block, 4) as a thread_group, a labeled partition of the warp, and a value
// broadcast from the warp's first thread: 4 ints a thread.
__global__ void dynamic_groups(int* out) {
  cg::thread_block block = cg::this_thread_block();
  const int r = block.thread_rank();
  cg::thread_group four = cg::tiled_partition(block, 4);
  four.sync();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  cg::coalesced_group same = cg::labeled_partition(warp, r % 3);
  const int first = cg::invoke_one_broadcast(warp, [&] { return r; });
  int* row = out + 4 * (blockIdx.x * block.size() + r);
  row[0] = static_cast<int>(four.thread_rank()) * 10 + static_cast<int>(four.size());
  row[1] = static_cast<int>(same.size()) * 100 + static_cast<int>(same.thread_rank());
  row[2] = static_cast<int>(same.meta_group_rank()) * 10 + static_cast<int>(same.meta_group_size());
  row[3] = first;
}
