// y = transpose(x), x [rows, cols], y [cols, rows], through a 32 x 32 tile of shared memory so
// that both the reads of x and the writes of y are coalesced. A block of 32 x 8 threads moves
// one tile, each thread four of its elements. Tile entries outside x are zero-filled.
// Launch: grid ((cols + 31) / 32, (rows + 31) / 32), block (32, 8).
constexpr int TILE = 32;
constexpr int ROWS = 8;

__global__ void transpose_tiled(const float* __restrict__ x, float* __restrict__ y, int rows,
                                int cols) {
  __shared__ float tile[TILE][TILE + 1];  // + 1: the column reads hit 32 different banks
  const int c = blockIdx.x * TILE + threadIdx.x;
  const int r0 = blockIdx.y * TILE + threadIdx.y;
  for (int j = 0; j < TILE; j += ROWS) {
    const int r = r0 + j;
    tile[threadIdx.y + j][threadIdx.x] = (r < rows && c < cols) ? x[r * cols + c] : 0.0f;
  }
  __syncthreads();
  // The same tile of y: its rows are the tile's columns.
  const int yc = blockIdx.y * TILE + threadIdx.x;   // a row of x
  const int yr0 = blockIdx.x * TILE + threadIdx.y;  // a column of x
  for (int j = 0; j < TILE; j += ROWS) {
    const int yr = yr0 + j;
    if (yr < cols && yc < rows) y[yr * rows + yc] = tile[threadIdx.x][threadIdx.y + j];
  }
}
