// exercises/04-merge-order/learners: merges the posts newest first, each right behind its locals
// (chapter 04; a learner's answer the tests must fail).
#include <algorithm>

#include "post_loop.h"

namespace exercise {

void PostLoop::merge(std::vector<Post>& posts) {
  for (auto post = posts.rbegin(); post != posts.rend(); ++post) {
    auto at =
        std::find_if(ready_.begin(), ready_.end(), [&](const Entry& e) { return !e.posted && e.number >= post->mark; });
    ready_.insert(at, Entry{true, post->mark, std::move(post->cb)});
  }
}

}  // namespace exercise
