extern "C" {
__device__ int counter;
__device__ float table[4] = {1.0f, 2.0f, 3.0f, 4.0f};
__global__ void add(float* a, const float* b, int n);
__global__ void add(float* a, const float* b, int n) { a[0] += b[0] + counter; }
}
extern "C" __global__ void mul(float (&m)[4], void (*fn)(int)) {}
namespace kj::detail { struct Acc { __device__ Acc() : v{0} {} __host__ __device__ float get() const { return v; } float v; }; }
void launch(float* a) { add<<<1, 32>>>(a, a, 1); Vec<Vec<int>>> bad; }
