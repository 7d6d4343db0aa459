// exercises/05-stack-per-worker/tests: a fake Onload records every call in order, beside the
// worker's reads, and behaves as Onload does: it moves a socket only if nothing has been
// read from it yet, into the stack the calling thread named (the shared one if none).
#include <catch2/catch.hpp>
#include <cerrno>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "worker_stack.h"

using exercise::WorkerStack;

namespace {

class FakeOnload : public exercise::OnloadCalls {
 public:
  bool present = true;           ///< available()
  int name_answer = 0;           ///< what name_thread_stack says
  std::set<int> refuse;          ///< fds whose move is refused whatever their state
  std::vector<std::string> log;  ///< "name w3", "move 5", "read 5", ... in order
  std::string current_stack = "shared";
  std::vector<std::string> stack_of;  ///< "fd:stack" for each socket read, where it was read

  bool available() const override { return present; }
  int name_thread_stack(const char* name) override {
    log.push_back(std::string("name ") + name);
    if (name_answer == 0) current_stack = name;
    return name_answer;
  }
  int move_fd(int fd) override {
    log.push_back("move " + std::to_string(fd));
    if (read_.count(fd) != 0 || refuse.count(fd) != 0) return -1;  // Onload: too late, or no
    stacks_[fd] = current_stack;
    return 0;
  }
  /// The worker's first I/O on a socket (what serve does).
  void read(int fd) {
    log.push_back("read " + std::to_string(fd));
    read_.insert(fd);
    const auto it = stacks_.find(fd);
    stack_of.push_back(std::to_string(fd) + ":" + (it == stacks_.end() ? std::string("shared") : it->second));
  }

 private:
  std::set<int> read_;
  std::map<int, std::string> stacks_;
};

}  // namespace

TEST_CASE("stack-per-worker: start() names the worker's stack at once, before any socket arrives",
          "[stack-per-worker][ch05]") {
  FakeOnload onload;
  WorkerStack worker(3, onload, [&](int fd) { onload.read(fd); });
  worker.start();
  INFO("right after start(), Onload was asked for: " << Catch::Detail::stringify(onload.log)
                                                     << "; start() names this thread's stack (stack_name()) "
                                                        "itself, once: a name given lazily, at the first adopt, "
                                                        "leaves the worker without its stack until a socket comes");
  CHECK(onload.log == std::vector<std::string>{"name w3"});
  CHECK(worker.own_stack());
}

TEST_CASE("stack-per-worker: the worker names its stack once, then moves each socket before its first read",
          "[stack-per-worker][ch05]") {
  FakeOnload onload;
  WorkerStack worker(3, onload, [&](int fd) { onload.read(fd); });
  worker.start();
  worker.adopt(5);
  worker.adopt(6);
  worker.adopt(7);
  INFO("the calls were " << Catch::Detail::stringify(onload.log)
                         << "; Onload moves a socket only before its first read, so each move comes before its "
                            "read, and the stack is named once, in start()");
  CHECK(onload.log == std::vector<std::string>{"name w3", "move 5", "read 5", "move 6", "read 6", "move 7", "read 7"});
  CHECK(worker.own_stack());
  CHECK(onload.stack_of == std::vector<std::string>{"5:w3", "6:w3", "7:w3"});  // each read in the worker's stack
  CHECK(worker.counts().adopted == 3);
  CHECK(worker.counts().stack_moves == 3);
  CHECK(worker.counts().moves_refused == 0);
}

TEST_CASE("stack-per-worker: a refused move is counted, and the socket is served where it is",
          "[stack-per-worker][ch05]") {
  FakeOnload onload;
  onload.refuse = {6};
  WorkerStack worker(0, onload, [&](int fd) { onload.read(fd); });
  worker.start();
  worker.adopt(5);
  worker.adopt(6);
  worker.adopt(7);
  INFO("the calls were " << Catch::Detail::stringify(onload.log)
                         << "; a refused move is an answer, not an error: count it in moves_refused and serve the "
                            "socket where it is");
  CHECK(onload.log == std::vector<std::string>{"name w0", "move 5", "read 5", "move 6", "read 6", "move 7", "read 7"});
  CHECK(onload.stack_of == std::vector<std::string>{"5:w0", "6:shared", "7:w0"});
  CHECK(worker.counts().adopted == 3);
  CHECK(worker.counts().stack_moves == 2);
  CHECK(worker.counts().moves_refused == 1);
}

TEST_CASE("stack-per-worker: a refused stack name leaves the worker on the shared stack, and nothing is moved",
          "[stack-per-worker][ch05]") {
  FakeOnload onload;
  // A refusal is any answer but 0: Onload's extensions answer a negative errno.
  onload.name_answer = GENERATE(-1, -EINVAL);
  WorkerStack worker(1, onload, [&](int fd) { onload.read(fd); });
  worker.start();
  worker.adopt(5);
  INFO("the calls were " << Catch::Detail::stringify(onload.log)
                         << "; Onload refused the name, so the worker has no stack of its own (own_stack() false) "
                            "and must move nothing");
  CHECK_FALSE(worker.own_stack());
  CHECK(onload.log == std::vector<std::string>{"name w1", "read 5"});
  CHECK(worker.counts().adopted == 1);
  CHECK(worker.counts().stack_moves == 0);
  CHECK(worker.counts().moves_refused == 0);
}

TEST_CASE("stack-per-worker: without Onload nothing is called, and every socket is still served",
          "[stack-per-worker][ch05]") {
  FakeOnload onload;
  onload.present = false;
  WorkerStack worker(2, onload, [&](int fd) { onload.read(fd); });
  worker.start();
  worker.adopt(5);
  worker.adopt(6);
  INFO("the calls were " << Catch::Detail::stringify(onload.log)
                         << "; without Onload (available() false) the worker calls neither extension and serves "
                            "every socket");
  CHECK_FALSE(worker.own_stack());
  CHECK(onload.log == std::vector<std::string>{"read 5", "read 6"});
  CHECK(worker.counts().adopted == 2);
  CHECK(worker.counts().stack_moves == 0);
}
