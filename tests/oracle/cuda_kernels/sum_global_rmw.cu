// y[r] = sum of row r of x [rows, cols]: one block per row. Thread 0 zeroes y[r]; each warp
// sums its threads' partials with shuffles and lane 0 adds the warp's sum to y[r].
// BUG: the add is a plain read-modify-write of y[r] where it needs atomicAdd: lane 0 of each of
// the block's warps reads and writes y[r] with nothing ordering them, and updates are lost.
// Launch: grid rows, block 128.
constexpr unsigned kFullMask = 0xffffffffu;

__global__ void sum_warp_atomic(const float* __restrict__ x, float* __restrict__ y, int rows,
                                int cols) {
  if (threadIdx.x == 0) y[blockIdx.x] = 0.0f;
  __syncthreads();
  const float* xr = x + blockIdx.x * cols;
  float v = 0.0f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) v += xr[j];
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(kFullMask, v, offset);
  if (threadIdx.x % 32 == 0) y[blockIdx.x] = y[blockIdx.x] + v;
}
