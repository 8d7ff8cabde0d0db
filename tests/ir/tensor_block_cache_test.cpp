// The kept large blocks behind tensors' bytes (uops/ir/tensor.h, detail::allocate_block): a freed
// block serves the next tensor of its size class, what is kept stays under the limit, a kept block
// is zeroed again for a zero-filled tensor, and tensors made and freed on many threads at once
// neither lose nor share a block; a block of a huge page and more starts on one and asks for huge
// pages over its whole huge pages only; smaller blocks start at spread offsets into a page.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "uops/ir/tensor.h"

namespace uops {
namespace {

using detail::block_cache_stats;
using detail::set_block_cache_limit;

// Each test starts from an empty cache with the default limit, and leaves the limit as it was.
class BlockCache : public ::testing::Test {
 protected:
  void SetUp() override {
    limit_ = set_block_cache_limit(0);
    set_block_cache_limit(limit_);
  }
  void TearDown() override {
    set_block_cache_limit(0);
    set_block_cache_limit(limit_);
  }
  std::size_t limit_ = 0;
};

constexpr int64_t kFloats = 1 << 20;  // 4 MiB: kept

TEST_F(BlockCache, AFreedLargeBlockServesTheNextTensorOfItsClass) {
  const unsigned char* first;
  {
    Tensor t = Tensor::uninitialized(DType::f32, {kFloats});
    first = t.bytes.data();
    EXPECT_EQ(block_cache_stats().blocks, 0u);
  }
  auto kept = block_cache_stats();
  EXPECT_EQ(kept.blocks, 1u);
  EXPECT_GE(kept.bytes, std::size_t(kFloats) * 4);
  // A little smaller rounds up to the same class: the same block.
  Tensor u = Tensor::uninitialized(DType::f32, {kFloats - 1000});
  EXPECT_EQ(u.bytes.data(), first);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(u.bytes.data()) % 4096, 0u);  // large: on a page
  EXPECT_EQ(block_cache_stats().blocks, 0u);
  EXPECT_EQ(block_cache_stats().hits, kept.hits + 1);
}

// The VmFlags of the mapping holding `p` in /proc/self/smaps ("" where none holds it).
std::string vm_flags_at(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  const auto at = reinterpret_cast<uintptr_t>(p);
  bool inside = false;
  for (std::string line; std::getline(smaps, line);) {
    uintptr_t begin = 0, end = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> begin >> dash >> end && dash == '-') {
      inside = begin <= at && at < end;
    } else if (inside && line.rfind("VmFlags:", 0) == 0) {
      return line;
    }
  }
  return "";
}

TEST_F(BlockCache, HugePageBlocksStartOnOneAndAskForHugePagesOverTheirWholeOnes) {
  constexpr uintptr_t kHuge = uintptr_t(2) << 20;
  Tensor t = Tensor::uninitialized(DType::f32, {3 << 18});  // 3 MiB
  const unsigned char* p = t.bytes.data();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % kHuge, 0u);
  Tensor below = Tensor::uninitialized(DType::f32, {kFloats / 4});  // 1 MiB: a page is enough
  EXPECT_EQ(reinterpret_cast<uintptr_t>(below.bytes.data()) % 4096, 0u);
  if (!std::filesystem::exists("/sys/kernel/mm/transparent_hugepage/enabled"))
    GTEST_SKIP() << "this kernel has no transparent huge pages to ask for";
  // "hg": the range was advised MADV_HUGEPAGE. The last MiB, not a whole huge page, was not.
  EXPECT_NE(vm_flags_at(p).find(" hg"), std::string::npos) << vm_flags_at(p);
  EXPECT_EQ(vm_flags_at(p + kHuge).find(" hg"), std::string::npos) << vm_flags_at(p + kHuge);
  EXPECT_EQ(vm_flags_at(below.bytes.data()).find(" hg"), std::string::npos);
}

TEST_F(BlockCache, SmallBlocksAndOtherClassesAreNotServedFromIt) {
  { Tensor t = Tensor::uninitialized(DType::f32, {kFloats}); }
  { Tensor small(DType::f32, {1000}); }
  EXPECT_EQ(block_cache_stats().blocks, 1u);  // the small one went back to malloc
  auto before = block_cache_stats();
  Tensor twice = Tensor::uninitialized(DType::f32, {2 * kFloats});
  EXPECT_EQ(block_cache_stats().hits, before.hits);
  EXPECT_EQ(block_cache_stats().blocks, 1u);
}

// Blocks from 1 KiB to below the kept ones start 1 to 3 KiB into a page, where the large blocks
// start on one, and consecutive ones at different offsets: a kernel's loads from one do not wait on
// its stores to another at the same offset (4K aliasing).
TEST_F(BlockCache, SmallBlocksStartAwayFromThePageStartEachAtAnotherOffset) {
  auto offset = [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.bytes.data()) % 4096; };
  std::vector<Tensor> ts;
  std::set<uintptr_t> offsets;
  for (int64_t floats : {256, 1000, 1024, 4096, 65535}) {  // 1 KiB up to under 256 KiB
    for (int i = 0; i < 2; ++i) {
      ts.push_back(Tensor::uninitialized(DType::f32, {floats}));
      std::fill(ts.back().bytes.begin(), ts.back().bytes.end(), 0x5a);  // all of it is its own
      EXPECT_GE(offset(ts.back()), 1024u);
      EXPECT_LT(offset(ts.back()), 3072u);
      EXPECT_EQ(offset(ts.back()) % 64, 0u);
      if (ts.size() > 1) {
        EXPECT_NE(offset(ts.back()), offset(ts[ts.size() - 2]));
      }
      offsets.insert(offset(ts.back()));
    }
  }
  EXPECT_GE(offsets.size(), 8u);
  Tensor tiny(DType::f32, {255});  // under 1 KiB: a cache line is enough
  EXPECT_EQ(reinterpret_cast<uintptr_t>(tiny.bytes.data()) % 64, 0u);
  EXPECT_EQ(block_cache_stats().blocks, 0u);  // none of them is kept
}

TEST_F(BlockCache, AReusedBlockIsZeroedForAZeroFilledTensor) {
  {
    Tensor t = Tensor::uninitialized(DType::f32, {kFloats});
    std::fill(t.bytes.begin(), t.bytes.end(), 0xff);
  }
  Tensor z(DType::f32, {kFloats});
  EXPECT_EQ(block_cache_stats().blocks, 0u);  // it came from the cache
  EXPECT_TRUE(std::all_of(z.bytes.begin(), z.bytes.end(), [](unsigned char b) { return b == 0; }));
}

TEST_F(BlockCache, WhatIsKeptStaysUnderTheLimitOldestFirst) {
  set_block_cache_limit(std::size_t(10) << 20);  // two 4 MiB blocks, not three
  std::vector<const unsigned char*> blocks;
  {
    std::vector<Tensor> ts;
    for (int i = 0; i < 3; ++i) {
      ts.push_back(Tensor::uninitialized(DType::f32, {kFloats}));
      blocks.push_back(ts.back().bytes.data());
    }
  }  // freed first to last: the first is dropped for the third
  auto s = block_cache_stats();
  EXPECT_EQ(s.blocks, 2u);
  EXPECT_LE(s.bytes, std::size_t(10) << 20);
  // A block larger than the whole limit is not kept.
  { Tensor big = Tensor::uninitialized(DType::f32, {4 * kFloats}); }
  EXPECT_EQ(block_cache_stats().blocks, 2u);
  // The newest kept block comes back first.
  Tensor t = Tensor::uninitialized(DType::f32, {kFloats});
  EXPECT_EQ(t.bytes.data(), blocks[2]);
  // Lowering the limit frees what no longer fits; 0 keeps nothing.
  set_block_cache_limit(0);
  EXPECT_EQ(block_cache_stats().blocks, 0u);
  EXPECT_EQ(block_cache_stats().bytes, 0u);
  { Tensor u = Tensor::uninitialized(DType::f32, {kFloats}); }
  EXPECT_EQ(block_cache_stats().blocks, 0u);
}

TEST_F(BlockCache, ThreadsNeverShareABlock) {
  constexpr int kThreads = 4, kRounds = 200;
  std::size_t hits = block_cache_stats().hits;
  std::atomic<bool> overlap{false};
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([i, &overlap] {
      for (int r = 0; r < kRounds; ++r) {
        // Sizes in two classes, so that threads take each other's freed blocks.
        Tensor t = Tensor::uninitialized(DType::f32, {(r + i) % 2 ? kFloats / 4 : kFloats / 2});
        std::fill(t.bytes.begin(), t.bytes.end(), static_cast<unsigned char>(i));
        std::this_thread::yield();
        overlap = overlap || std::any_of(t.bytes.begin(), t.bytes.end(), [i](unsigned char b) {
                    return b != static_cast<unsigned char>(i);
                  });
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_FALSE(overlap);
  auto s = block_cache_stats();
  EXPECT_LE(s.bytes, limit_);
  EXPECT_GT(s.hits, hits);
}

}  // namespace
}  // namespace uops
