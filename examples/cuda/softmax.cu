// Softmax along the rows of x [rows, cols] into y, written by hand for CUDA, to be checked
// against uops' softmax by examples/check_cuda_kernel.cpp.
//
// Each block takes rows blockIdx.x, blockIdx.x + gridDim.x, ... (any grid works; one block per
// row is the usual launch). Its threads, any multiple of 32 up to 1024, stride over the row:
// first the row's max, then the sum of exp(x - max), each reduced in two steps: a butterfly of
// warp shuffles inside each warp, then warp 0 over the warps' results, passed through shared
// memory. Any row length: a thread past the end of a short row contributes the identity.
//
// Launch: grid min(rows, 1024), block 256 (or any multiple of 32 up to 1024).
constexpr unsigned kFullMask = 0xffffffffu;
constexpr float kLowest = -3.402823466e38f;  // -FLT_MAX: the identity of max on finite floats

__device__ float warp_max(float v) {
  for (int offset = 16; offset > 0; offset /= 2)
    v = fmaxf(v, __shfl_xor_sync(kFullMask, v, offset));
  return v;  // in every lane
}

__device__ float warp_sum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_xor_sync(kFullMask, v, offset);
  return v;  // in every lane
}

// The max (IsMax) or the sum of v over the block, in every thread. `red` is 33 floats of shared
// memory: a slot per warp and one for the result. Back-to-back calls need no barrier between
// them: a call writes red[warp] before its first barrier, and every thread has read the
// previous result (red[32]) before it reaches that barrier; red[32] is written only after it.
template <bool IsMax>
__device__ float block_reduce(float v, float* red) {
  const int lane = threadIdx.x % 32;
  const int warp = threadIdx.x / 32;
  const int warps = blockDim.x / 32;
  const float identity = IsMax ? kLowest : 0.0f;
  v = IsMax ? warp_max(v) : warp_sum(v);
  if (lane == 0) red[warp] = v;
  __syncthreads();
  if (warp == 0) {
    v = lane < warps ? red[lane] : identity;
    v = IsMax ? warp_max(v) : warp_sum(v);
    if (lane == 0) red[32] = v;
  }
  __syncthreads();
  return red[32];
}

__global__ void softmax_rows(const float* __restrict__ x, float* __restrict__ y, int rows,
                             int cols) {
  __shared__ float red[33];
  for (int row = blockIdx.x; row < rows; row += gridDim.x) {  // the same for the whole block
    const float* xr = x + static_cast<long long>(row) * cols;
    float* yr = y + static_cast<long long>(row) * cols;

    float m = kLowest;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, xr[j]);
    m = block_reduce<true>(m, red);

    float s = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) s += expf(xr[j] - m);
    s = block_reduce<false>(s, red);

    const float inv = 1.0f / s;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) yr[j] = expf(xr[j] - m) * inv;
  }
}
