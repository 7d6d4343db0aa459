// probes/herd_probe: W threads asleep on one datagram socket: which one the kernel wakes, how
// many wake, and what a wake costs, beside a wake channel per thread (chapter 03).
// Role: measure the choice chapter 03 makes for the pool: chapter 01/02's shared lane (every
// thread of a lane blocked in recv on one datagram socket, the kernel picking who runs)
// against a wake per thread (sync/wake_channel's futex, or a datagram pair per thread), where
// the waker picks the thread that parked last.
//
// Method. For W in {1, 2, 4, 8} and each mechanism, W receiver threads are started one at a
// time, each only once the one before it is asleep, so the order in which they blocked is
// known. The sender (the main thread) then repeats R times: send one wake, spin until a
// receiver says it has it (one atomic store: the reply costs no system call), and wait until
// every receiver is asleep again before the next wake. "Asleep" is read from
// /proc/self/task/TID: the thread has announced it is about to block (a counter it raises
// just before the call), its state is S, and its wchan names the wait we expect (the socket's
// __skb_wait_for_more_packets, or a futex wait); the woken thread thus blocks again behind the
// others, and the park order is updated to put it last. Each wake is classed by the woken
// thread's place in that order: the thread that blocked first (FIFO), last (LIFO), or other.
// For W = 1 the only thread is counted as first.
// The sender is pinned to one CPU and every receiver to another (--placement pinned, the
// default), so each wake crosses CPUs as the loop's wake of a pool thread does, and the
// sender's spin never holds the CPU the woken thread needs. The receivers' CPU is idle while
// they all sleep, so a wake includes bringing it out of idle (on a virtual machine, the
// hypervisor's halt exit), as in handoff-probe's idle arm. How deep that idle is depends on
// how long it lasted, so every wake is sent the same interval after the previous answer
// (--gap-us, 500 by default, past a guest's halt-polling window), the sender spinning out
// whatever the settle left of it; a settle longer than the gap is counted as a gap overrun.
//
// Per round of R wakes: wall µs per wake (from the send to the answer, on the sender's
// monotonic clock); CPU µs per wake: every receiver's thread CPU clock over the round, plus the
// sender's thread CPU inside each wake call; and the threads that woke per wake: the sum of
// every receiver's voluntary context switches over the round divided by R (each wake that
// reaches a thread ends with that thread blocking again, one voluntary switch; a thundering
// herd shows as more than one per wake). Each figure is the median over rounds with the min and
// max beside it; cells run in alternating order (reversed every other round), so a drift of
// the machine lands on all of them alike. The first wakes of each cell are a warm-up, not counted.
//
// What it cannot see. The park order is the order in which the probe saw the threads block,
// which is the kernel's wait-queue order only if no thread was woken and went back to sleep
// inside the kernel without returning (that would show in the voluntary switches). The CPU
// figure leaves out the sender's wait for the answer (a spin: the probe's own cost, not the
// wake's) and its /proc reads between wakes, and it includes the thread-CPU clock reads
// around each wake call (a system call each). With every receiver on one CPU, threads a herd
// wakes queue for that CPU: they show in the CPU and switch counts, not as parallel wall
// time. Each wake is made with every receiver asleep, so it prices a wake of an idle pool: a
// wake that finds its thread still running, or a thread woken while the sender sends again,
// is not measured here. wchan reads "0" both for a thread still on its run queue and where
// the kernel hides it, so the probe waits for the expected name and, on a kernel that hides
// it, stops with a message instead of guessing.
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <pthread.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <nlohmann/json.hpp>
#include "config/command_line.h"

#include "probe_main.h"
#include "probe_report.h"
#include "stats/thread_cpu.h"
#include "stats/thread_stats.h"
#include "sync/spin_wait.h"
#include "sync/wake_channel.h"

namespace handoff::bench {
namespace {

using Json = handoff::probes::Json;

// A system call failed, or a thread never answered or never slept again, where the probe
// cannot go on: say which and stop the process (the other threads may be blocked for good).
[[noreturn]] void fatal(const std::string& what) {
  std::fprintf(stderr, "herd-probe: %s\n", what.c_str());
  std::fflush(stderr);
  std::_Exit(2);
}
[[noreturn]] void fatal_errno(const char* what) { fatal(std::string(what) + ": " + std::strerror(errno)); }

// How long the sender waits for an answer or a re-park before it calls the wake lost.
constexpr std::int64_t kBoundNs = 5'000'000'000;
// Waiting for a receiver to sleep again (untimed): spin briefly, then yield the core.
constexpr sync::SpinPolicy kBoundedWait{kBoundNs, 2'000};
// Waiting for the answer (timed): the receivers have a CPU of their own, so the sender spins
// on its own CPU; it yields only past 100 µs, in case something else shares that CPU.
constexpr sync::SpinPolicy kAnswerWait{kBoundNs, 100'000};

constexpr char kWake = 'w';
constexpr char kStop = 's';

void send_byte(int fd, char byte) {
  while (::send(fd, &byte, 1, 0) != 1) {
    if (errno != EINTR) fatal_errno("send");
  }
}
char recv_byte(int fd) {
  char byte = 0;
  while (::recv(fd, &byte, 1, 0) != 1) {
    if (errno != EINTR) fatal_errno("recv");
  }
  return byte;
}

struct DatagramPair {
  DatagramPair() {
    if (::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, fds) != 0) fatal_errno("socketpair");
  }
  ~DatagramPair() {
    ::close(fds[0]);
    ::close(fds[1]);
  }
  DatagramPair(const DatagramPair&) = delete;
  DatagramPair& operator=(const DatagramPair&) = delete;
  int fds[2] = {-1, -1};  // the sender writes fds[0]; the receivers read fds[1]
};

// -------------------------------------------------------------------------------------
// The mechanisms. Each has the same calls:
//   block(i, entered)  receiver i raises `entered` just before its blocking call, sleeps
//                      until a wake reaches it, and returns false if the wake said stop
//   choose(order)      the sender: the receiver it wakes, or -1 when the kernel chooses
//   wake(i)            the sender: one wake (to receiver i when it chose)
//   stop_all()         the sender, with every receiver asleep: make each return false
// a `name` (the key in the JSON) and `wait`, what /proc's wchan says while one sleeps.
// -------------------------------------------------------------------------------------

// Chapter 01/02's lane: every receiver blocked in recv on the read end of one datagram
// socketpair. The kernel queues the sleepers on the socket and a datagram wakes one of them.
class SharedDatagram {
 public:
  static constexpr std::string_view name = "shared-datagram";
  static constexpr std::string_view wait = "skb_wait";
  explicit SharedDatagram(int waiters) : waiters_(waiters) {}
  bool block(int /*i*/, std::atomic<std::uint64_t>& entered) {
    entered.fetch_add(1, std::memory_order_release);  // pairs with the sender's acquire in wait_asleep()
    return recv_byte(pair_.fds[1]) == kWake;
  }
  int choose(const std::deque<int>& /*order*/) const { return -1; }
  void wake(int /*i*/) { send_byte(pair_.fds[0], kWake); }
  void stop_all() {
    // One stop each: a receiver that takes one exits and never reads another.
    for (int i = 0; i < waiters_; ++i) send_byte(pair_.fds[0], kStop);
  }

 private:
  int waiters_;
  DatagramPair pair_;
};

// The elastic pool's wake: one sync::WakeChannel per receiver (a state word and a futex on
// it), and the sender wakes the one that parked last (the newest park sequence), as
// ElasticPool::Core::wake_newest does.
class PerThreadFutex {
 public:
  static constexpr std::string_view name = "per-thread-futex";
  static constexpr std::string_view wait = "futex";
  explicit PerThreadFutex(int waiters)
      : waiters_(waiters), channels_(std::make_unique<sync::WakeChannel[]>(static_cast<std::size_t>(waiters))) {
    for (int i = 0; i < waiters; ++i) stats_.emplace_back("herd-" + std::to_string(i), "pool");
  }
  bool block(int i, std::atomic<std::uint64_t>& entered) {
    // relaxed: the ticket only ranks parks; the sender reads it through the channel's word.
    const std::uint32_t seq = next_seq_.fetch_add(1, std::memory_order_relaxed);
    sync::WakeChannel& ch = channels_[static_cast<std::size_t>(i)];
    ch.announce_parked(seq);
    // No re-check and so no fence: this receiver has nothing to look at but its own word,
    // which sleep() reads under the futex's lock. release: publishes the announcement to the
    // sender, which reads the park sequence only after its acquire of `entered`.
    entered.fetch_add(1, std::memory_order_release);
    ch.sleep(seq, stats_[static_cast<std::size_t>(i)]);
    // relaxed: stop_all() raised it before the wake, and sleep()'s acquire of the WOKEN word
    // (pairs with wake()'s release) orders it before this load.
    return !stopping_.load(std::memory_order_relaxed);
  }
  int choose(const std::deque<int>& /*order*/) const {
    std::uint32_t seq = 0;
    return sync::WakeChannel::newest_parked(channels_.get(), waiters_, seq);  // the pool's choice
  }
  void wake(int i) {
    sync::WakeChannel& ch = channels_[static_cast<std::size_t>(i)];
    std::uint32_t seq = 0;
    if (!ch.parked_seq(seq) || !ch.wake(seq, sender_stats_)) fatal("a parked receiver's channel refused its wake");
  }
  void stop_all() {
    stopping_.store(true, std::memory_order_relaxed);  // relaxed: each wake()'s release below publishes it
    for (int i = 0; i < waiters_; ++i) wake(i);
  }

 private:
  int waiters_;
  std::unique_ptr<sync::WakeChannel[]> channels_;
  std::deque<stats::ThreadStats> stats_;  // WakeChannel counts its futex calls here
  stats::ThreadStats sender_stats_{"herd-send", "loop"};
  std::atomic<std::uint32_t> next_seq_{0};
  std::atomic<bool> stopping_{false};
};

// The same choice over a datagram pair per receiver: the channel per thread, priced in the
// primitive chapter 01 started from.
class PerThreadDatagram {
 public:
  static constexpr std::string_view name = "per-thread-datagram";
  static constexpr std::string_view wait = "skb_wait";
  explicit PerThreadDatagram(int waiters) : pairs_(static_cast<std::size_t>(waiters)) {}
  bool block(int i, std::atomic<std::uint64_t>& entered) {
    entered.fetch_add(1, std::memory_order_release);  // pairs with the sender's acquire in wait_asleep()
    return recv_byte(pairs_[static_cast<std::size_t>(i)].fds[1]) == kWake;
  }
  int choose(const std::deque<int>& order) const { return order.back(); }
  void wake(int i) { send_byte(pairs_[static_cast<std::size_t>(i)].fds[0], kWake); }
  void stop_all() {
    for (DatagramPair& p : pairs_) send_byte(p.fds[0], kStop);
  }

 private:
  std::deque<DatagramPair> pairs_;
};

// -------------------------------------------------------------------------------------
// The receivers, seen from the sender through /proc/self/task/TID.
// -------------------------------------------------------------------------------------

// One /proc file of one thread, kept open and re-read from offset 0 (each read regenerates it).
class ProcFile {
 public:
  ProcFile(pid_t tid, const char* leaf) {
    const std::string path = "/proc/self/task/" + std::to_string(tid) + "/" + leaf;
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) fatal_errno(path.c_str());
  }
  ~ProcFile() { ::close(fd_); }
  ProcFile(const ProcFile&) = delete;
  ProcFile& operator=(const ProcFile&) = delete;
  std::string_view read() {
    const ssize_t n = ::pread(fd_, buf_.data(), buf_.size() - 1, 0);
    if (n < 0) fatal_errno("pread /proc");
    return {buf_.data(), static_cast<std::size_t>(n)};
  }

 private:
  int fd_ = -1;
  std::array<char, 2048> buf_{};
};

struct Receiver {
  std::thread thread;
  alignas(64) std::atomic<std::uint64_t> entered{0};  // times it was about to block
  std::atomic<pid_t> tid{0};                          // set once, before the first `entered`
  std::uint64_t expected = 0;                         // the sender's count of its parks
  std::unique_ptr<ProcFile> stat, wchan, status;
  clockid_t cpu_clock{};
};

char state_of(std::string_view stat) {
  const std::size_t paren = stat.rfind(')');  // the name may hold spaces and parentheses
  return paren == std::string_view::npos || paren + 2 >= stat.size() ? '?' : stat[paren + 2];
}

std::int64_t voluntary_switches(std::string_view status) {
  constexpr std::string_view key = "\nvoluntary_ctxt_switches:";  // not nonvoluntary_...
  const std::size_t at = status.find(key);
  if (at == std::string_view::npos) fatal("no voluntary_ctxt_switches in /proc/self/task/TID/status");
  return std::strtoll(status.data() + at + key.size(), nullptr, 10);
}

std::int64_t clock_ns(clockid_t clock) {
  timespec ts{};
  if (::clock_gettime(clock, &ts) != 0) fatal_errno("clock_gettime(thread CPU clock)");
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Wait until receiver `r` has made its expected number of parks and sleeps in the expected
// wait. Returns what wchan said.
std::string wait_asleep(Receiver& r, std::string_view wait) {
  // acquire: pairs with the receiver's release in block(): its park is announced.
  if (!sync::spin_until(kBoundedWait, [&] { return r.entered.load(std::memory_order_acquire) >= r.expected; })) {
    fatal("a receiver never came back to block");
  }
  std::string seen;
  if (!sync::spin_until(kBoundedWait, [&] {
        if (state_of(r.stat->read()) != 'S') return false;
        std::string_view w = r.wchan->read();
        while (!w.empty() && (w.back() == '\n' || w.back() == '\0')) w.remove_suffix(1);
        seen.assign(w);
        return w.find(wait) != std::string_view::npos;
      })) {
    fatal("a receiver never went to sleep in the expected wait (wchan " + seen + ")");
  }
  return seen;
}

// One round of one cell: R measured wakes of W receivers.
struct Sample {
  double wall_us = 0;
  double cpu_sender_us = 0;
  double cpu_receivers_us = 0;
  double woken_per_wake = 0;
  std::uint64_t first = 0, last = 0, other = 0;
  std::uint64_t gap_overruns = 0;  // wakes sent later than the gap: the settle took longer
  std::string wchan;
  double cpu_us() const { return cpu_sender_us + cpu_receivers_us; }
};

// How every cell runs.
struct CellSettings {
  std::uint64_t round_trips = 0;  // measured wakes
  std::uint64_t warmup = 0;       // wakes before them, not measured
  int rx_cpu = -1;                // the CPU every receiver pins itself to, or -1: unpinned
  std::int64_t gap_ns = 0;        // from an answer to the next wake
};

template <class Mechanism>
Sample run_cell(int waiters, const CellSettings& set) {
  const int rx_cpu = set.rx_cpu;
  Mechanism m(waiters);
  std::vector<std::unique_ptr<Receiver>> rx;
  std::deque<int> order;  // receivers by the time they blocked, first first
  std::atomic<int> answered{-1};
  Sample s;

  auto receiver_main = [&m, &answered, rx_cpu](int i, Receiver& me) {
    stats::name_this_thread(("herd-" + std::to_string(i)).c_str());
    if (rx_cpu >= 0 && !handoff::probes::pin_to(rx_cpu)) fatal_errno("sched_setaffinity (receiver)");
    // relaxed: block()'s release of `entered` publishes it.
    me.tid.store(static_cast<pid_t>(::syscall(SYS_gettid)), std::memory_order_relaxed);
    while (m.block(i, me.entered)) {
      answered.store(i, std::memory_order_release);  // pairs with the sender's acquire: "I have it"
    }
  };
  for (int i = 0; i < waiters; ++i) {
    rx.push_back(std::make_unique<Receiver>());
    Receiver& r = *rx.back();
    r.expected = 1;
    r.thread = std::thread(receiver_main, i, std::ref(r));
    // acquire: pairs with block()'s release of `entered`, after the receiver stored its tid.
    if (!sync::spin_until(kBoundedWait, [&] { return r.entered.load(std::memory_order_acquire) >= 1; })) {
      fatal("a receiver never started");
    }
    const pid_t tid = r.tid.load(std::memory_order_relaxed);  // ordered by the acquire of `entered`
    r.stat = std::make_unique<ProcFile>(tid, "stat");
    r.wchan = std::make_unique<ProcFile>(tid, "wchan");
    r.status = std::make_unique<ProcFile>(tid, "status");
    if (::pthread_getcpuclockid(r.thread.native_handle(), &r.cpu_clock) != 0) fatal("pthread_getcpuclockid");
    s.wchan = wait_asleep(r, Mechanism::wait);  // one at a time: the park order is the start order
    order.push_back(i);
  }

  auto all_asleep = [&] {
    for (auto& r : rx) s.wchan = wait_asleep(*r, Mechanism::wait);
  };
  auto totals = [&](std::int64_t& cpu_ns, std::int64_t& switches) {
    cpu_ns = 0;
    switches = 0;
    for (auto& r : rx) {
      cpu_ns += clock_ns(r->cpu_clock);
      switches += voluntary_switches(r->status->read());
    }
  };

  std::int64_t wall_ns = 0;
  std::int64_t sender_cpu_ns = 0;
  std::int64_t rx_cpu0 = 0, rx_sw0 = 0;
  std::int64_t next_wake = 0;
  for (std::uint64_t n = 0; n < set.warmup + set.round_trips; ++n) {
    const bool measured = n >= set.warmup;
    if (n == set.warmup) totals(rx_cpu0, rx_sw0);
    // The same idle time before every wake, whatever the settle cost: how long the
    // receivers' CPU has been idle decides how deep it sleeps, and so what the wake costs.
    if (stats::monotonic_ns() > next_wake && next_wake != 0 && measured) ++s.gap_overruns;
    while (stats::monotonic_ns() < next_wake) sync::cpu_relax();
    const int chosen = m.choose(order);
    const std::int64_t c0 = stats::thread_cpu_ns();
    const std::int64_t t0 = stats::monotonic_ns();
    m.wake(chosen);
    const std::int64_t c1 = stats::thread_cpu_ns();
    int got = -1;
    // acquire: pairs with the woken receiver's release store of its index.
    if (!sync::spin_until(kAnswerWait, [&] { return (got = answered.load(std::memory_order_acquire)) >= 0; })) {
      fatal("no receiver answered a wake within 5 s (a lost wake)");
    }
    const std::int64_t t1 = stats::monotonic_ns();
    next_wake = t1 + set.gap_ns;
    answered.store(-1, std::memory_order_relaxed);  // relaxed: no receiver writes it until the next wake
    if (chosen >= 0 && got != chosen) fatal("a receiver other than the chosen one answered");
    const auto at = std::find(order.begin(), order.end(), got);
    const auto pos = at - order.begin();
    if (measured) {
      wall_ns += t1 - t0;
      sender_cpu_ns += c1 - c0;
      if (pos == 0) {
        ++s.first;
      } else if (pos == waiters - 1) {
        ++s.last;
      } else {
        ++s.other;
      }
    }
    order.erase(at);
    order.push_back(got);
    ++rx[static_cast<std::size_t>(got)]->expected;
    all_asleep();  // the woken receiver is asleep again, behind the others
  }
  std::int64_t rx_cpu1 = 0, rx_sw1 = 0;
  totals(rx_cpu1, rx_sw1);

  m.stop_all();
  for (auto& r : rx) r->thread.join();

  const double n = static_cast<double>(set.round_trips);
  s.wall_us = static_cast<double>(wall_ns) / 1e3 / n;
  s.cpu_sender_us = static_cast<double>(sender_cpu_ns) / 1e3 / n;
  s.cpu_receivers_us = static_cast<double>(rx_cpu1 - rx_cpu0) / 1e3 / n;
  s.woken_per_wake = static_cast<double>(rx_sw1 - rx_sw0) / n;
  return s;
}

struct Entry {
  std::string_view name;
  Sample (*run)(int waiters, const CellSettings& set);
};

template <class Mechanism>
constexpr Entry entry() {
  return Entry{Mechanism::name, &run_cell<Mechanism>};
}

constexpr std::array kMechanisms = {entry<SharedDatagram>(), entry<PerThreadFutex>(), entry<PerThreadDatagram>()};
constexpr std::array kWaiters = {1, 2, 4, 8};
// Mechanisms in which the sender, not the kernel, chooses the thread (the last parked).
constexpr bool sender_chooses(std::string_view mechanism) { return mechanism != SharedDatagram::name; }

// -------------------------------------------------------------------------------------
// --check FILE: the smoke test's judge of a JSON written by this tool.
// -------------------------------------------------------------------------------------

constexpr std::array kFigures = {"wall_us", "cpu_us", "cpu_us_sender", "cpu_us_receivers", "threads_woken_per_wake"};

void judge(const Json& doc, std::vector<std::string>& problems) {
  const Json settings = doc.value("settings", Json::object());
  if (!settings.contains("round_trips") || !settings["round_trips"].is_number_unsigned() ||
      !settings.contains("rounds") || !settings["rounds"].is_number_unsigned()) {
    problems.emplace_back("\"settings\" lacks round_trips or rounds");
  }
  if (!problems.empty()) return;
  const std::uint64_t wakes = settings["round_trips"].get<std::uint64_t>() * settings["rounds"].get<std::uint64_t>();
  for (const Entry& e : kMechanisms) {
    for (const int w : kWaiters) {
      const std::string where = std::string(e.name) + "/W=" + std::to_string(w);
      const Json* one = handoff::probes::the_one(
          doc["results"], where,
          [&](const Json& r) { return r.value("mechanism", "") == e.name && r.value("waiters", 0) == w; }, problems);
      if (one == nullptr) continue;
      const Json& r = *one;
      for (const char* f : kFigures) {
        const bool may_be_zero = std::string_view(f) == "threads_woken_per_wake";
        if (!r.contains(f) || !r[f].is_object()) {
          problems.push_back(where + "." + f + " is missing");
          continue;
        }
        const Json& s = r[f];
        bool numbers = true;
        for (const char* k : {"median", "min", "max"}) {
          if (!s.contains(k) || !s[k].is_number() || s[k].get<double>() < 0 ||
              (!may_be_zero && !(s[k].get<double>() > 0))) {
            problems.push_back(where + "." + f + "." + k + " is not a " + (may_be_zero ? "count" : "positive number"));
            numbers = false;
          }
        }
        if (numbers && !(s["min"].get<double>() <= s["median"].get<double>() &&
                         s["median"].get<double>() <= s["max"].get<double>())) {
          problems.push_back(where + "." + f + " does not satisfy min <= median <= max");
        }
      }
      std::uint64_t sum = 0;
      bool counts = true;
      for (const char* k : {"woke_first_parked", "woke_last_parked", "woke_other"}) {
        if (!r.contains(k) || !r[k].is_number_unsigned()) {
          problems.push_back(where + "." + k + " is not a count");
          counts = false;
        } else {
          sum += r[k].get<std::uint64_t>();
        }
      }
      if (!counts) continue;
      if (sum != wakes) {
        problems.push_back(where + ": first + last + other parked is " + std::to_string(sum) + ", not the " +
                           std::to_string(wakes) + " wakes measured");
      }
      // The sender chose the thread that parked last: anything else means the probe's own
      // park order (or its choice) is wrong, and so is every class it reports.
      const char* chosen = w == 1 ? "woke_first_parked" : "woke_last_parked";
      if (sender_chooses(e.name) && r[chosen].get<std::uint64_t>() != wakes) {
        problems.push_back(where + ": the sender chose the last-parked thread, yet " + chosen + " is " +
                           std::to_string(r[chosen].get<std::uint64_t>()) + " of " + std::to_string(wakes));
      }
    }
  }
}

void print_table(const Json& doc) {
  std::printf("%-20s %2s %26s %26s %12s %24s\n", "mechanism", "W", "wall us/wake median [min-max]",
              "cpu us/wake median [min-max]", "woken/wake", "woke first/last/other");
  for (const Json& r : doc["results"]) {
    auto cell = [&](const char* f) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.2f [%.2f-%.2f]", r[f]["median"].get<double>(), r[f]["min"].get<double>(),
                    r[f]["max"].get<double>());
      return std::string(buf);
    };
    char classes[64];
    std::snprintf(classes, sizeof classes, "%llu/%llu/%llu",
                  static_cast<unsigned long long>(r["woke_first_parked"].get<std::uint64_t>()),
                  static_cast<unsigned long long>(r["woke_last_parked"].get<std::uint64_t>()),
                  static_cast<unsigned long long>(r["woke_other"].get<std::uint64_t>()));
    std::printf("%-20s %2d %26s %26s %12.3f %24s\n", r["mechanism"].get<std::string>().c_str(), r["waiters"].get<int>(),
                cell("wall_us").c_str(), cell("cpu_us").c_str(), r["threads_woken_per_wake"]["median"].get<double>(),
                classes);
  }
}

std::vector<std::string> mechanism_names() {
  std::vector<std::string> names;
  names.reserve(kMechanisms.size());
  for (const Entry& e : kMechanisms) names.emplace_back(e.name);
  return names;
}

int run(int argc, char** argv) {
  handoff::probes::ProbeMain probe{
      "herd-probe", "herd-probe: which of W threads asleep on one datagram socket the kernel wakes, and at what cost"};
  handoff::config::CommandLine& cli = probe.cli();
  std::uint64_t round_trips = 2000;
  unsigned rounds = 5;
  std::vector<std::string> only;
  std::vector<int> waiters(kWaiters.begin(), kWaiters.end());
  std::string placement = "pinned";
  unsigned gap_us = 500;
  cli.add_option("--round-trips", round_trips, "Measured wakes per cell per round")->range(1, 100'000'000);
  cli.add_option("--rounds", rounds, "Rounds; the report gives the median and min/max of each figure over them")
      ->range(1u, 1000u);
  cli.add_option("--only", only, "Run only this mechanism (repeatable)")->one_of(mechanism_names());
  cli.add_option("--waiters", waiters, "Waiting threads per cell (repeatable; default 1 2 4 8)")->range(1, 64);
  cli.add_option("--placement", placement,
                 "pinned: the sender on the first CPU this process may use, every receiver on the second; "
                 "unpinned: wherever the scheduler puts them")
      ->one_of({"pinned", "unpinned"});
  cli.add_option("--gap-us", gap_us,
                 "Microseconds from one answer to the next wake (the receivers' CPU idles that long); a "
                 "settle that takes longer makes the wake late, counted as a gap overrun")
      ->range(0u, 1'000'000u);
  probe.add_report_flags("every mechanism at W = 1, 2, 4, 8 once, and its wake classes adding up")->excludes("--only");
  if (const auto status =
          probe.parse(argc, argv, true, "lists every mechanism at every W, and its wakes add up", judge))
    return *status;

  struct Cell {
    const Entry* entry;
    int waiters;
    std::vector<Sample> samples;
  };
  std::vector<Cell> cells;
  for (const Entry& e : kMechanisms) {
    if (!only.empty() && std::find(only.begin(), only.end(), e.name) == only.end()) continue;
    for (const int w : waiters) cells.push_back(Cell{&e, w, {}});
  }
  const std::uint64_t warmup = std::min<std::uint64_t>(round_trips / 10 + 1, 100);
  // The sender (this thread) on one CPU, every receiver on another: each wake crosses CPUs,
  // as a wake from the loop to a pool thread does, and the sender's spin for the answer
  // never holds the CPU the woken thread needs.
  const std::vector<int> cpus = placement == "pinned" ? handoff::probes::two_cpus() : std::vector<int>{};
  if (!cpus.empty() && !handoff::probes::pin_to(cpus[0])) fatal_errno("sched_setaffinity (sender)");
  const CellSettings cell_settings{round_trips, warmup, cpus.empty() ? -1 : cpus[1],
                                   static_cast<std::int64_t>(gap_us) * 1000};
  Json placed = cpus.empty() ? Json(placement == "pinned" ? "unpinned (fewer than two CPUs)" : "unpinned")
                             : Json{{"sender_cpu", cpus[0]}, {"receivers_cpu", cpus[1]}};
  handoff::probes::alternate_arms(rounds, cells.size(), [&](unsigned round, std::size_t k) {
    Cell& c = cells[k];
    c.samples.push_back(c.entry->run(c.waiters, cell_settings));
    if (probe.writes_file()) {
      const Sample& s = c.samples.back();
      std::fprintf(stderr,
                   "round %u/%u %-20s W=%d wall %.2f us, cpu %.2f us, woken %.2f, first/last/other %llu/%llu/%llu\n",
                   round + 1, rounds, std::string(c.entry->name).c_str(), c.waiters, s.wall_us, s.cpu_us(),
                   s.woken_per_wake, static_cast<unsigned long long>(s.first), static_cast<unsigned long long>(s.last),
                   static_cast<unsigned long long>(s.other));
    }
  });

  Json results = Json::array();
  for (const Cell& c : cells) {
    auto pick = [&](auto field) {
      std::vector<double> xs;
      for (const Sample& s : c.samples) xs.push_back(field(s));
      return handoff::probes::median_min_max(std::move(xs));
    };
    auto total = [&](std::uint64_t Sample::*field) {
      std::uint64_t n = 0;
      for (const Sample& s : c.samples) n += s.*field;
      return n;
    };
    results.push_back(Json{{"mechanism", std::string(c.entry->name)},
                           {"waiters", c.waiters},
                           {"round_trips", round_trips},
                           {"rounds", rounds},
                           // Every measured wake, the total that woke_* and gap_overruns count
                           // out of (the harness judges them as proportions of it).
                           {"wakes", round_trips * c.samples.size()},
                           {"wall_us", pick([](const Sample& s) { return s.wall_us; })},
                           {"cpu_us", pick([](const Sample& s) { return s.cpu_us(); })},
                           {"cpu_us_sender", pick([](const Sample& s) { return s.cpu_sender_us; })},
                           {"cpu_us_receivers", pick([](const Sample& s) { return s.cpu_receivers_us; })},
                           {"threads_woken_per_wake", pick([](const Sample& s) { return s.woken_per_wake; })},
                           {"woke_first_parked", total(&Sample::first)},
                           {"woke_last_parked", total(&Sample::last)},
                           {"woke_other", total(&Sample::other)},
                           {"gap_overruns", total(&Sample::gap_overruns)},
                           {"wchan", c.samples.back().wchan}});
  }
  return probe.report(
      Json{{"settings", Json{{"round_trips", round_trips},
                             {"rounds", rounds},
                             {"warmup_wakes", warmup},
                             {"gap_us", gap_us},
                             {"waiters", waiters},
                             {"placement", std::move(placed)},
                             {"asleep_when", "state S in /proc/self/task/TID/stat and wchan in the expected wait"}}},
           {"results", std::move(results)}},
      print_table);
}

}  // namespace
}  // namespace handoff::bench

int main(int argc, char** argv) { return handoff::bench::run(argc, argv); }
