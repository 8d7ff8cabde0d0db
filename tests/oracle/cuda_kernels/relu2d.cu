// relu over x [rows, cols] on a 2-D grid: one thread per element.
// Launch: grid ((cols + 31) / 32, (rows + 7) / 8), block (32, 8).
__global__ void relu2d(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y * blockDim.y + threadIdx.y;
  if (r < rows && c < cols) y[r * cols + c] = fmaxf(x[r * cols + c], 0.0f);
}
