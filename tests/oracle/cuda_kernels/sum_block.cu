// y[r] = sum of row r of x [rows, cols]: one block per row, its threads striding over the row.
// Each warp sums its threads' partials with shuffles, lane 0 of each warp leaves the warp's sum
// in shared memory, and warp 0 adds those up. The block must be whole warps: a multiple of 32,
// at most 1024 threads.
// Launch: grid rows, block 128 (or min((cols + 31) / 32 * 32, 1024): one thread per column).
constexpr unsigned kFullMask = 0xffffffffu;

__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(kFullMask, v, offset);
  return v;  // lane 0 holds the warp's sum
}

__global__ void sum_rows(const float* __restrict__ x, float* __restrict__ y, int rows,
                         int cols) {
  __shared__ float warp_sums[32];  // up to 32 warps
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const int warps = blockDim.x / 32;
  const float* xr = x + blockIdx.x * cols;

  float v = 0.0f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) v += xr[j];
  v = warp_sum(v);
  if (lane == 0) warp_sums[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < warps ? warp_sums[lane] : 0.0f;
    v = warp_sum(v);
    if (lane == 0) y[blockIdx.x] = v;
  }
}
