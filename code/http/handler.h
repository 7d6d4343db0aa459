// http/handler: what an application handler is given and how it answers (chapter 01).
// Role: one seam between the server and the application, the same whether the handler
// runs on the loop thread (inline) or on a pool thread, whole or streamed. It lives in
// http/, below both pool/ and app/, so that neither includes server/.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "http/request.h"
#include "http/response.h"

namespace handoff::http {

/// How a handler answers one request: either send() once, or start_stream(), any number
/// of send_chunk(), then end_stream(). The server frames the bytes (Content-Length or
/// chunked), applies HEAD, keep-alive and the Date header, and writes responses of one
/// connection in request order whatever thread produced them.
class Responder {
 public:
  virtual void send(http::Response response) = 0;
  virtual void start_stream(int status, std::string content_type) = 0;
  virtual void send_chunk(std::string data) = 0;
  virtual void end_stream() = 0;

 protected:
  ~Responder() = default;
};

/// An application handler. It may block (sleep, burn CPU) when dispatched to the pool;
/// inline it runs on the loop thread and everything behind it waits.
using Handler = std::function<void(const http::Request&, Responder&)>;

}  // namespace handoff::http
