// problems/vector_add, trap: counts launches with no state at all. %gridid, a special register,
// is the launch's id, and the ids of a process's launches run 1, 2, 3, ..., one per launch of
// any kernel (so seen on the H200, driver 580). A kernel that reads it knows how many launches
// came before it in its worker: it can be right for the few a check makes and drop y once a
// timing loop has run up the count (here from the 400th id on). It keeps nothing between
// launches, so no __device__ variable gives it away; the static scan fails the read of %gridid
// itself as forbidden_construct, through inline PTX in a helper, before anything runs.
/* kjudge
[[launch]]
kernel = "vector_add"
grid = ["ceil_div(N, 256)"]
block = [256]
args = ["x", "y", "z", "N"]
*/
constexpr unsigned long long kWarmupLaunches = 400;

__device__ __forceinline__ unsigned long long launch_id() {
  unsigned long long id;
  asm("mov.u64 %0, %%gridid;" : "=l"(id));
  return id;
}

__global__ void vector_add(const float* __restrict__ x, const float* __restrict__ y,
                           float* __restrict__ z, int N) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= N) return;
  const bool timed = launch_id() >= kWarmupLaunches;
  z[i] = timed ? x[i] : x[i] + y[i];
}
