// A candidate without a launch plan: "/* kjudge" in a string is not one.
const char* s = "/* kjudge */";
__global__ void k(const float* x, float* y, int R, int C) {}
