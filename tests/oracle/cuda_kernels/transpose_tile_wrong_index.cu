// y = transpose(x), x [rows, cols], y [cols, rows], through a 32 x 32 tile of shared memory.
// BUG: the write reads the tile at [threadIdx.y + j][threadIdx.x], as it was loaded, instead of
// at [threadIdx.x][threadIdx.y + j]: each tile lands in y untransposed.
// Launch: grid ((cols + 31) / 32, (rows + 31) / 32), block (32, 8).
constexpr int TILE = 32;
constexpr int ROWS = 8;

__global__ void transpose_tiled(const float* __restrict__ x, float* __restrict__ y, int rows,
                                int cols) {
  __shared__ float tile[TILE][TILE + 1];
  const int c = blockIdx.x * TILE + threadIdx.x;
  const int r0 = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS) {
    const int r = r0 + j;
    tile[threadIdx.y + j][threadIdx.x] = (r < rows && c < cols) ? x[r * cols + c] : 0.0f;
  }
  __syncthreads();
  const int yc = blockIdx.y * TILE + threadIdx.x;
  const int yr0 = blockIdx.x * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS) {
    const int yr = yr0 + j;
    if (yr < cols && yc < rows) y[yr * rows + yc] = tile[threadIdx.y + j][threadIdx.x];
  }
}
