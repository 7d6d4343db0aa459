// server/loop_responder: the Responder of a handler that runs on the loop thread, inline or
// as a coroutine, and the answer for one that fails (chapter 01; coroutines, chapter 04).
// Changed in chapter 04: the answer of a coroutine route.
#include "server/loop_responder.h"

#include <cstdio>

namespace handoff::server {

std::string handler_failure(std::exception_ptr error, bool answered) {
  if (!error) return answered ? std::string() : "returned without answering";
  try {
    std::rethrow_exception(std::move(error));
  } catch (const std::exception& e) {
    return std::string("threw: ") + e.what();
  } catch (...) {
    return "threw a non-exception";
  }
}

void report_handler_failure(const http::Request& request, const std::string& failure, stats::ThreadStats& stats) {
  stats.add(stats::Counter::handler_failures);
  std::fprintf(stderr, "handoff: handler for %s %s %s\n", request.method.c_str(), std::string(request.path()).c_str(),
               failure.c_str());
}

}  // namespace handoff::server
