// fuzz/connection_app: the connection target's application, whose answers name their requests (chapter 01).
// Role: the routes the fuzzed Worker serves and, for the oracle, the body each request's
// answer must have: the method, target, version and body of the request it answers.
#pragma once

#include <string>

#include "app/router.h"
#include "http/request.h"

namespace handoff::fuzz {

/// /e, /b (never block: inline even in pool mode), /p (to the pool in pool mode), and /s,
/// a stream of three chunks (one empty) sent to the pool too.
const app::Router& routes();

/// The body of the answer to `r`, whose route exists.
std::string answer(const http::Request& r);

}  // namespace handoff::fuzz
