// Softmax along the rows of x [rows, cols]: one block of BLOCK threads (a multiple of 32) per
// row. Each warp reduces its threads' partial max (then sum) with shuffles, lane 0 of each warp
// leaves it in shared memory, and warp 0 reduces those and leaves the row's value after them.
// BUG: no __syncthreads between lane 0 of each warp writing its partial max to red[warp] and
// warp 0 reading red[lane]: warp 0 may read a partial another warp has not written yet.
// Launch: grid rows, block BLOCK (entry softmax_warp<BLOCK>).
constexpr unsigned kFullMask = 0xffffffffu;
constexpr float kLowest = -3.402823466e38f;

__device__ float warp_max(float v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v = fmaxf(v, __shfl_xor_sync(kFullMask, v, offset));
  return v;
}

__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(kFullMask, v, offset);
  return v;
}

template <int BLOCK>
__global__ void softmax_warp(const float* __restrict__ x, float* __restrict__ y, int rows,
                             int cols) {
  constexpr int WARPS = BLOCK / 32;
  __shared__ float red[WARPS + 1];  // one partial per warp, then the row's value
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const float* xr = x + blockIdx.x * cols;
  float* yr = y + blockIdx.x * cols;

  float m = kLowest;
  for (int j = threadIdx.x; j < cols; j += BLOCK) m = fmaxf(m, xr[j]);
  m = warp_max(m);
  if (lane == 0) red[warp] = m;
  if (warp == 0) {
    float v = lane < WARPS ? red[lane] : kLowest;
    v = warp_max(v);
    if (lane == 0) red[WARPS] = v;
  }
  __syncthreads();
  m = red[WARPS];

  float s = 0.0f;
  for (int j = threadIdx.x; j < cols; j += BLOCK) s += expf(xr[j] - m);
  s = warp_sum(s);
  if (lane == 0) red[warp] = s;
  __syncthreads();
  if (warp == 0) {
    float v = lane < WARPS ? red[lane] : 0.0f;
    v = warp_sum(v);
    if (lane == 0) red[WARPS] = v;
  }
  __syncthreads();
  const float inv = 1.0f / red[WARPS];

  for (int j = threadIdx.x; j < cols; j += BLOCK) yr[j] = expf(xr[j] - m) * inv;
}
