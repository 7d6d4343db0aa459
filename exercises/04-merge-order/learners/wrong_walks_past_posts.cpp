// exercises/04-merge-order/learners: walks back past every posted entry, stopping only at
// a local callback numbered below the mark, so a post can pass an earlier one
// (chapter 04; a learner's answer the tests must fail).
#include <iterator>
#include <utility>

#include "post_loop.h"

namespace exercise {

void PostLoop::merge(std::vector<Post>& posts) {
  for (Post& post : posts) {
    auto at = ready_.end();
    while (at != ready_.begin()) {
      const Entry& before = *std::prev(at);
      if (!before.posted && before.number < post.mark) break;  // queued before the post
      --at;
    }
    ready_.insert(at, Entry{true, post.mark, std::move(post.cb)});
  }
}

}  // namespace exercise
