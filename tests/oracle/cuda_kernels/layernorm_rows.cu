// Layer normalization along the rows of x [rows, cols]:
//   y = (x - mean) * rsqrt(biased variance + 1e-5) * gamma + beta,
// one block per row (a multiple of 32 threads), two passes over the row (the mean, then the
// variance around it), each a block sum: warp shuffles, then the warps' sums through shared
// memory. The same shared buffer serves both sums.
// Launch: grid rows, block 128.
constexpr unsigned kFullMask = 0xffffffffu;

__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(kFullMask, v, offset);
  return v;  // every lane holds the warp's sum
}

// Every thread of the block calls it; every thread gets the block's sum.
__device__ float block_sum(float v, float* red) {
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const int warps = blockDim.x / 32;
  v = warp_sum(v);
  if (lane == 0) red[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = warp_sum(lane < warps ? red[lane] : 0.0f);
    if (lane == 0) red[0] = v;
  }
  __syncthreads();
  const float total = red[0];
  __syncthreads();  // every thread has read red[0] before the next block_sum writes red
  return total;
}

__global__ void layernorm_rows(const float* __restrict__ x, const float* __restrict__ gamma,
                               const float* __restrict__ beta, float* __restrict__ y, int rows,
                               int cols) {
  __shared__ float red[32];
  const float* xr = x + blockIdx.x * cols;
  float* yr = y + blockIdx.x * cols;

  float s = 0.0f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) s += xr[j];
  const float mean = block_sum(s, red) / cols;

  float q = 0.0f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) {
    const float d = xr[j] - mean;
    q += d * d;
  }
  const float var = block_sum(q, red) / cols;
  const float rstd = rsqrtf(var + 1e-5f);

  for (int j = threadIdx.x; j < cols; j += blockDim.x)
    yr[j] = (xr[j] - mean) * rstd * gamma[j] + beta[j];
}
