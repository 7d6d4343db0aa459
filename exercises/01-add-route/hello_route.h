// exercises/01-add-route: the route you add.
#pragma once

#include "app/router.h"

namespace exercise {

/// Add `GET /hello?name=NAME` to `router`: it answers 200 with the body "Hello, NAME!"
/// (text/plain). Without a name (absent or empty) it answers 400 with the body
/// "name is required".
void add_hello_route(handoff::app::Router& router);

}  // namespace exercise
