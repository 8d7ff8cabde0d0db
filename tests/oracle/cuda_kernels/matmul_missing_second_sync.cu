// c = a b, a [M, K], b [K, N], c [M, N]: shared-memory tiles of TILE x TILE, one thread per
// element of c. Each step of the loop over K loads a tile of a and one of b (zero past the
// edges), waits for the whole tile and accumulates.
// BUG: no __syncthreads after the accumulation: when K > TILE, a thread that goes on to the next
// step overwrites as and bs while other threads of its block still read the previous tiles.
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
    as[ty][tx] = (row < M && k0 + tx < K) ? a[row * K + k0 + tx] : 0.0f;
    bs[ty][tx] = (k0 + ty < K && col < N) ? b[(k0 + ty) * N + col] : 0.0f;
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc += as[ty][k] * bs[k][tx];
  }
  if (row < M && col < N) c[row * N + col] = acc;
}
