// relu over x [rows, cols] on a 2-D grid: one thread per element.
// BUG: the row stride is the width of the grid (gridDim.x * blockDim.x: cols rounded up to 32),
// not cols, so from the second row on every access is shifted, and the last rows read and write
// past the end of x and y.
// Launch: grid ((cols + 31) / 32, (rows + 7) / 8), block (32, 8).
__global__ void relu2d(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  const int r = blockIdx.y * blockDim.y + threadIdx.y;
  const int width = gridDim.x * blockDim.x;
  if (r < rows && c < cols) y[r * width + c] = fmaxf(x[r * width + c], 0.0f);
}
