// exercises/04-merge-order/learners: looks only at the last entry, as the usual case
// needs: a post goes before it if it is a later local callback, else at the back
// (chapter 04; a learner's answer the tests must fail).
#include <iterator>
#include <utility>

#include "post_loop.h"

namespace exercise {

void PostLoop::merge(std::vector<Post>& posts) {
  for (Post& post : posts) {
    auto at = ready_.end();
    if (!ready_.empty() && !ready_.back().posted && ready_.back().number >= post.mark) at = std::prev(at);
    ready_.insert(at, Entry{true, post.mark, std::move(post.cb)});
  }
}

}  // namespace exercise
