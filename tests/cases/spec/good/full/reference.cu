// Test fixture: the loader only reads and hashes this file.
#include "kjudge/device.cuh"
template <class T>
__global__ void full_ref(const T* x, const int* idx, const __nv_bfloat16* table, const bool* mask,
                         T* y, long long* arg, __half* s, float eps, double alpha, int groups,
                         int R, int C, long long n) {}
template <class T, int K>
__global__ void full_scan(__half* s, int R, int i, int k) {}
