// relu, one thread per element: y = max(x, 0) over the n = rows * cols elements of x.
// Launch: grid (n + 255) / 256, block 256.
__global__ void relu_kernel(const float* __restrict__ x, float* __restrict__ y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = fmaxf(x[i], 0.0f);
}
