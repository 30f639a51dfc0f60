// Test fixture: a golden plan.
__global__ void full_golden(const double* x, double* y, int R, int C) {}
