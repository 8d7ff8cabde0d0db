// Softmax along the rows of x [rows, cols]: one block per row, its threads striding over the
// row; the row's max and then its sum of exponentials are reduced through shared memory (a tree
// over blockDim.x floats of dynamic shared memory). Any block size: the part of the block past
// the largest power of two is folded in first.
// Launch: grid rows, block B (any size up to 1024), dynamic shared memory 4 * B bytes.
struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct AddOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};

// Every thread of the block calls it with its own v; every thread gets the reduction.
template <typename Op>
__device__ float block_reduce(float* buf, float v, Op op) {
  const int tid = threadIdx.x;
  const int n = blockDim.x;
  buf[tid] = v;
  __syncthreads();
  int p = 1;  // the largest power of two <= n
  while (2 * p <= n) p *= 2;
  if (tid < n - p) buf[tid] = op(buf[tid], buf[tid + p]);
  __syncthreads();
  for (int s = p / 2; s > 0; s /= 2) {
    if (tid < s) buf[tid] = op(buf[tid], buf[tid + s]);
    __syncthreads();
  }
  const float result = buf[0];
  __syncthreads();  // everyone has read buf[0] before the next reduction overwrites it
  return result;
}

__global__ void softmax_block(const float* __restrict__ x, float* __restrict__ y, int rows,
                              int cols) {
  extern __shared__ float buf[];
  if (blockIdx.x >= rows) return;  // the whole block
  const float* xr = x + blockIdx.x * cols;
  float* yr = y + blockIdx.x * cols;

  float m = -3.402823466e38f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, xr[j]);
  m = block_reduce(buf, m, MaxOp());

  float s = 0.0f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) s += expf(xr[j] - m);
  s = block_reduce(buf, s, AddOp());

  const float inv = 1.0f / s;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) yr[j] = expf(xr[j] - m) * inv;
}
