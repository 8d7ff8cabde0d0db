// c = a b, a [M, K], b [K, N], c [M, N]: shared-memory tiles of TILE x TILE, one thread per
// element of c. Each step of the loop over K loads a tile of a and one of b, waits for the whole
// tile, accumulates, and waits again before the next load overwrites the tiles.
// BUG: no bounds checks: the kernel assumes M, N and K are multiples of TILE. Otherwise the
// edge tiles read past the end of a or b, and the edge threads write past the end of c.
// Launch: grid ((N + 15) / 16, (M + 15) / 16), block (16, 16) (entry matmul_tiled<16>).
template <int TILE>
__global__ void matmul_tiled(const float* __restrict__ a, const float* __restrict__ b,
                             float* __restrict__ c, int M, int N, int K) {
  __shared__ float as[TILE][TILE];
  __shared__ float bs[TILE][TILE];
  const int tx = threadIdx.x;
  const int ty = threadIdx.y;
  const int row = blockIdx.y * TILE + ty;
  const int col = blockIdx.x * TILE + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < K; k0 += TILE) {
    as[ty][tx] = a[row * K + k0 + tx];
    bs[ty][tx] = b[(k0 + ty) * N + col];
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += as[ty][k] * bs[k][tx];
    __syncthreads();
  }
  c[row * N + col] = acc;
}
