// exercises/04-merge-order/learners: puts the post behind the local callback numbered its mark
// (chapter 04; a learner's answer the tests must fail).
#include <algorithm>

#include "post_loop.h"

namespace exercise {

void PostLoop::merge(std::vector<Post>& posts) {
  for (Post& post : posts) {
    // The mark is the last local callback the loop had queued: the post goes after it.
    auto at =
        std::find_if(ready_.begin(), ready_.end(), [&](const Entry& e) { return !e.posted && e.number > post.mark; });
    ready_.insert(at, Entry{true, post.mark, std::move(post.cb)});
  }
}

}  // namespace exercise
