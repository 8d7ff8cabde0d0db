// y[r] = sum of row r of x [rows, cols]: one thread per row (a good fit for many short rows).
// Launch: grid (rows + 127) / 128, block 128.
__global__ void sum_thread_per_row(const float* __restrict__ x, float* __restrict__ y, int rows,
                                   int cols) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float acc = 0.0f;
  for (int j = 0; j < cols; ++j) acc += x[row * cols + j];
  y[row] = acc;
}
