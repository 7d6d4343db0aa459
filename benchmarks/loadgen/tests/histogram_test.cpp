// loadgen/tests/histogram_test: the latency histogram against exact percentiles (chapter 01).
// Role: show the bucket bound (<= 1% from 1 us to 60 s), exactness for small values, the
// percentile walk on known data sets, and that merging equals recording everything once.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "loadgen/histogram.h"

using handoff::loadgen::LatencyHistogram;

namespace {

constexpr std::int64_t kUs = 1'000;
constexpr std::int64_t kSecond = 1'000'000'000;

// Nearest rank for q = per_mille / 1000 in integers only: ceil(per_mille * n / 1000),
// at least 1. An independent statement of the definition percentile() follows.
std::uint64_t rank_per_mille(std::uint64_t per_mille, std::uint64_t n) {
  return std::max<std::uint64_t>(1, (per_mille * n + 999) / 1000);
}

double relative_error(std::int64_t got, std::int64_t exact) {
  return std::abs(static_cast<double>(got - exact)) / static_cast<double>(exact);
}

// Check every per-mille percentile of `values` against the exact one from the sorted data.
void check_against_exact(std::vector<std::int64_t> values) {
  LatencyHistogram h;
  for (const auto v : values) h.record(v);
  std::sort(values.begin(), values.end());
  const auto n = static_cast<std::uint64_t>(values.size());
  REQUIRE(h.count() == n);
  REQUIRE(h.min() == values.front());
  REQUIRE(h.max() == values.back());
  for (std::uint64_t per_mille = 0; per_mille <= 1000; ++per_mille) {
    const double q = static_cast<double>(per_mille) / 1000.0;
    const std::uint64_t rank = rank_per_mille(per_mille, n);
    REQUIRE(LatencyHistogram::rank(q, n) == rank);
    const std::int64_t exact = values[rank - 1];
    const std::int64_t got = h.percentile(q);
    INFO("q=" << q << " exact=" << exact << " got=" << got);
    REQUIRE(relative_error(got, exact) <= 1.0 / 256);
  }
  for (const double q : {0.9999, 0.99999}) {
    const std::int64_t exact = values[LatencyHistogram::rank(q, n) - 1];
    REQUIRE(relative_error(h.percentile(q), exact) <= 0.01);
  }
}

}  // namespace

TEST_CASE("loadgen histogram: values below 256 ns are kept exactly", "[loadgen][ch01]") {
  for (std::int64_t v = 0; v < 256; ++v) {
    REQUIRE(LatencyHistogram::representative(LatencyHistogram::bucket_of(v)) == v);
  }
  LatencyHistogram h;
  for (std::int64_t v = 1; v <= 100; ++v) h.record(v);
  REQUIRE(h.percentile(0.5) == 50);
  REQUIRE(h.percentile(0.9) == 90);
  REQUIRE(h.percentile(0.99) == 99);
  REQUIRE(h.percentile(1.0) == 100);
  REQUIRE(h.percentile(0.0) == 1);
}

TEST_CASE("loadgen histogram: every value from 1 us to 60 s is represented within 1%", "[loadgen][ch01]") {
  double worst = 0;
  std::size_t previous = 0;
  for (double x = kUs; x <= 60.0 * kSecond; x *= 1.0003) {
    const auto v = static_cast<std::int64_t>(x);
    const std::size_t b = LatencyHistogram::bucket_of(v);
    REQUIRE(b >= previous);  // buckets are ordered like the values
    previous = b;
    REQUIRE(b < LatencyHistogram::kBuckets);
    REQUIRE(LatencyHistogram::bucket_low(b) <= v);
    REQUIRE(v < LatencyHistogram::bucket_low(b) + LatencyHistogram::bucket_width(b));
    worst = std::max(worst, relative_error(LatencyHistogram::representative(b), v));
  }
  // The exact edges of every band, where the error is largest relative to the value.
  for (int e = 8; e < 36; ++e) {
    const std::int64_t edge = std::int64_t{1} << e;
    for (const std::int64_t v : {edge - 1, edge, edge + 1}) {
      worst = std::max(worst, relative_error(LatencyHistogram::representative(LatencyHistogram::bucket_of(v)), v));
    }
  }
  INFO("worst relative error " << worst);
  REQUIRE(worst <= 1.0 / 256);
  REQUIRE(worst > 0);
}

TEST_CASE("loadgen histogram: percentiles of a log-uniform set from 1 us to 60 s match the exact ones",
          "[loadgen][ch01]") {
  std::mt19937_64 rng(20240601);
  std::uniform_real_distribution<double> exponent(std::log(1e3), std::log(60e9));
  std::vector<std::int64_t> values(200'000);
  for (auto& v : values) v = static_cast<std::int64_t>(std::exp(exponent(rng)));
  check_against_exact(std::move(values));
}

TEST_CASE("loadgen histogram: percentiles of a uniform set match the exact ones", "[loadgen][ch01]") {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<std::int64_t> dist(20 * kUs, 80 * kUs);
  std::vector<std::int64_t> values(100'000);
  for (auto& v : values) v = dist(rng);
  check_against_exact(std::move(values));
}

TEST_CASE("loadgen histogram: percentiles of a bimodal set match the exact ones", "[loadgen][ch01]") {
  // 90% fast (around 50 us), 10% stalled (around 200 ms): p90 sits on the cliff.
  std::mt19937_64 rng(11);
  std::normal_distribution<double> fast(50e3, 5e3);
  std::normal_distribution<double> slow(200e6, 10e6);
  std::bernoulli_distribution stalled(0.1);
  std::vector<std::int64_t> values(150'000);
  for (auto& v : values)
    v = std::max<std::int64_t>(kUs, static_cast<std::int64_t>(stalled(rng) ? slow(rng) : fast(rng)));
  check_against_exact(values);

  LatencyHistogram h;
  for (const auto v : values) h.record(v);
  REQUIRE(h.percentile(0.5) < 100 * kUs);
  REQUIRE(h.percentile(0.95) > 100'000 * kUs);
}

TEST_CASE("loadgen histogram: a sorted run of equal steps gives the textbook percentiles", "[loadgen][ch01]") {
  // 1 ms, 2 ms, ..., 1000 ms: the q-quantile by nearest rank is q * 1000 ms.
  std::vector<std::int64_t> values;
  for (std::int64_t i = 1; i <= 1000; ++i) values.push_back(i * 1'000'000);
  LatencyHistogram h;
  for (const auto v : values) h.record(v);
  REQUIRE(relative_error(h.percentile(0.50), 500'000'000) <= 0.01);
  REQUIRE(relative_error(h.percentile(0.90), 900'000'000) <= 0.01);
  REQUIRE(relative_error(h.percentile(0.99), 990'000'000) <= 0.01);
  REQUIRE(relative_error(h.percentile(0.999), 999'000'000) <= 0.01);
  REQUIRE(h.percentile(1.0) == 1'000'000'000);
  REQUIRE(h.mean() == Approx(500.5e6).epsilon(1e-12));
  check_against_exact(values);
}

TEST_CASE("loadgen histogram: merging per-thread histograms equals recording everything in one", "[loadgen][ch01]") {
  std::mt19937_64 rng(3);
  std::lognormal_distribution<double> dist(11.0, 1.5);  // median about 60 us, long tail
  LatencyHistogram all;
  LatencyHistogram parts[4];
  for (int i = 0; i < 80'000; ++i) {
    const auto v = static_cast<std::int64_t>(dist(rng));
    all.record(v);
    parts[i % 4].record(v);
  }
  LatencyHistogram merged;
  for (const auto& p : parts) merged.merge(p);
  REQUIRE(merged.count() == all.count());
  REQUIRE(merged.min() == all.min());
  REQUIRE(merged.max() == all.max());
  REQUIRE(merged.mean() == Approx(all.mean()).epsilon(1e-12));
  for (const double q : {0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0}) REQUIRE(merged.percentile(q) == all.percentile(q));
}

TEST_CASE("loadgen histogram: an empty histogram answers zero and reset empties it", "[loadgen][ch01]") {
  LatencyHistogram h;
  REQUIRE(h.count() == 0);
  REQUIRE(h.percentile(0.99) == 0);
  REQUIRE(h.min() == 0);
  REQUIRE(h.max() == 0);
  REQUIRE(h.mean() == 0.0);
  h.record(5 * kSecond);
  h.record(-3);  // recorded as 0
  REQUIRE(h.min() == 0);
  REQUIRE(h.count() == 2);
  h.reset();
  REQUIRE(h.count() == 0);
  REQUIRE(h.percentile(0.5) == 0);
  LatencyHistogram other;
  other.merge(h);  // merging an empty one changes nothing
  REQUIRE(other.count() == 0);
}
