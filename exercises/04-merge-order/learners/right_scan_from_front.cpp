// exercises/04-merge-order/learners: finds, from the front, the first local callback the post runs before
// (chapter 04; a learner's answer the tests must pass).
#include <algorithm>

#include "post_loop.h"

namespace exercise {

void PostLoop::merge(std::vector<Post>& posts) {
  for (Post& post : posts) {
    // Locals numbered below the mark were queued before the post; the first local numbered
    // the mark or above was queued after it. Earlier posts stay in front (they run first).
    auto at =
        std::find_if(ready_.begin(), ready_.end(), [&](const Entry& e) { return !e.posted && e.number >= post.mark; });
    ready_.insert(at, Entry{true, post.mark, std::move(post.cb)});
  }
}

}  // namespace exercise
