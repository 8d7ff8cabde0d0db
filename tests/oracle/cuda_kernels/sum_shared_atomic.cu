// y[r] = sum of row r of x [rows, cols]: one block per row; each thread sums its columns, then
// adds its partial to a shared accumulator with atomicAdd.
// Launch: grid rows, block 128.
__global__ void sum_shared_atomic(const float* __restrict__ x, float* __restrict__ y, int rows,
                                  int cols) {
  __shared__ float acc;
  if (threadIdx.x == 0) acc = 0.0f;
  __syncthreads();
  const float* xr = x + blockIdx.x * cols;
  float v = 0.0f;
  for (int j = threadIdx.x; j < cols; j += blockDim.x) v += xr[j];
  atomicAdd(&acc, v);
  __syncthreads();
  if (threadIdx.x == 0) y[blockIdx.x] = acc;
}
