/* models/post_wake: call_soon_threadsafe's wake against the loop's park (chapter 04).
 * Role: the wake protocol of evloop::EventLoop on x86-TSO, so that spin either proves that
 * no post is left in the post queue while the loop sleeps in epoll_wait with no poke
 * coming, or prints the interleaving that leaves it there. The code:
 * code/evloop/event_loop.cpp ([evloop.threadsafe], park_allowed()), code/reactor/wake_flag.cpp
 * (announce_wait, poke_if_waiting, end_wait) and code/evloop/post_queue.cpp (a vector under
 * a std::mutex: push, take, empty).
 *
 * The actors. NPRODUCERS producer threads (columns 1..) each call call_soon_threadsafe once:
 * PostQueue::push (lock the mutex, append: a plain store, buffered, unlock), then
 * poke_if_waiting: the seq_cst fence, read waiting_, and if it is raised exchange it to
 * false (xchg: locked) and poke the loop if the exchange returned true. The loop (column 0)
 * takes the posts and, with nothing left to run, parks as park_allowed() does: raise
 * waiting_ (a plain store), fence, re-check the post queue (PostQueue::empty(): lock, read,
 * unlock); if a post is there, lower the flag (end_wait) and turn again without waiting,
 * else block in epoll_wait on the wake socket, take one poke, lower the flag and take the
 * posts (lock, swap, unlock).
 *
 * What the mutex is on x86-TSO (tso.pml's machine). lock() is a locked cmpxchg on the
 * mutex's word (glibc's lll_lock; any lock must take its word with a locked RMW): it waits
 * until its thread's store buffer is empty, then acts on memory at once, and it waits while
 * another thread holds the word. unlock() is where the implementations differ:
 *   - glibc's pthread_mutex_unlock (lll_unlock: an atomic exchange, `xchg`) is a locked
 *     instruction: it drains the buffer, so the push is in memory before unlock returns,
 *     and no later load of the poster can pass it. LOCKED_UNLOCK=1, the default.
 *   - C++ promises only that unlock() is a release: a plain `mov` of 0 (what a spinlock's
 *     release compiles to) is one. Then the append and the unlock sit in the buffer, in that
 *     order, while the poster's later loads run. LOCKED_UNLOCK=0.
 * What the mutex orders either way: critical sections one after the other, and a store
 * made inside one is in memory before the next holder's lock succeeds (the buffer drains in
 * order, the append before the unlock). So while the loop's re-check takes the lock, the
 * lost wake needs no fence on either side: if the loop's critical section comes first, its
 * flag, stored before its locked cmpxchg, is in memory before the poster's lock, and the
 * poster reads the flag after that lock (a load does not pass a locked instruction); if the
 * poster's comes first, the loop's re-check sees the post. The C++ model says the same
 * (unlock synchronizes-with the next lock: either the flag's store happens-before the
 * poster's load, or the append happens-before the re-check), so the two fences in
 * reactor/wake_flag.cpp are what the lock-free completion ring needs, and redundant for this
 * queue. They become necessary where the re-check reads the queue without the lock (an
 * atomic size or flag read lock-free: LOCKED_RECHECK=0): then the loop needs its fence,
 * and the poster its fence unless its unlock is a locked instruction (glibc on x86 hides a
 * missing one; C++ does not promise it).
 *
 * The queue. One word, posts: how many posts were ever appended (the vector's size, counted
 * from the start); the loop has taken `taken` of them, so a post is queued when
 * posts > taken. An append reads and writes it inside the critical section.
 *
 * The property. When nothing can move any more (timeout), the loop must not be in
 * epoll_wait while a post waits in the queue.
 *
 * Variants (spin -DNAME=value; each defaults to the post queue as first written, its re-check
 * under the lock; the code as it ships re-checks lock-free, LOCKED_RECHECK=0):
 *   RECHECK_FIRST=1   ParkOrder::recheck_then_announce: re-check, then raise the flag
 *   FENCE_LOOP=0      no fence between raising the flag and the re-check
 *   FENCE_POST=0      no fence between the push and the read of the flag
 *   LOCKED_UNLOCK=0   unlock() is a plain release store, not glibc's xchg
 *   LOCKED_RECHECK=0  the re-check reads the queue's size without taking the mutex
 */

#ifndef NPRODUCERS
#define NPRODUCERS 2
#endif
#ifndef RECHECK_FIRST
#define RECHECK_FIRST 0
#endif
#ifndef FENCE_LOOP
#define FENCE_LOOP 1
#endif
#ifndef FENCE_POST
#define FENCE_POST 1
#endif
#ifndef LOCKED_UNLOCK
#define LOCKED_UNLOCK 1
#endif
#ifndef LOCKED_RECHECK
#define LOCKED_RECHECK 1
#endif

/* The buffered words (mtype values start at 1, numbered from the list's end). */
mtype:word = { waiting, posts, mutex };
#define NPROC (NPRODUCERS + 1)
#define NADDR 4
#define BUFSZ 3
#include "tso.pml"

byte taken;      /* posts the loop has taken (loop only) */
chan pokes = [NPRODUCERS] of { byte };  /* the wake socket: producers -> loop */
bit inwait;      /* ghost: the loop is blocked in epoll_wait */

/* lock(): a locked cmpxchg, retried (or slept on) while another thread holds the word. */
inline lock(me) {
  atomic { DRAINED(me) && mem[mutex] == 0 -> mem[mutex] = 1 }
}

inline unlock(me) {
#if LOCKED_UNLOCK
  atomic { DRAINED(me) -> mem[mutex] = 0 }  /* glibc: xchg */
#else
  STORE(me, mutex, 0)  /* a release store: mov */
#endif
}

/* Loop: raise waiting_ and fence (announce_wait). */
inline announce() {
  atomic { STORE(0, waiting, 1); printf("@0|raises waiting (buffered)\n") };
#if FENCE_LOOP
  atomic { DRAINED(0) -> printf("@0|fence\n") }
#endif
}

/* Loop: PostQueue::empty(). Holding the lock, the read cannot change until the unlock. */
inline recheck(n) {
#if LOCKED_RECHECK
  atomic { lock(0); LOAD(0, posts, n); printf("@0|re-check under the lock reads posts = %d\n", n) };
  unlock(0)
#else
  atomic { LOAD(0, posts, n); printf("@0|re-check without the lock reads posts = %d\n", n) }
#endif
}

proctype loop() {
  byte n, c;
  do
  :: taken == NPRODUCERS -> break
  :: else ->
#if RECHECK_FIRST
     recheck(n);
     if
     :: n > taken -> goto turn
     :: else
     fi;
     announce();
#else
     announce();
     recheck(n);
     if
     :: n > taken ->
        atomic { STORE(0, waiting, 0); printf("@0|lowers waiting, turns without waiting\n") };
        goto turn
     :: else
     fi;
#endif
     /* Entering the kernel to sleep drains the buffer (the sleep path takes locks). */
     atomic { DRAINED(0) -> inwait = 1; printf("@0|blocks in epoll_wait\n") };
end_wait:
     atomic { pokes?c -> inwait = 0; printf("@0|woken by a poke\n") };
     STORE(0, waiting, 0);  /* end_wait() */
turn:
     /* take_posts(): lock, swap the vector out, unlock. */
     atomic { lock(0); LOAD(0, posts, n); taken = n; printf("@0|takes the posts: %d so far\n", n) };
     unlock(0)
  od
}

proctype producer(byte me) {
  byte n, f;
  atomic { lock(me); printf("@%d|locks the post queue\n", me) };
  atomic { LOAD(me, posts, n); STORE(me, posts, n + 1); printf("@%d|pushes post %d (buffered)\n", me, n + 1) };
#if LOCKED_UNLOCK
  atomic { unlock(me); printf("@%d|unlocks (xchg: the push is in memory)\n", me) };
#else
  atomic { unlock(me); printf("@%d|unlocks (a plain store, buffered)\n", me) };
#endif
#if FENCE_POST
  atomic { DRAINED(me) -> printf("@%d|fence\n", me) };
#endif
  atomic { LOAD(me, waiting, f); printf("@%d|reads waiting = %d\n", me, f) };
  if
  :: f ->
     atomic {
       DRAINED(me) ->  /* xchg */
       f = mem[waiting];
       mem[waiting] = 0;
       printf("@%d|exchange returns %d\n", me, f)
     };
     if
     :: f -> atomic { pokes!1; printf("@%d|pokes the loop\n", me) }
     :: else
     fi
  :: else
  fi
}

/* The property, checked where nothing else can move. */
#define NO_LOST_WAKE (!inwait || taken == NPRODUCERS)
active proctype quiescence() {
  timeout ->
  if
  :: !NO_LOST_WAKE ->
     printf("@@|%d post(s) wait in the queue while the loop sleeps in epoll_wait, and no poke is on its way\n",
            NPRODUCERS - taken)
  :: else
  fi;
  assert(NO_LOST_WAKE)
}

init {
  byte i = 1;
  atomic {
    run drainer(0);
    run loop();
    do
    :: i <= NPRODUCERS ->
       run drainer(i);
       run producer(i);
       i++
    :: else -> break
    od
  }
}
