// exercises/04-merge-order/learners: appends the posts, then stable-sorts the ready queue by a
// key that tells a post marked m (2m) from the local callback numbered m (2m+1)
// (chapter 04; a learner's answer the tests must pass).
#include <algorithm>
#include <utility>

#include "post_loop.h"

namespace exercise {

void PostLoop::merge(std::vector<Post>& posts) {
  for (Post& post : posts) ready_.push_back(Entry{true, post.mark, std::move(post.cb)});
  // A post marked m runs before local m and after local m-1: key 2m between 2(m-1)+1 and
  // 2m+1. Posts with one mark share a key, and the stable sort keeps them in queue order.
  std::stable_sort(ready_.begin(), ready_.end(), [](const Entry& a, const Entry& b) {
    const auto key = [](const Entry& e) { return 2 * e.number + (e.posted ? 0 : 1); };
    return key(a) < key(b);
  });
}

}  // namespace exercise
