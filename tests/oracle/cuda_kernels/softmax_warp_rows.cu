// Softmax along the rows of x [rows, cols]: one warp per row, blockDim.y rows per block. The
// row's max and sum are butterfly reductions over the warp's 32 lanes (every lane ends with the
// result), unrolled.
// Launch: grid (rows + 3) / 4, block (32, 4).
constexpr unsigned kFullMask = 0xffffffffu;

__device__ float warp_max(float v) {
  v = fmaxf(v, __shfl_xor_sync(kFullMask, v, 16));
  v = fmaxf(v, __shfl_xor_sync(kFullMask, v, 8));
  v = fmaxf(v, __shfl_xor_sync(kFullMask, v, 4));
  v = fmaxf(v, __shfl_xor_sync(kFullMask, v, 2));
  v = fmaxf(v, __shfl_xor_sync(kFullMask, v, 1));
  return v;
}

__device__ float warp_sum(float v) {
  v += __shfl_xor_sync(kFullMask, v, 16);
  v += __shfl_xor_sync(kFullMask, v, 8);
  v += __shfl_xor_sync(kFullMask, v, 4);
  v += __shfl_xor_sync(kFullMask, v, 2);
  v += __shfl_xor_sync(kFullMask, v, 1);
  return v;
}

__global__ void softmax_warp_rows(const float* __restrict__ x, float* __restrict__ y, int rows,
                                  int cols) {
  const int row = blockIdx.x * blockDim.y + threadIdx.y;
  if (row >= rows) return;  // the whole warp: no barrier below, and its mask is its own
  const int lane = threadIdx.x;
  const float* xr = x + row * cols;
  float* yr = y + row * cols;

  float m = -3.402823466e38f;
  for (int j = lane; j < cols; j += 32) m = fmaxf(m, xr[j]);
  m = warp_max(m);

  float s = 0.0f;
  for (int j = lane; j < cols; j += 32) s += __expf(xr[j] - m);
  s = warp_sum(s);

  const float inv = 1.0f / s;
  for (int j = lane; j < cols; j += 32) yr[j] = __expf(xr[j] - m) * inv;
}
