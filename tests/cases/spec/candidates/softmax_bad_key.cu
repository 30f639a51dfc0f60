// Line 1
// Line 2

/* kjudge
[[launch]]
kernel = "k"
grid = [1]
blok = [128]
args = ["x", "y", "R", "C"]
*/
__global__ void k(const float* x, float* y, int R, int C) {}
