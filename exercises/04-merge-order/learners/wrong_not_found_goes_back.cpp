// exercises/04-merge-order/learners: walks back by index to the entry the post follows,
// and when it finds none puts the post at the back rather than the front
// (chapter 04; a learner's answer the tests must fail).
#include <cstddef>
#include <utility>

#include "post_loop.h"

namespace exercise {

void PostLoop::merge(std::vector<Post>& posts) {
  for (Post& post : posts) {
    std::size_t at = ready_.size();  // behind everything, unless an earlier place is found
    for (std::size_t i = ready_.size(); i > 0; --i) {
      const Entry& e = ready_[i - 1];
      if (e.posted || e.number < post.mark) {  // the post runs after this one
        at = i;
        break;
      }
    }
    ready_.insert(ready_.begin() + static_cast<std::ptrdiff_t>(at), Entry{true, post.mark, std::move(post.cb)});
  }
}

}  // namespace exercise
