// oracle/loop_oracle: the ordering scenarios run on our callback loop, and the
// chain-beside-socket count (chapter 04).
// Role: read a scenario (format: benchmarks/oracle/README.md) and run it on
// evloop::EventLoop with either turn shape, printing the log oracle.py prints for it under
// asyncio, byte for byte, so CTest compares our loop's order with the committed *.expected.
// With --json it runs the chain_beside_socket shape with a long chain under both turn shapes
// instead and reports how many callbacks ran before the readable socket's (the seed's 513
// against 1); --check judges such a report.
//
// The runner mirrors oracle.py's Runner action for action: the same parse and errors (any
// error, in the file or while running, exits 1 with a message and no log), a producer
// thread per name posting with call_soon_threadsafe, `post` waiting until its producer has
// posted, timers placed at t0 + MS on the loop's clock read once at the start. The log is
// printed only when the whole scenario has run.
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <fstream>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "config/command_line.h"

#include "evloop/event_loop.h"
#include "net/fd.h"
#include "net/socket_pair.h"
#include "probe_report.h"
#include "testkit/watchdog.h"

namespace handoff::bench {
namespace {

using evloop::Callback;
using evloop::EventLoop;
using evloop::TurnShape;
using Json = probes::Json;
using namespace std::chrono_literals;

constexpr const char* kTool = "loop-oracle";
// A scenario must finish well within this, or the run is a hang (oracle.py's WATCHDOG_S).
constexpr auto kWatchdog = 20s;

/// A scenario that cannot be parsed or run: the runner prints the message and no log.
struct ScenarioError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

using Action = std::vector<std::string>;  // the verb, then its arguments

struct Scenario {
  std::vector<Action> main;
  std::map<std::string, std::vector<Action>> bodies;  // label -> its callback's actions
};

std::vector<std::string> words_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream in(s);
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// A decimal integer of at most nine digits (oracle.py takes any length; no scenario needs more).
bool is_number(const std::string& s) {
  return !s.empty() && s.size() <= 9 &&
         std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

// Each verb's arguments: W a word (a label or a producer), N a decimal integer; a final
// "+" means one or more of the last kind (oracle.py's SIGNATURES).
const std::map<std::string, std::string>& signatures() {
  static const std::map<std::string, std::string> s = {
      {"soon", "W"}, {"at", "NW"},    {"cancel", "W"}, {"block", "N"},  {"stop", ""},
      {"run", ""},   {"chain", "WN"}, {"watch", "W"},  {"post", "WW+"}, {"post-later", "NWW+"}};
  return s;
}

void check_action(const Action& action, const std::string& where, bool in_main) {
  const auto sig = signatures().find(action[0]);
  if (sig == signatures().end()) throw ScenarioError(where + ": unknown action " + action[0]);
  std::string kinds = sig->second;
  if (!kinds.empty() && kinds.back() == '+') {
    kinds.pop_back();
    if (action.size() - 1 > kinds.size()) kinds.append(action.size() - 1 - kinds.size(), kinds.back());
  }
  bool ok = action.size() - 1 == kinds.size();
  for (std::size_t i = 0; ok && i < kinds.size(); ++i) ok = kinds[i] != 'N' || is_number(action[i + 1]);
  if (!ok) {
    throw ScenarioError(where + ": " + action[0] + " takes " + (sig->second.empty() ? "nothing" : sig->second) +
                        " (W a word, N a number)");
  }
  if (action[0] == "run" && !in_main) throw ScenarioError(where + ": run is for main only");
}

Scenario parse(const std::string& text, const std::string& name) {
  Scenario s;
  std::vector<Action>* section = nullptr;
  bool seen_main = false;
  std::istringstream in(text);
  int number = 0;
  for (std::string raw; std::getline(in, raw);) {
    ++number;
    std::string line = raw.substr(0, raw.find('#'));
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    if (line.empty()) continue;
    const std::string where = name + ":" + std::to_string(number);
    if (!std::isspace(static_cast<unsigned char>(line[0]))) {
      const std::vector<std::string> words =
          line.back() == ':' ? words_of(line.substr(0, line.size() - 1)) : std::vector<std::string>{};
      if (words == std::vector<std::string>{"main"} && !seen_main) {
        section = &s.main;
        seen_main = true;
      } else if (words.size() == 2 && words[0] == "on" && s.bodies.count(words[1]) == 0) {
        section = &s.bodies[words[1]];
      } else {
        throw ScenarioError(where + ": a section is 'main:' (once) or 'on LABEL:' (once per label)");
      }
      continue;
    }
    if (section == nullptr) throw ScenarioError(where + ": an action outside a section");
    Action action = words_of(line);
    check_action(action, where, section == &s.main);
    section->push_back(std::move(action));
  }
  if (!seen_main) throw ScenarioError(name + ": no 'main:' section");
  return s;
}

/// A named thread that posts with call_soon_threadsafe when told to, in the order told.
class Producer {
 public:
  explicit Producer(std::function<void(const std::string&)> post) : post_(std::move(post)) {}
  ~Producer() {
    {
      std::lock_guard lock(mu_);
      closed_ = true;  // what is still ordered is posted first, as oracle.py's queue does
    }
    cv_.notify_one();
    thread_.join();
  }
  Producer(const Producer&) = delete;
  Producer& operator=(const Producer&) = delete;

  /// Post `labels` after `delay`; with `wait`, return only once the last is posted.
  void post(std::vector<std::string> labels, std::chrono::milliseconds delay, bool wait) {
    auto done = std::make_shared<std::promise<void>>();
    std::future<void> posted = done->get_future();
    {
      std::lock_guard lock(mu_);
      orders_.push_back(Order{delay, std::move(labels), std::move(done)});
    }
    cv_.notify_one();
    if (wait && posted.wait_for(kWatchdog) != std::future_status::ready) {
      throw ScenarioError("a producer did not post in time");
    }
  }

 private:
  struct Order {
    std::chrono::milliseconds delay;
    std::vector<std::string> labels;
    std::shared_ptr<std::promise<void>> done;
  };

  void serve() {
    for (;;) {
      Order order;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [this] { return closed_ || !orders_.empty(); });
        if (orders_.empty()) return;
        order = std::move(orders_.front());
        orders_.pop_front();
      }
      std::this_thread::sleep_for(order.delay);
      for (const std::string& label : order.labels) post_(label);
      order.done->set_value();
    }
  }

  std::function<void(const std::string&)> post_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Order> orders_;
  bool closed_ = false;
  std::thread thread_{[this] { serve(); }};  // last: starts once the members above exist
};

/// One scenario on one loop (oracle.py's Runner). Loop thread only, but for the callbacks
/// the producers create, which touch nothing until the loop runs them.
class Runner {
 public:
  Runner(const Scenario& scenario, EventLoop& loop) : scenario_(scenario), loop_(loop), t0_(EventLoop::Clock::now()) {}

  std::vector<std::string> execute() {
    perform(scenario_.main);
    return log_;
  }

 private:
  const std::vector<Action>& body(const std::string& label) const {
    static const std::vector<Action> none;
    const auto it = scenario_.bodies.find(label);
    return it == scenario_.bodies.end() ? none : it->second;
  }

  Callback callback(const std::string& label) {
    return [this, label] {
      log_.push_back(label);
      perform(body(label));
    };
  }

  Callback chain_step(const std::string& name, long k, long n) {
    return [this, name, k, n] {
      log_.push_back(name + "." + std::to_string(k));
      if (k < n) {
        loop_.call_soon(chain_step(name, k + 1, n));
      } else {
        perform(body(name));
      }
    };
  }

  void watch(const std::string& label) {
    auto [ours, theirs] = net::datagram_pair();
    const int fd = ours.get();
    loop_.add_reader(fd, [this, fd, label] {
      loop_.remove_reader(fd);  // it fires once
      char byte;
      if (::recv(fd, &byte, 1, MSG_DONTWAIT) != 1) throw ScenarioError("watch " + label + ": no byte to read");
      log_.push_back(label);
      perform(body(label));
    });
    const char byte = 'x';
    if (::send(theirs.get(), &byte, 1, 0) != 1) throw ScenarioError("watch " + label + ": send failed");
    sockets_.push_back(std::move(ours));
    sockets_.push_back(std::move(theirs));
  }

  Producer& producer(const std::string& name) {
    auto& p = producers_[name];
    if (!p)
      p = std::make_unique<Producer>([this](const std::string& label) { loop_.call_soon_threadsafe(callback(label)); });
    return *p;
  }

  static std::vector<std::string> labels_from(const Action& a, std::size_t first) {
    return {a.begin() + static_cast<std::ptrdiff_t>(first), a.end()};
  }

  void perform(const std::vector<Action>& actions) {
    for (const Action& a : actions) {
      const std::string& verb = a[0];
      if (verb == "soon") {
        handles_[a[1]] = loop_.call_soon(callback(a[1]));
      } else if (verb == "at") {
        handles_[a[2]] = loop_.call_at(t0_ + std::chrono::milliseconds(std::stol(a[1])), callback(a[2]));
      } else if (verb == "cancel") {
        const auto it = handles_.find(a[1]);
        if (it == handles_.end()) throw ScenarioError("cancel " + a[1] + ": no handle remembered for it");
        it->second.cancel();
      } else if (verb == "post") {
        producer(a[1]).post(labels_from(a, 2), 0ms, true);
      } else if (verb == "post-later") {
        producer(a[2]).post(labels_from(a, 3), std::chrono::milliseconds(std::stol(a[1])), false);
      } else if (verb == "block") {
        std::this_thread::sleep_for(std::chrono::milliseconds(std::stol(a[1])));
      } else if (verb == "stop") {
        loop_.stop();
      } else if (verb == "chain") {
        loop_.call_soon(chain_step(a[1], 1, std::stol(a[2])));
      } else if (verb == "watch") {
        watch(a[1]);
      } else if (verb == "run") {
        log_.push_back("-- run " + std::to_string(++runs_));
        loop_.run_forever();
      }
    }
  }

  const Scenario& scenario_;
  EventLoop& loop_;
  const EventLoop::Clock::time_point t0_;
  std::vector<std::string> log_;
  std::map<std::string, evloop::Handle> handles_;
  std::vector<net::Fd> sockets_;
  int runs_ = 0;
  std::map<std::string, std::unique_ptr<Producer>> producers_;  // last: joined before the rest goes
};

evloop::EventLoopOptions options_for(TurnShape turn) {
  evloop::EventLoopOptions o;
  o.turn = turn;
  return o;
}

/// Run `s` on a fresh loop of shape `turn`; its log, and the loop's counts into `counts`.
std::vector<std::string> run_scenario(const Scenario& s, TurnShape turn, evloop::EventLoopCounts* counts = nullptr) {
  EventLoop loop(options_for(turn));
  std::vector<std::string> log;
  {
    Runner runner(s, loop);
    log = runner.execute();
  }
  if (counts != nullptr) *counts = loop.counts();
  return log;
}

const char* name_of(TurnShape t) { return t == TurnShape::generation ? "generation" : "drain"; }

// -------------------------------------------------------------------------------------
// --json: the chain_beside_socket scenario's shape with a chain of --chain-steps, under both
// turn shapes. X makes the socket readable and starts the chain; the count is the callbacks
// logged after X and before the socket's reader R.
// -------------------------------------------------------------------------------------
std::string chain_beside_socket(unsigned steps) {
  return "main:\n  soon X\n  run\non X:\n  watch R\n  chain C " + std::to_string(steps) + "\non C:\n  stop\n";
}

Json probe_turn(TurnShape turn, unsigned steps) {
  evloop::EventLoopCounts counts;
  const std::vector<std::string> log =
      run_scenario(parse(chain_beside_socket(steps), "chain-beside-socket"), turn, &counts);
  const auto x = std::find(log.begin(), log.end(), "X");
  const auto r = std::find(log.begin(), log.end(), "R");
  if (x == log.end() || r == log.end() || r < x) throw ScenarioError("the reader R did not run after X");
  return Json{{"turn", name_of(turn)},
              {"chain_steps", steps},
              {"callbacks_before_socket", static_cast<std::uint64_t>(r - x - 1)},
              {"turns", counts.turns},
              {"callbacks_run", counts.callbacks_run}};
}

void judge(const Json& doc, std::vector<std::string>& problems) {
  for (TurnShape t : {TurnShape::generation, TurnShape::drain}) {
    const std::string turn = name_of(t);
    const Json* one = probes::the_one(doc["results"], turn, probes::named("turn", turn), problems);
    if (one == nullptr) continue;
    const Json& r = *one;
    bool counts = true;
    for (const char* k : {"chain_steps", "callbacks_before_socket", "turns", "callbacks_run"}) {
      if (!r.contains(k) || !r[k].is_number_unsigned()) {
        problems.push_back(turn + ": " + k + " is not a count");
        counts = false;
      }
    }
    if (!counts) continue;
    const auto n = [&](const char* k) { return r[k].get<std::uint64_t>(); };
    if (n("chain_steps") == 0 || n("callbacks_before_socket") == 0 || n("callbacks_before_socket") > n("chain_steps")) {
      problems.push_back(turn + ": callbacks_before_socket is not between 1 and chain_steps");
    }
    // asyncio's order, not a measurement: the poll after the first generation finds the
    // socket, so exactly the chain's first step runs before it.
    if (t == TurnShape::generation && n("callbacks_before_socket") != 1) {
      problems.push_back("generation: " + std::to_string(n("callbacks_before_socket")) +
                         " callbacks before the socket's, not asyncio's 1");
    }
  }
}

int check_file(const std::string& path) {
  return probes::check_report(path, kTool, true, "lists both turn shapes, generation with asyncio's count", judge);
}

void print_table(const Json& doc) {
  std::printf("%-10s %11s %23s %8s %13s\n", "turn", "chain steps", "callbacks before socket", "turns", "callbacks run");
  for (const Json& r : doc["results"]) {
    std::printf("%-10s %11llu %23llu %8llu %13llu\n", r["turn"].get<std::string>().c_str(),
                static_cast<unsigned long long>(r["chain_steps"].get<std::uint64_t>()),
                static_cast<unsigned long long>(r["callbacks_before_socket"].get<std::uint64_t>()),
                static_cast<unsigned long long>(r["turns"].get<std::uint64_t>()),
                static_cast<unsigned long long>(r["callbacks_run"].get<std::uint64_t>()));
  }
}

TurnShape shape_named(const std::string& name) { return name == "drain" ? TurnShape::drain : TurnShape::generation; }

int run(int argc, char** argv) {
  handoff::config::CommandLine cli{
      "loop-oracle: an ordering scenario on our callback loop, printed as oracle.py prints asyncio's"};
  std::string scenario_path;
  std::string turn = "generation";
  std::string json_path, check_path;
  unsigned chain_steps = 2048;
  std::vector<std::string> turns{"generation", "drain"};
  auto* scenario_opt = cli.add_option("scenario", scenario_path, "The scenario file (benchmarks/oracle/README.md)");
  cli.add_option("--turn", turn, "The loop's turn shape for the scenario")->one_of({"generation", "drain"});
  auto* json_opt = cli.add_option("--json", json_path,
                                  "Instead of a scenario, count the callbacks run before a readable socket's "
                                  "beside a call_soon chain, per turn shape, and write the report here");
  cli.add_option("--chain-steps", chain_steps, "With --json: the chain's length")->range(1u, 1'000'000u);
  cli.add_option("--turns", turns, "With --json: the turn shapes to run")
      ->one_of({"generation", "drain"})
      ->delimiter(',');
  cli.add_option("--check", check_path,
                 "Instead of running, check FILE (written with --json): both turn shapes once, generation "
                 "with asyncio's count; exit 1 if not")
      ->excludes(json_opt)
      ->excludes(scenario_opt);
  json_opt->excludes(scenario_opt);
  if (const auto status = cli.parse(argc, argv)) return *status;
  if (!check_path.empty()) return check_file(check_path);
  try {
    if (!json_path.empty()) {
      testkit::Watchdog dog(std::chrono::duration_cast<std::chrono::milliseconds>(kWatchdog),
                            "loop-oracle: the chain-beside-socket count");
      Json results = Json::array();
      for (TurnShape t : {TurnShape::generation, TurnShape::drain}) {
        if (std::find(turns.begin(), turns.end(), name_of(t)) != turns.end())
          results.push_back(probe_turn(t, chain_steps));
      }
      const Json doc{{"tool", kTool},
                     {"machine", probes::machine()},
                     {"settings", {{"chain_steps", chain_steps}}},
                     {"scenario", chain_beside_socket(chain_steps)},
                     {"results", results}};
      return probes::emit_report(doc, json_path, kTool, print_table);
    }
    if (scenario_path.empty()) throw ScenarioError("no scenario (or --json, or --check) given");
    std::ifstream in(scenario_path);
    if (!in) throw ScenarioError(scenario_path + ": cannot be read");
    std::stringstream text;
    text << in.rdbuf();
    const std::string name = scenario_path.substr(scenario_path.find_last_of('/') + 1);
    const Scenario scenario = parse(text.str(), name);
    testkit::Watchdog dog(std::chrono::duration_cast<std::chrono::milliseconds>(kWatchdog), "loop-oracle: " + name);
    std::string out;
    for (const std::string& line : run_scenario(scenario, shape_named(turn))) out += line + "\n";
    std::fwrite(out.data(), 1, out.size(), stdout);
    return 0;
  } catch (const std::exception& e) {  // a scenario's error, or a callback's: no log
    std::fprintf(stderr, "%s: %s\n", kTool, e.what());
    return 1;
  }
}

}  // namespace
}  // namespace handoff::bench

int main(int argc, char** argv) { return handoff::bench::run(argc, argv); }
