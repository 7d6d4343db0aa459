// probes/handoff_probe: the price list of one cross-thread hand-off (chapter 01).
// Role: time a round trip between two threads (A hands a token to B, B hands it back)
// over every wake mechanism the book discusses, in wall and per-thread CPU microseconds,
// so that chapter 01 can say what the loop<->pool datagram pair costs before anything
// replaces it, and what each replacement would cost instead.
//
// Method. Thread "probe-a" sends, thread "probe-b" answers; both run the same number of
// round trips, so neither needs a stop signal. After a short warm-up each thread reads its
// own CPU clock (CLOCK_THREAD_CPUTIME_ID) and A reads the monotonic clock; the figures are
// those deltas divided by the round trips. Mechanisms alternate within a round and the
// order reverses every other round (A B C ... C B A ...), so slow drift of the machine
// lands on every mechanism alike. The reported figure is the median over rounds, with
// the minimum and the maximum beside it.
//
// Two arms per mechanism. "Idle" is the round trip alone on the machine: whenever one
// thread blocks, its CPU may go idle, and on a virtual machine an idle virtual CPU halts
// and the hypervisor takes the physical core back. "Busy neighbour" runs the same round
// trip beside one spinning thread per CPU at SCHED_IDLE priority: a CPU never goes idle
// (the spinner runs whenever nothing else wants it), yet a woken probe thread preempts the
// spinner at once. The difference between the two arms is what an idle CPU adds to a
// wake. Each arm also reports the voluntary context switches per round trip (the times a
// probe thread really slept), so a reader sees that both arms sleep alike.
#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>
#include "config/command_line.h"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "probe_main.h"
#include "probe_report.h"
#include "stats/thread_cpu.h"

namespace handoff::bench {
namespace {

using Json = handoff::probes::Json;

// A system call failed where the probe cannot go on: say which one and stop the process.
// (The other thread may be blocked in the same mechanism, so unwinding would only hang.)
[[noreturn]] void fatal_errno(const char* what) {
  std::fprintf(stderr, "handoff-probe: %s: %s\n", what, std::strerror(errno));
  std::fflush(stderr);
  std::_Exit(2);
}

// One owned file descriptor.
class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_ = -1;
};

void write_exact(int fd, const void* data, std::size_t n, const char* what) {
  const auto* p = static_cast<const char*>(data);
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      fatal_errno(what);
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

void read_exact(int fd, void* data, std::size_t n, const char* what) {
  auto* p = static_cast<char*>(data);
  while (n > 0) {
    const ssize_t r = ::read(fd, p, n);
    if (r < 0) {
      if (errno == EINTR) continue;
      fatal_errno(what);
    }
    if (r == 0) {
      errno = EPIPE;
      fatal_errno(what);
    }
    p += r;
    n -= static_cast<std::size_t>(r);
  }
}

void make_socketpair(int type, int (&fds)[2]) {
  if (::socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, fds) != 0) fatal_errno("socketpair");
}

// The pause instruction tells the core that this is a spin-wait loop: it yields pipeline
// resources to a sibling hyperthread and avoids a memory-order mis-speculation on exit.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// -------------------------------------------------------------------------------------
// The mechanisms. Each is one class with the same four calls:
//   ping()       A hands the token to B
//   wait_ping()  B blocks (or spins) until the token arrives
//   pong()       B hands it back
//   wait_pong()  A blocks (or spins) until it is back
// and a `name`, the key it has in the JSON. Exactly one token is ever in flight.
// -------------------------------------------------------------------------------------

// One byte through a datagram socket, retried on EINTR; both datagram mechanisms use them.
void send_datagram_byte(int fd) {
  const char token = 't';
  while (::send(fd, &token, 1, 0) != 1) {
    if (errno != EINTR) fatal_errno("send (dgram)");
  }
}
void recv_datagram_byte(int fd) {
  char token = 0;
  while (::recv(fd, &token, 1, 0) != 1) {
    if (errno != EINTR) fatal_errno("recv (dgram)");
  }
}

// The baseline's hand-off: one byte over an AF_UNIX datagram pair, the receiver blocked
// in recv. Costs per direction: a sendmsg (skb allocation, queueing, wake of the blocked
// task) and a recvmsg (dequeue, copy, free), plus the sleep/wake of the receiving thread:
// a context switch in and out on each side. The dearest of the blocking kind.
class DgramSocketpair {
 public:
  static constexpr std::string_view name = "dgram_socketpair";
  DgramSocketpair() { make_socketpair(SOCK_DGRAM, fds_); }
  ~DgramSocketpair() {
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  DgramSocketpair(const DgramSocketpair&) = delete;
  DgramSocketpair& operator=(const DgramSocketpair&) = delete;
  void ping() { send_datagram_byte(fds_[0]); }
  void wait_ping() { recv_datagram_byte(fds_[1]); }
  void pong() { send_datagram_byte(fds_[1]); }
  void wait_pong() { recv_datagram_byte(fds_[0]); }

 private:
  int fds_[2] = {-1, -1};
};

// The same datagram pair, but B is an event loop: it sleeps in epoll_wait on its end and
// only then calls recv, as the baseline's loop thread does. Costs what the pair costs plus
// one more system call per wake and the epoll wake-up path (the ready list, the callback
// that wakes the epoll waiter instead of a socket waiter).
class DgramSocketpairEpoll {
 public:
  static constexpr std::string_view name = "dgram_socketpair_epoll";
  DgramSocketpairEpoll() : epoll_(::epoll_create1(EPOLL_CLOEXEC)) {
    if (epoll_.get() < 0) fatal_errno("epoll_create1");
    make_socketpair(SOCK_DGRAM, fds_);
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = fds_[1];
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, fds_[1], &ev) != 0) fatal_errno("epoll_ctl");
  }
  ~DgramSocketpairEpoll() {
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  DgramSocketpairEpoll(const DgramSocketpairEpoll&) = delete;
  DgramSocketpairEpoll& operator=(const DgramSocketpairEpoll&) = delete;
  void ping() { send_datagram_byte(fds_[0]); }
  void wait_ping() {
    epoll_event ev{};
    for (;;) {
      const int n = ::epoll_wait(epoll_.get(), &ev, 1, -1);
      if (n == 1) break;
      if (n < 0 && errno != EINTR) fatal_errno("epoll_wait");
    }
    recv_datagram_byte(fds_[1]);
  }
  void pong() { send_datagram_byte(fds_[1]); }
  void wait_pong() { recv_datagram_byte(fds_[0]); }

 private:
  Fd epoll_;
  int fds_[2] = {-1, -1};
};

// A stream socketpair: the same AF_UNIX path without datagram boundaries. Costs a
// sendmsg and a recvmsg per direction plus the sleep/wake; the stream side appends to a
// queue of skbs rather than building one per message, which the kernel may coalesce.
class StreamSocketpair {
 public:
  static constexpr std::string_view name = "stream_socketpair";
  StreamSocketpair() { make_socketpair(SOCK_STREAM, fds_); }
  ~StreamSocketpair() {
    ::close(fds_[0]);
    ::close(fds_[1]);
  }
  StreamSocketpair(const StreamSocketpair&) = delete;
  StreamSocketpair& operator=(const StreamSocketpair&) = delete;
  void ping() { write_exact(fds_[0], "t", 1, "write (stream)"); }
  void wait_ping() { read_byte(fds_[1]); }
  void pong() { write_exact(fds_[1], "t", 1, "write (stream)"); }
  void wait_pong() { read_byte(fds_[0]); }

 private:
  static void read_byte(int fd) {
    char token = 0;
    read_exact(fd, &token, 1, "read (stream)");
  }
  int fds_[2] = {-1, -1};
};

// Two pipes, one per direction. Costs a write and a read per direction plus the
// sleep/wake; a pipe copies into a page-backed ring and needs no socket buffer accounting,
// so it is usually cheaper than a socket.
class Pipe {
 public:
  static constexpr std::string_view name = "pipe";
  Pipe() {
    if (::pipe2(to_b_, O_CLOEXEC) != 0 || ::pipe2(to_a_, O_CLOEXEC) != 0) fatal_errno("pipe2");
  }
  ~Pipe() {
    for (int fd : {to_b_[0], to_b_[1], to_a_[0], to_a_[1]}) ::close(fd);
  }
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  void ping() { write_exact(to_b_[1], "t", 1, "write (pipe)"); }
  void wait_ping() { read_byte(to_b_[0]); }
  void pong() { write_exact(to_a_[1], "t", 1, "write (pipe)"); }
  void wait_pong() { read_byte(to_a_[0]); }

 private:
  static void read_byte(int fd) {
    char token = 0;
    read_exact(fd, &token, 1, "read (pipe)");
  }
  int to_b_[2] = {-1, -1};
  int to_a_[2] = {-1, -1};
};

// Two eventfds, one per direction. Costs a write and a read of an 8-byte counter per
// direction plus the sleep/wake: no buffer, no copy beyond the counter, the cheapest
// file-descriptor wake there is and one an epoll loop can wait on.
class EventFd {
 public:
  static constexpr std::string_view name = "eventfd";
  EventFd() : to_b_(::eventfd(0, EFD_CLOEXEC)), to_a_(::eventfd(0, EFD_CLOEXEC)) {
    if (to_b_.get() < 0 || to_a_.get() < 0) fatal_errno("eventfd");
  }
  void ping() { add_one(to_b_.get()); }
  void wait_ping() { take(to_b_.get()); }
  void pong() { add_one(to_a_.get()); }
  void wait_pong() { take(to_a_.get()); }

 private:
  static void add_one(int fd) {
    const std::uint64_t one = 1;
    write_exact(fd, &one, sizeof one, "write (eventfd)");
  }
  static void take(int fd) {
    std::uint64_t count = 0;
    read_exact(fd, &count, sizeof count, "read (eventfd)");
  }
  Fd to_b_;
  Fd to_a_;
};

// A futex through C++20 std::atomic::wait / notify_one on one 32-bit "turn" word.
// libstdc++ 12 spins before it sleeps (12 pause instructions, then 4 sched_yield calls)
// and notify_one skips the futex wake when its waiter count says nobody sleeps. So when
// the answer comes quickly the round trip costs no sleep at all; when it does sleep, it
// costs a futex wait and a futex wake: two system calls, no file, no buffer.
class AtomicWaitNotify {
 public:
  static constexpr std::string_view name = "atomic_wait_notify";
  void ping() {
    // Release pairs with B's acquire in wait_ping: whatever A wrote before handing over
    // the turn is visible to B once it sees the turn.
    turn_.store(kB, std::memory_order_release);
    turn_.notify_one();
  }
  void wait_ping() {
    // Returns once turn_ is no longer kA, i.e. is kB; the acquire pairs with ping().
    turn_.wait(kA, std::memory_order_acquire);
  }
  void pong() {
    // Release pairs with A's acquire in wait_pong.
    turn_.store(kA, std::memory_order_release);
    turn_.notify_one();
  }
  void wait_pong() { turn_.wait(kB, std::memory_order_acquire); }

 private:
  static constexpr std::uint32_t kA = 0;
  static constexpr std::uint32_t kB = 1;
  alignas(64) std::atomic<std::uint32_t> turn_{kA};
};

// A mutex, one condition variable and a "turn" flag under the mutex. Costs a lock and
// unlock on each side and, when the waiter sleeps, a futex wait and a futex wake (glibc's
// condition variable is futex-based) plus the mutex hand-back after the wake. Only one
// thread ever waits at a time (the one without the turn), so notify_one wakes the right one.
class CondVar {
 public:
  static constexpr std::string_view name = "condvar_mutex";
  void ping() { hand_to(Turn::b); }
  void wait_ping() { wait_for(Turn::b); }
  void pong() { hand_to(Turn::a); }
  void wait_pong() { wait_for(Turn::a); }

 private:
  enum class Turn { a, b };
  void hand_to(Turn next) {
    {
      std::lock_guard lock(mutex_);
      turn_ = next;
    }
    changed_.notify_one();
  }
  void wait_for(Turn mine) {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return turn_ == mine; });
  }
  std::mutex mutex_;
  std::condition_variable changed_;
  Turn turn_ = Turn::a;
};

// A pure spin: one atomic flag, each side busy-waits on it with a pause between loads.
// Costs no system call and no sleep: the round trip is two cache-line transfers between
// cores (the flag's line moves to the writer and back to the reader each way). It burns
// a whole core per waiting thread, and it needs two free cores: if A and B share one, each
// hand-off waits for the scheduler to preempt the spinner (a time slice, milliseconds).
class Spin {
 public:
  static constexpr std::string_view name = "spin";
  void ping() {
    // Release pairs with B's acquire load in wait_ping.
    b_has_token_.store(true, std::memory_order_release);
  }
  void wait_ping() {
    while (!b_has_token_.load(std::memory_order_acquire)) cpu_relax();
  }
  void pong() {
    // Release pairs with A's acquire load in wait_pong.
    b_has_token_.store(false, std::memory_order_release);
  }
  void wait_pong() {
    while (b_has_token_.load(std::memory_order_acquire)) cpu_relax();
  }

 private:
  alignas(64) std::atomic<bool> b_has_token_{false};
};

// -------------------------------------------------------------------------------------
// The runner.
// -------------------------------------------------------------------------------------

// The busy neighbour: one thread per CPU this process may use, pinned to its CPU and
// spinning at SCHED_IDLE priority until destroyed. SCHED_IDLE runs only when no normal
// thread wants the CPU, and a normal thread that wakes preempts it at once, so the
// probe's two threads keep every CPU they need while no CPU ever enters the idle loop.
class BusyNeighbours {
 public:
  BusyNeighbours() {
    cpu_set_t allowed;
    CPU_ZERO(&allowed);
    if (::sched_getaffinity(0, sizeof allowed, &allowed) != 0) fatal_errno("sched_getaffinity");
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &allowed)) threads_.emplace_back([this, cpu] { spin_on(cpu); });
    }
    // acquire pairs with each spinner's release increment: every spinner is pinned and
    // idle-priority before the first round trip is timed.
    while (ready_.load(std::memory_order_acquire) < threads_.size()) cpu_relax();
  }
  ~BusyNeighbours() {
    // relaxed: the flag carries no data; join() orders everything after it.
    stop_.store(true, std::memory_order_relaxed);
    for (std::thread& t : threads_) t.join();
  }
  BusyNeighbours(const BusyNeighbours&) = delete;
  BusyNeighbours& operator=(const BusyNeighbours&) = delete;

 private:
  void spin_on(int cpu) {
    stats::name_this_thread("probe-busy");
    cpu_set_t one;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (::pthread_setaffinity_np(::pthread_self(), sizeof one, &one) != 0) fatal_errno("pthread_setaffinity_np");
    const sched_param idle{};
    if (::sched_setscheduler(0, SCHED_IDLE, &idle) != 0) fatal_errno("sched_setscheduler(SCHED_IDLE)");
    // release pairs with the constructor's acquire load.
    ready_.fetch_add(1, std::memory_order_release);
    // relaxed: see the destructor.
    while (!stop_.load(std::memory_order_relaxed)) cpu_relax();
  }
  std::atomic<bool> stop_{false};
  std::atomic<std::size_t> ready_{0};
  std::vector<std::thread> threads_;
};

// Voluntary context switches of the calling thread so far: the times it blocked.
std::int64_t thread_sleeps() {
  rusage ru{};
  if (::getrusage(RUSAGE_THREAD, &ru) != 0) fatal_errno("getrusage(RUSAGE_THREAD)");
  return ru.ru_nvcsw;
}

// One run of one mechanism: microseconds (and sleeps) per round trip.
struct Sample {
  double wall_us = 0;
  double cpu_a_us = 0;  // the sender, probe-a
  double cpu_b_us = 0;  // the receiver, probe-b
  double sleeps = 0;    // voluntary context switches of both threads
  double cpu_us() const { return cpu_a_us + cpu_b_us; }
};

template <class Mechanism>
Sample run_once(std::uint64_t round_trips, std::uint64_t warmup) {
  Mechanism m;
  std::int64_t a_cpu_ns = 0;
  std::int64_t b_cpu_ns = 0;
  std::int64_t wall_ns = 0;
  std::int64_t a_sleeps = 0;
  std::int64_t b_sleeps = 0;

  // Each thread writes only its own result; join() publishes it to this thread.
  std::thread b([&] {
    stats::name_this_thread("probe-b");
    for (std::uint64_t i = 0; i < warmup; ++i) {
      m.wait_ping();
      m.pong();
    }
    const std::int64_t sleeps0 = thread_sleeps();
    const std::int64_t cpu0 = stats::thread_cpu_ns();
    for (std::uint64_t i = 0; i < round_trips; ++i) {
      m.wait_ping();
      m.pong();
    }
    b_cpu_ns = stats::thread_cpu_ns() - cpu0;
    b_sleeps = thread_sleeps() - sleeps0;
  });
  std::thread a([&] {
    stats::name_this_thread("probe-a");
    for (std::uint64_t i = 0; i < warmup; ++i) {
      m.ping();
      m.wait_pong();
    }
    const std::int64_t sleeps0 = thread_sleeps();
    const std::int64_t wall0 = stats::monotonic_ns();
    const std::int64_t cpu0 = stats::thread_cpu_ns();
    for (std::uint64_t i = 0; i < round_trips; ++i) {
      m.ping();
      m.wait_pong();
    }
    a_cpu_ns = stats::thread_cpu_ns() - cpu0;
    wall_ns = stats::monotonic_ns() - wall0;
    a_sleeps = thread_sleeps() - sleeps0;
  });
  a.join();
  b.join();

  const double n = static_cast<double>(round_trips);
  return Sample{static_cast<double>(wall_ns) / 1e3 / n, static_cast<double>(a_cpu_ns) / 1e3 / n,
                static_cast<double>(b_cpu_ns) / 1e3 / n, static_cast<double>(a_sleeps + b_sleeps) / n};
}

// The same run beside a busy neighbour on every CPU.
template <class Mechanism>
Sample run_busy(std::uint64_t round_trips, std::uint64_t warmup) {
  const BusyNeighbours neighbours;
  return run_once<Mechanism>(round_trips, warmup);
}

struct Entry {
  std::string_view name;
  Sample (*run)(std::uint64_t round_trips, std::uint64_t warmup);
  Sample (*run_busy)(std::uint64_t round_trips, std::uint64_t warmup);
};

template <class Mechanism>
constexpr Entry entry() {
  return Entry{Mechanism::name, &run_once<Mechanism>, &run_busy<Mechanism>};
}

// The price list, dearest kind first.
constexpr std::array kMechanisms = {
    entry<DgramSocketpair>(), entry<DgramSocketpairEpoll>(), entry<StreamSocketpair>(), entry<Pipe>(),
    entry<EventFd>(),         entry<AtomicWaitNotify>(),     entry<CondVar>(),          entry<Spin>(),
};

std::vector<std::string> mechanism_names() {
  std::vector<std::string> names;
  for (const Entry& e : kMechanisms) names.emplace_back(e.name);
  return names;
}

// -------------------------------------------------------------------------------------
// --check FILE: the smoke test's judge of a JSON written by this tool.
// -------------------------------------------------------------------------------------

// The figures every result carries, each a {median, min, max} over rounds, and the suffix
// of the same figure in the busy-neighbour arm. Sleeps may be zero (a spin never sleeps),
// so --check requires them present but not positive.
constexpr std::array kCostFields = {"wall_us", "cpu_us", "cpu_us_sender", "cpu_us_receiver"};
constexpr std::string_view kSleepsField = "sleeps_per_round_trip";
constexpr std::string_view kBusySuffix = "_busy_neighbour";

void judge(const Json& doc, std::vector<std::string>& problems) {
  // Both arms belong to the price list: a run without the busy neighbour is partial.
  if (!doc.value("busy_neighbour", false)) problems.emplace_back("no busy-neighbour arm");
  std::vector<std::string> fields;
  for (const char* f : kCostFields) {
    fields.emplace_back(f);
    fields.push_back(std::string(f).append(kBusySuffix));
  }
  for (const Entry& e : kMechanisms) {
    const Json* one = handoff::probes::the_one(doc["results"], std::string(e.name),
                                               handoff::probes::named("mechanism", std::string(e.name)), problems);
    if (one == nullptr) continue;
    const Json& r = *one;
    for (const std::string& field : fields) {
      const std::string where = std::string(e.name) + "." + field;
      if (!r.contains(field) || !r[field].is_object()) {
        problems.push_back(where + " is missing");
        continue;
      }
      const Json& s = r[field];
      bool numbers = true;
      for (const char* k : {"median", "min", "max"}) {
        if (!s.contains(k) || !s[k].is_number() || !(s[k].get<double>() > 0)) {
          problems.push_back(where + "." + k + " is not a positive number");
          numbers = false;
        }
      }
      if (numbers && !(s["min"].get<double>() <= s["median"].get<double>() &&
                       s["median"].get<double>() <= s["max"].get<double>())) {
        problems.push_back(where + " does not satisfy min <= median <= max");
      }
    }
    for (const std::string& field : {std::string(kSleepsField), std::string(kSleepsField).append(kBusySuffix)}) {
      if (!r.contains(field) || !r[field].is_object() || !r[field].contains("median") ||
          !r[field]["median"].is_number()) {
        problems.push_back(std::string(e.name) + "." + field + " is missing");
      }
    }
  }
}

void print_table(const Json& doc) {
  const bool busy = doc.value("busy_neighbour", false);
  std::printf("%-24s %-9s %28s %28s %10s %10s %8s\n", "mechanism", "neighbour", "wall us/rt median [min-max]",
              "cpu us/rt median [min-max]", "cpu A", "cpu B", "sleeps");
  for (const Json& r : doc["results"]) {
    for (const std::string& suffix : {std::string(), std::string(kBusySuffix)}) {
      if (!suffix.empty() && !busy) break;
      auto at = [&](std::string_view f) -> const Json& { return r[std::string(f) + suffix]; };
      auto cell = [&](std::string_view f) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "%.3f [%.3f-%.3f]", at(f)["median"].get<double>(), at(f)["min"].get<double>(),
                      at(f)["max"].get<double>());
        return std::string(buf);
      };
      std::printf("%-24s %-9s %28s %28s %10.3f %10.3f %8.2f\n", r["mechanism"].get<std::string>().c_str(),
                  suffix.empty() ? "idle" : "busy", cell("wall_us").c_str(), cell("cpu_us").c_str(),
                  at("cpu_us_sender")["median"].get<double>(), at("cpu_us_receiver")["median"].get<double>(),
                  at(kSleepsField)["median"].get<double>());
    }
  }
}

int run(int argc, char** argv) {
  handoff::probes::ProbeMain probe{"handoff-probe",
                                   "handoff-probe: the round-trip price of each cross-thread hand-off mechanism"};
  handoff::config::CommandLine& cli = probe.cli();
  std::uint64_t round_trips = 200000;
  unsigned rounds = 1;
  std::vector<std::string> only;
  cli.add_option("--round-trips", round_trips, "Round trips per mechanism per round")->range(1, 1'000'000'000);
  cli.add_option("--rounds", rounds,
                 "Rounds; each runs every mechanism once, alternating, and the report "
                 "gives the median and the min/max over rounds")
      ->range(1u, 1000u);
  cli.add_option("--only", only, "Run only this mechanism (repeatable)")->one_of(mechanism_names());
  std::string busy_neighbour = "on";
  cli.add_option("--busy-neighbour", busy_neighbour,
                 "Also run every mechanism beside an idle-priority spinner on each CPU, so that no "
                 "CPU goes idle (figures suffixed _busy_neighbour)")
      ->one_of({"on", "off"});
  probe.add_report_flags("every mechanism, in both arms, with positive costs")->excludes("--only");
  if (const auto status =
          probe.parse(argc, argv, false,
                      "lists all " + std::to_string(kMechanisms.size()) + " mechanisms with positive costs", judge))
    return *status;

  std::vector<const Entry*> selected;
  for (const Entry& e : kMechanisms) {
    if (only.empty() || std::find(only.begin(), only.end(), e.name) != only.end()) {
      selected.push_back(&e);
    }
  }

  const std::uint64_t warmup = std::min<std::uint64_t>(round_trips / 10 + 1, 2000);
  const bool busy = busy_neighbour == "on";
  // samples[neighbour][mechanism]: neighbour 0 idle, 1 busy.
  std::array<std::vector<std::vector<Sample>>, 2> samples;
  samples.fill(std::vector<std::vector<Sample>>(selected.size()));
  // Odd rounds run the list backwards, so no mechanism always follows the same one, and
  // swap the two arms' order for the same reason.
  handoff::probes::alternate_arms(rounds, selected.size(), [&](unsigned round, std::size_t i) {
    for (int j = 0; j < (busy ? 2 : 1); ++j) {
      const int arm = busy && round % 2 == 1 ? 1 - j : j;
      const Entry& e = *selected[i];
      samples[arm][i].push_back(arm == 0 ? e.run(round_trips, warmup) : e.run_busy(round_trips, warmup));
      if (probe.writes_file()) {
        const Sample& s = samples[arm][i].back();
        std::fprintf(stderr, "round %u/%u %-24s %-4s wall %.3f us, cpu %.3f us, sleeps %.2f\n", round + 1, rounds,
                     std::string(e.name).c_str(), arm == 0 ? "idle" : "busy", s.wall_us, s.cpu_us(), s.sleeps);
      }
    }
  });

  Json results = Json::array();
  for (std::size_t i = 0; i < selected.size(); ++i) {
    Json r{{"mechanism", std::string(selected[i]->name)}};
    for (int arm = 0; arm < (busy ? 2 : 1); ++arm) {
      auto pick = [&](auto field) {
        std::vector<double> xs;
        for (const Sample& s : samples[arm][i]) xs.push_back(field(s));
        return handoff::probes::median_min_max(std::move(xs));
      };
      const std::string suffix = arm == 0 ? std::string() : std::string(kBusySuffix);
      r["wall_us" + suffix] = pick([](const Sample& s) { return s.wall_us; });
      r["cpu_us" + suffix] = pick([](const Sample& s) { return s.cpu_us(); });
      r["cpu_us_sender" + suffix] = pick([](const Sample& s) { return s.cpu_a_us; });
      r["cpu_us_receiver" + suffix] = pick([](const Sample& s) { return s.cpu_b_us; });
      r[std::string(kSleepsField) + suffix] = pick([](const Sample& s) { return s.sleeps; });
    }
    results.push_back(std::move(r));
  }
  return probe.report(Json{{"round_trips", round_trips},
                           {"warmup_round_trips", warmup},
                           {"rounds", rounds},
                           {"busy_neighbour", busy},
                           {"results", std::move(results)}},
                      print_table);
}

}  // namespace
}  // namespace handoff::bench

int main(int argc, char** argv) { return handoff::bench::run(argc, argv); }
