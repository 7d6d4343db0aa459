// exercises/01-add-route/serve: stage 01 with your GET /hello beside the demo routes (chapter
// 01), for the README's "Then" step. It is built from starter/hello_route.cpp, your file.
#include "hello_route.h"
#include "server/stage.h"

int main(int argc, char** argv) {
  handoff::server::Stage stage{"handoff stage 01 with exercise 01-add-route's GET /hello (your starter)"};
  stage.routes(exercise::add_hello_route);
  return stage.run(argc, argv);
}
