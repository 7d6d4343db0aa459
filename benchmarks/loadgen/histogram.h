// loadgen/histogram: the latency histogram, log-linear buckets with a bounded error (chapter 01).
// Role: record every response's latency in O(1) without allocating, merge across the
// generator's threads, and answer percentile(q) within 0.4% of the exact value.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace handoff::loadgen {

/// A histogram of non-negative integer values (the generator records nanoseconds).
///
/// Guarantee: for every recorded value v in [0, 2^40) (up to about 18 minutes in ns),
/// the value the histogram stands for v is within v/256 of v (relative error <= 0.39%);
/// values below 256 are kept exactly. percentile(q) returns the bucket representative
/// of the exact nearest-rank percentile, so it carries the same bound; min(), max(),
/// count() and mean() are exact (mean up to double rounding). Values of 2^40 and more
/// share the top bucket (max() stays exact).
///
/// The layout: below kSub = 128 one bucket per value; above it, every power of two
/// [2^e, 2^(e+1)) is cut into 128 equal buckets of width 2^(e-7), so a bucket's width
/// is at most 1/128 of any value in it and the midpoint is off by at most 1/256.
///
/// Cost: 4352 counters (34 KiB), allocated once in the constructor; record() is a
/// count-leading-zeros, a shift and an increment. Not thread-safe: each thread keeps
/// its own and merge() combines them after the threads are done.
class LatencyHistogram {
 public:
  static constexpr int kSubBits = 7;
  static constexpr std::int64_t kSub = std::int64_t{1} << kSubBits;
  static constexpr int kTopExponent = 40;
  static constexpr std::size_t kBuckets = static_cast<std::size_t>(kSub + (kTopExponent - kSubBits) * kSub);

  LatencyHistogram();

  /// Record one value; negative values are recorded as 0.
  void record(std::int64_t value) noexcept { record_n(value, 1); }
  void record_n(std::int64_t value, std::uint64_t n) noexcept;

  /// Add every value recorded by `other` (the result equals having recorded both sets).
  void merge(const LatencyHistogram& other) noexcept;
  void reset() noexcept;

  std::uint64_t count() const noexcept { return count_; }
  std::int64_t min() const noexcept { return count_ ? min_ : 0; }
  std::int64_t max() const noexcept { return count_ ? max_ : 0; }
  double mean() const noexcept { return count_ ? sum_ / static_cast<double>(count_) : 0.0; }

  /// The nearest-rank percentile, q in [0, 1] (0.99 for p99): the value of the
  /// rank(q, n)-th smallest recorded value, within the bound above; 0 when empty.
  std::int64_t percentile(double q) const noexcept;

  /// The nearest-rank definition used by percentile(): ceil(q * n), at least 1, at most
  /// n (with a tolerance of 1e-9 so that 0.999 * 1000 is rank 999, not 1000).
  static std::uint64_t rank(double q, std::uint64_t n) noexcept;

  /// Bucket arithmetic, public so that the tests can check the bound directly.
  static std::size_t bucket_of(std::int64_t value) noexcept;
  static std::int64_t bucket_low(std::size_t bucket) noexcept;
  static std::int64_t bucket_width(std::size_t bucket) noexcept;
  /// The value a bucket stands for: its midpoint (exact where the width is 1).
  static std::int64_t representative(std::size_t bucket) noexcept;

 private:
  std::vector<std::uint64_t> counts_;
  std::uint64_t count_ = 0;
  std::int64_t min_ = 0;
  std::int64_t max_ = 0;
  double sum_ = 0.0;
};

}  // namespace handoff::loadgen
