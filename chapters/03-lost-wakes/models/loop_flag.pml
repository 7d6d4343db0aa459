/* models/loop_flag: the loop's flag and the pool's completions (chapter 03).
 * Role: the completion ring's wake protocol of code/pool/ring_pool.cpp
 * (ready_to_wait()/after_wait() against complete()) on x86-TSO, so that spin either proves
 * that no completion is left in the ring while the loop sleeps in epoll_wait with no poke
 * coming, or prints the interleaving that leaves it there.
 *
 * The actors. NTHREADS pool threads (columns 1..) each complete one frame: push it
 * (the CAS on enqueue_pos, locked, then the release store of the cell's sequence: a plain
 * store, buffered), the seq_cst fence, read loop_waiting_, and if it is raised, exchange
 * it to false (xchg: locked) and poke the loop if the exchange returned true, so that of
 * all the threads that saw the flag exactly one pokes. The loop (column 0) drains the
 * completion ring, then ready_to_wait(): raise loop_waiting_ (a plain store), fence,
 * re-check the ring; if it holds a completion, lower the flag and turn again without
 * waiting, else block in epoll_wait on the pool's socketpair, take one poke (one recv,
 * as drain_loop_pokes() does), lower the flag (after_wait()) and drain.
 *
 * The ring. Several producers, so the ring is its cells: cell[i] is published when its
 * producer's plain store of it reaches memory, and the loop (the only consumer) takes
 * cells in order, so a producer that has claimed cell 0 and not yet published it hides
 * cell 1, as MpmcRing does.
 *
 * The property. When nothing can move any more (timeout), the loop must not be in
 * epoll_wait while a published completion waits in the ring.
 *
 * Variants (spin -DNAME=value; each defaults to the correct protocol):
 *   FENCE_LOOP=0      no fence between raising the flag and re-checking the ring
 *   FENCE_COMPLETE=0  no fence between the push and the read of the flag. The xchg that
 *                     follows is locked, but it comes after the load it would have to
 *                     order, so x86 hides nothing here.
 *   CHECK_FIRST=1     the loop re-checks the ring, then raises the flag (reversed)
 */

#ifndef NTHREADS
#define NTHREADS 2
#endif
#ifndef FENCE_LOOP
#define FENCE_LOOP 1
#endif
#ifndef FENCE_COMPLETE
#define FENCE_COMPLETE 1
#endif
#ifndef CHECK_FIRST
#define CHECK_FIRST 0
#endif

/* The buffered words: loop_waiting_ and one cell per frame (mtype values start at 1,
 * and each list is numbered from its end: cell0 is 1, cell1 is 2, ...). */
mtype:word = { loop_waiting, cell1, cell0 };
#define CELL(i) (1 + (i))
#define NFRAMES NTHREADS
#if NTHREADS > 2
#error "loop_flag.pml names two cells: add cell2 ... to mtype:word for more threads"
#endif
#define NPROC (NTHREADS + 1)
#define NADDR 4
#define BUFSZ 2
#include "tso.pml"

byte enq;        /* the completion ring's enqueue_pos: changed only by CAS */
byte taken;      /* completions the loop has taken (its dequeue_pos) */
chan done = [NFRAMES] of { byte };  /* the pool→loop socketpair: pokes */
bit inwait;      /* ghost: the loop is blocked in epoll_wait */

/* drain_completions(): take every published cell, in order. */
inline drain(c) {
  do
  :: atomic {
       taken < NFRAMES ->
       LOAD(0, CELL(taken), c);
       if
       :: c -> taken++; printf("@0|takes completion %d\n", taken)
       :: else -> printf("@0|completion ring looks empty\n"); break
       fi
     }
  :: atomic { taken == NFRAMES -> break }
  od
}

/* ready_to_wait()'s two steps. */
inline raise_flag() {
  atomic { STORE(0, loop_waiting, 1); printf("@0|raises loop_waiting (buffered)\n") };
#if FENCE_LOOP
  atomic { DRAINED(0) -> printf("@0|fence\n") }
#endif
}

inline recheck(c) {
  atomic {
    LOAD(0, CELL(taken), c);
    if
    :: c -> printf("@0|re-check: a completion is waiting\n")
    :: else -> printf("@0|re-check: completion ring looks empty\n")
    fi
  }
}

proctype loop() {
  byte c;
  do
  :: taken == NFRAMES -> break
  :: else ->
#if CHECK_FIRST
     recheck(c);
     if
     :: c -> goto turn
     :: else
     fi;
     raise_flag();
#else
     raise_flag();
     recheck(c);
     if
     :: c ->
        STORE(0, loop_waiting, 0);
        goto turn
     :: else
     fi;
#endif
     /* Entering the kernel to sleep drains the buffer (the sleep path takes locks). */
     atomic { DRAINED(0) -> inwait = 1; printf("@0|blocks in epoll_wait\n") };
end_wait:
     atomic { done?c -> inwait = 0; printf("@0|woken by a poke\n") };
     STORE(0, loop_waiting, 0);  /* after_wait() */
turn:
     drain(c)
  od
}

proctype pool(byte me) {
  byte slot, f;
  atomic { DRAINED(me) -> slot = enq; enq++ };  /* the CAS on enqueue_pos */
  atomic { STORE(me, CELL(slot), 1); printf("@%d|pushes completion %d (buffered)\n", me, slot + 1) };
#if FENCE_COMPLETE
  atomic { DRAINED(me) -> printf("@%d|fence\n", me) };
#endif
  atomic { LOAD(me, loop_waiting, f); printf("@%d|reads loop_waiting = %d\n", me, f) };
  if
  :: f ->
     atomic {
       DRAINED(me) ->  /* xchg */
       f = mem[loop_waiting];
       mem[loop_waiting] = 0;
       printf("@%d|exchange returns %d\n", me, f)
     };
     if
     :: f -> atomic { done!1; printf("@%d|pokes the loop\n", me) }
     :: else
     fi
  :: else
  fi
}

/* The property, checked where nothing else can move. */
#define NO_LOST_WAKE (!inwait || taken == NFRAMES)
active proctype quiescence() {
  timeout ->
  if
  :: !NO_LOST_WAKE ->
     printf("@@|%d completion(s) wait in the ring while the loop sleeps in epoll_wait, and no poke is on its way\n",
            NFRAMES - taken)
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
    :: i <= NTHREADS ->
       run drainer(i);
       run pool(i);
       i++
    :: else -> break
    od
  }
}
