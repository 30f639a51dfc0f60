// A candidate for problems/softmax: the plan may follow line comments and #includes.
#include <cuda_fp16.h>

/* kjudge
[[launch]]
kernel = "softmax_rows<4>"       # C++ linkage; templates allowed
grid = ["ceil_div(R, 4)"]
block = [128]
shared = "0"
args = ["x", "y", "R", "C", "partial"]

[[launch]]
kernel = "finish"
grid = [1]
block = [32]
repeat = "ceil_log2(R)"
args = ["partial", "i", "R"]

[[scratch]]                      # workspace; poisoned unless init = "zero"
name = "partial"
dtype = "f32"
shape = ["R"]
init = "zero"
*/
template <int ROWS>
__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int R, int C,
                             float* partial) {}
__global__ void finish(float* partial, int i, int R) {}
