// relu with float4 loads and stores: four elements per thread and step of a grid-stride loop.
// BUG: no tail loop, so when n is not a multiple of 4 the last n % 4 elements of y are never
// written.
// Launch: grid (n + 511) / 512, block 128.
__global__ void relu_float4(const float* __restrict__ x, float* __restrict__ y, int n) {
  const int first = blockIdx.x * blockDim.x + threadIdx.x;
  const int stride = blockDim.x * gridDim.x;
  const int n4 = n / 4;
  const float4* x4 = reinterpret_cast<const float4*>(x);
  float4* y4 = reinterpret_cast<float4*>(y);
  for (int i = first; i < n4; i += stride) {
    float4 v = x4[i];
    v.x = fmaxf(v.x, 0.0f);
    v.y = fmaxf(v.y, 0.0f);
    v.z = fmaxf(v.z, 0.0f);
    v.w = fmaxf(v.w, 0.0f);
    y4[i] = v;
  }
}
