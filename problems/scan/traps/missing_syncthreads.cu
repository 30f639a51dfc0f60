// problems/scan, trap: a Hillis-Steele scan in shared memory without its barriers. One block per
// row walks the row in tiles of 1024 elements, one per thread; each level adds the slot `off`
// places to the left, in place. Correct code reads the partner, waits at a barrier, then writes,
// and waits again; here no thread waits, so whether a thread reads its partner's value before or
// after the partner's warp has updated it depends on how the warps are scheduled: a race that
// gives wrong prefixes, different from run to run.
/* kjudge
[[launch]]
kernel = "scan_hillis_steele_racy<1024>"
grid = ["R"]
block = [1024]
args = ["x", "y", "R", "C"]
*/
template <int THREADS>
__global__ void scan_hillis_steele_racy(const float* __restrict__ x, float* __restrict__ y, int R,
                                        int C) {
  __shared__ float s[THREADS];
  const int t = threadIdx.x;
  const float* xr = x + static_cast<long long>(blockIdx.x) * C;
  float* yr = y + static_cast<long long>(blockIdx.x) * C;
  float carry = 0.0f;
  for (long long base = 0; base < C; base += THREADS) {
    const long long j = base + t;
    s[t] = j < C ? xr[j] : 0.0f;
    __syncthreads();
    for (int off = 1; off < THREADS; off <<= 1) {
      if (t >= off) s[t] += s[t - off];  // no barrier between the read and the partner's write
    }
    __syncthreads();
    if (j < C) yr[j] = carry + s[t];
    carry += s[THREADS - 1];
    __syncthreads();
  }
}
