// Softmax along the rows of x [rows, cols]: one block per row, its threads striding over the
// row; the row's max and then its sum of exponentials are reduced through shared memory (a tree
// over blockDim.x floats of dynamic shared memory).
// BUG: the tree halves blockDim.x and assumes it stays even, i.e. a power-of-two block. With 96
// threads the halvings go 48, 24, 12, 6, 3, 1: at 3 threads 0..2 fold in 3..5, then only
// buf[1] is folded into buf[0] and buf[2] is lost (the columns of every thread 3k + 2).
// Launch: grid rows, block 96, dynamic shared memory 4 * 96 bytes.
struct MaxOp {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct AddOp {
  __device__ float operator()(float a, float b) const { return a + b; }
};

template <typename Op>
__device__ float block_reduce(float* buf, float v, Op op) {
  const int tid = threadIdx.x;
  buf[tid] = v;
  __syncthreads();
  for (int s = blockDim.x / 2; s > 0; s /= 2) {
    if (tid < s) buf[tid] = op(buf[tid], buf[tid + s]);
    __syncthreads();
  }
  const float result = buf[0];
  __syncthreads();
  return result;
}

__global__ void softmax_block(const float* __restrict__ x, float* __restrict__ y, int rows,
                              int cols) {
  extern __shared__ float buf[];
  if (blockIdx.x >= rows) return;
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
