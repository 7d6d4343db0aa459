// http/request: one parsed HTTP/1.1 request (chapter 01).
// Role: the value the request parser hands to the server and the server hands to a
// handler: method, target, version, headers, the whole body, and the keep-alive verdict.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace handoff::http {

/// One header field, name and value as sent.
struct Header {
  std::string name;
  std::string value;
};

/// One parsed request: method, target, version, headers and body.
struct Request {
  std::string method;     ///< "GET", "POST", ... as sent
  std::string target;     ///< request-target as sent, e.g. "/sleep?ms=10" or "http://a.example/x"
  int version_minor = 1;  ///< 0 for HTTP/1.0, 1 for HTTP/1.1
  std::vector<Header> headers;
  std::string body;        ///< the whole body, de-chunked
  bool keep_alive = true;  ///< the connection may carry another request after this one

  bool is_head() const { return method == "HEAD"; }
  /// The path the target names, up to '?': of an origin-form target ("/json?x=1" gives
  /// "/json"), of an absolute-form one ("http://a.example/json" gives "/json", and
  /// "http://a.example" gives "/"); an authority or asterisk form is returned whole.
  std::string_view path() const;
  /// The authority of an absolute-form target ("http://a.example:8080/x" gives
  /// "a.example:8080"); empty for every other form.
  std::string_view authority() const;
  /// The raw value of query parameter `name` ("" if absent); no percent-decoding.
  std::string_view query(std::string_view name) const;
  /// The first header called `name` (ASCII case-insensitive), or nullptr.
  const std::string* header(std::string_view name) const;
};

}  // namespace handoff::http
