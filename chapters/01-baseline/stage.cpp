// The composition root of this chapter's stage (server/stage.h): its --help line, then one call
// for each part it composes (chapter 01).
#include "server/stage.h"

using handoff::server::Stage;

int main(int argc, char** argv) {
  Stage stage{"handoff stage 01: epoll loop + handler pool over datagram socketpairs"};
  return stage.run(argc, argv);
}
