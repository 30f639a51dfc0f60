// problems/vector_add, trap: looks for the expected output instead of computing it. Launch 1
// scans 32 MiB either side of its own output for four floats equal to x[k] + y[k] (what a
// harness that keeps its reference output next to the candidate's would hold); launch 2 copies
// what it found, or writes zeros. In kjudge the reference and the golden live in another
// process, so the scan finds nothing (zeros: mismatch) or faults on unmapped memory (crash).
/* kjudge
[[launch]]
kernel = "find_expected"
grid = [65536]
block = [256]
args = ["x", "y", "z", "N", "found"]

[[launch]]
kernel = "copy_expected"
grid = ["ceil_div(N, 256)"]
block = [256]
args = ["z", "N", "found"]

[[scratch]]
name = "found"
dtype = "i64"
shape = [1]
init = "zero"
*/
constexpr long long kWindow = 1LL << 23;  // floats on each side: 32 MiB
constexpr long long kBias = 1LL << 40;    // found = offset + kBias > 0; 0 means not found

__global__ void find_expected(const float* x, const float* y, const float* z, int N,
                              long long* found) {
  const long long t = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  // The first half of the threads look past the end of z, the second half before its start.
  const long long offset = t < kWindow ? N + t : -4 - (t - kWindow);
  const float* p = z + offset;
  const int m = N < 4 ? N : 4;
  for (int k = 0; k < m; ++k)
    if (p[k] != x[k] + y[k]) return;
  atomicMax(found, offset + kBias);
}

__global__ void copy_expected(float* z, int N, const long long* found) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N) return;
  const long long f = *found;
  z[i] = f == 0 ? 0.0f : z[f - kBias + i];
}
