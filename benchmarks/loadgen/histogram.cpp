// loadgen/histogram: the latency histogram, log-linear buckets with a bounded error (chapter 01).
// Role: the bucket arithmetic, recording, merging and the percentile walk.
#include "loadgen/histogram.h"

#include <algorithm>
#include <bit>
#include <cmath>

namespace handoff::loadgen {

LatencyHistogram::LatencyHistogram() : counts_(kBuckets, 0) {}

std::size_t LatencyHistogram::bucket_of(std::int64_t value) noexcept {
  if (value < kSub) return value < 0 ? 0 : static_cast<std::size_t>(value);
  const auto v = static_cast<std::uint64_t>(value);
  const int exponent = std::bit_width(v) - 1;  // v is in [2^exponent, 2^(exponent+1))
  if (exponent >= kTopExponent) return kBuckets - 1;
  const int shift = exponent - kSubBits;
  // The top kSubBits+1 bits of v: in [kSub, 2*kSub); the leading 1 selects the band.
  const auto top = static_cast<std::int64_t>(v >> shift);
  return static_cast<std::size_t>(kSub + shift * kSub + (top - kSub));
}

std::int64_t LatencyHistogram::bucket_low(std::size_t bucket) noexcept {
  const auto b = static_cast<std::int64_t>(bucket);
  if (b < kSub) return b;
  const std::int64_t shift = (b - kSub) / kSub;
  const std::int64_t sub = (b - kSub) % kSub;
  return (kSub + sub) << shift;
}

std::int64_t LatencyHistogram::bucket_width(std::size_t bucket) noexcept {
  const auto b = static_cast<std::int64_t>(bucket);
  if (b < kSub) return 1;
  return std::int64_t{1} << ((b - kSub) / kSub);
}

std::int64_t LatencyHistogram::representative(std::size_t bucket) noexcept {
  return bucket_low(bucket) + bucket_width(bucket) / 2;
}

void LatencyHistogram::record_n(std::int64_t value, std::uint64_t n) noexcept {
  if (n == 0) return;
  if (value < 0) value = 0;
  counts_[bucket_of(value)] += n;
  if (count_ == 0) {
    min_ = max_ = value;
  } else {
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
  }
  count_ += n;
  sum_ += static_cast<double>(value) * static_cast<double>(n);
}

void LatencyHistogram::merge(const LatencyHistogram& other) noexcept {
  if (other.count_ == 0) return;
  for (std::size_t i = 0; i < kBuckets; ++i) counts_[i] += other.counts_[i];
  if (count_ == 0) {
    min_ = other.min_;
    max_ = other.max_;
  } else {
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
  }
  count_ += other.count_;
  sum_ += other.sum_;
}

void LatencyHistogram::reset() noexcept {
  std::fill(counts_.begin(), counts_.end(), 0);
  count_ = 0;
  min_ = max_ = 0;
  sum_ = 0.0;
}

std::uint64_t LatencyHistogram::rank(double q, std::uint64_t n) noexcept {
  if (n == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  const double r = std::ceil(q * static_cast<double>(n) - 1e-9);
  if (r < 1.0) return 1;
  if (r >= static_cast<double>(n)) return n;
  return static_cast<std::uint64_t>(r);
}

std::int64_t LatencyHistogram::percentile(double q) const noexcept {
  if (count_ == 0) return 0;
  const std::uint64_t want = rank(q, count_);
  if (want == count_) return max_;
  if (want == 1) return min_;
  std::uint64_t seen = 0;
  for (std::size_t i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    // The want-th smallest value lies in bucket i; min_ and max_ bound it too, and
    // clamping to them only moves the answer towards the true value.
    if (seen >= want) return std::clamp(representative(i), min_, max_);
  }
  return max_;
}

}  // namespace handoff::loadgen
