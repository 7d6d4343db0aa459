/* models/pool_wake: chapter 02's park/submit pair and the shared lane it wakes through
 * (chapter 03).
 * Role: the job ring's wake protocol of code/pool/ring_pool.cpp on x86-TSO, with the
 * counters as the code keeps them, so that spin either proves that no job is left in the
 * ring while the threads that could take it sleep with no wake coming, or prints the
 * interleaving that leaves it there.
 *
 * The actors. The loop (column 0) submits NJOBS jobs: push (ring_pool.cpp submit()), the
 * seq_cst fence, then wake_one_if_parked(): read parked_ and wakes_in_flight_, and while
 * parked > in flight, CAS in flight up by one and send one poke to the lane. NTHREADS pool
 * threads (columns 1..) run thread_main(): optionally poll the lane without blocking, pop a
 * job or park(): announce (parked_ up by one), fence, re-check the ring, block in recv on
 * the lane; once woken, lower parked_ and give back the wake credit. A job's handler may
 * finish at once or take arbitrarily long ("holds"): a thread that holds cannot take the
 * next job, which is what makes a lost wake cost something even while a thread is awake.
 * The spin before a park is left out: it only repeats the pop, which the model already
 * lets happen at any moment.
 *
 * The ring. One producer (the loop), so the ring is two counters: `pushed`, which the loop
 * publishes with a plain store (the release store of the cell's sequence word in
 * MpmcRing::try_push; the CAS on enqueue_pos before it is locked and drains the loop's
 * buffer, but the publishing store comes after it and sits in the buffer), and `popped`,
 * which consumers advance with a CAS (locked: it never sits in a buffer). A consumer sees a
 * job when the pushed count in memory exceeds popped.
 *
 * The property. When nothing can move any more (timeout), no thread may sit in recv
 * while a job sits in the ring: that thread could have taken it, and no wake is coming
 * (a poke in the lane would let its recv move). A failure ends at exactly that state.
 *
 * Variants (spin -DNAME=value; each defaults to the correct protocol):
 *   FENCE_SUBMIT=0    no fence between the push and the read of parked_
 *   FENCE_PARK=0      no fence between the announce and the re-check
 *   PLAIN_ANNOUNCE=1  the announce is a load and a plain store, not a locked fetch_add.
 *                     With the locked fetch_add, FENCE_PARK=0 still passes on x86: the
 *                     lock xadd drains the buffer itself (the C++ model does not promise
 *                     it for a relaxed fetch_add, so the code keeps the fence).
 *   RECHECK_FIRST=1   park() re-checks the ring, then announces (the reversed order)
 *   DECREMENT=1       a woken thread lowers parked_, then wakes_in_flight_ (chapter 02's
 *                     order): a submit between the two sees as many wakes in flight as
 *                     parked threads and sends none, though the wake it counts is spent.
 *   DECREMENT=2       credit first: wakes_in_flight_, then parked_ (the default)
 *   DECREMENT=3       one atomic word: both counts lowered by one locked RMW
 *   LANE_POLL=1       an awake thread polls the lane socket at the top of its loop and
 *                     spends any poke it finds (chapter 02's hole: the shared lane credit)
 *   CHAIN=1           a thread that pops a job and still sees one in the ring, with
 *                     parked siblings and no wake on its way for them, passes one wake on
 */

#ifndef NTHREADS
#define NTHREADS 2
#endif
#ifndef NJOBS
#define NJOBS 2
#endif
#ifndef FENCE_SUBMIT
#define FENCE_SUBMIT 1
#endif
#ifndef FENCE_PARK
#define FENCE_PARK 1
#endif
#ifndef PLAIN_ANNOUNCE
#define PLAIN_ANNOUNCE 0
#endif
#ifndef RECHECK_FIRST
#define RECHECK_FIRST 0
#endif
#ifndef DECREMENT
#define DECREMENT 2
#endif
#ifndef LANE_POLL
#define LANE_POLL 0
#endif
#ifndef CHAIN
#define CHAIN 0
#endif

mtype:word = { pushed, parked };  /* the buffered words (parked only under PLAIN_ANNOUNCE) */
#define NPROC (NTHREADS + 1)
#define NADDR 3
#define BUFSZ 2
#include "tso.pml"

byte popped;           /* MpmcRing's dequeue position: changed only by CAS */
byte wakes_in_flight;  /* changed only by CAS and fetch_sub */
chan lane = [NJOBS + NTHREADS] of { byte };  /* the shared lane socketpair: pokes */
byte inrecv;           /* ghost: threads blocked in the park's recv */

/* wake_one_if_parked(): poke only while the parked threads outnumber the pokes on their
 * way; the CAS keeps two wakers from spending one credit twice. */
inline wake_one_if_parked(me, p, w) {
  atomic { LOAD(me, parked, p); printf("@%d|reads parked = %d\n", me, p) };
  atomic { w = wakes_in_flight; printf("@%d|reads in flight = %d\n", me, w) };
  do
  :: p > w ->
     atomic {
       DRAINED(me) ->  /* lock cmpxchg */
       if
       :: wakes_in_flight == w ->
          wakes_in_flight++;
          printf("@%d|CAS in flight %d -> %d, pokes the lane\n", me, w, wakes_in_flight);
          lane!1;
          break
       :: else -> w = wakes_in_flight
       fi
     }
  :: atomic { p <= w -> printf("@%d|no poke\n", me) };
     break
  od
}

/* MpmcRing::try_pop: look at the ring (one step: the ring is modelled as linearizable),
 * then claim the job with the CAS on dequeue_pos. `got` first means "a candidate";
 * `recheck` only changes what the trail says. */
inline try_pop(me, got, r, recheck) {
  atomic {
    LOAD(me, pushed, r);
    if
    :: r > popped -> got = 1
    :: else ->
       got = 0;
       if
       :: recheck -> printf("@%d|re-check: ring looks empty\n", me)
       :: else -> printf("@%d|ring looks empty\n", me)
       fi
    fi
  };
  if
  :: got ->
     atomic {
       DRAINED(me) ->  /* lock cmpxchg */
       if
       :: mem[pushed] > popped ->
          popped++;
          printf("@%d|pops job %d\n", me, popped)
       :: else -> got = 0  /* a sibling took it */
       fi
     }
  :: else
  fi
}

proctype loop() {
  byte n, p, w;
  do
  :: n < NJOBS ->
     atomic { DRAINED(0) -> n++ }  /* the CAS on enqueue_pos */
     atomic { STORE(0, pushed, n); printf("@0|pushes job %d (buffered)\n", n) };
#if FENCE_SUBMIT
     atomic { DRAINED(0) -> printf("@0|fence\n") }
#endif
     wake_one_if_parked(0, p, w)
  :: else -> break
  od
}

proctype pool(byte me) {
  bit got, more;
  byte r, p, w;
  do
  :: true ->
#if LANE_POLL
     /* poll_lane(): once per dgram_poll_ns, so maybe now, maybe not */
     if
     :: true ->
        do
        :: atomic {
             lane?r ->
             wakes_in_flight--;
             printf("@%d|lane poll takes a poke: credit back to %d\n", me, wakes_in_flight)
           }
        :: else -> break
        od
     :: true
     fi;
#endif
     try_pop(me, got, r, 0);
     if
     :: !got ->
        /* park() */
#if RECHECK_FIRST
        try_pop(me, got, r, 1);
#endif
        if
        :: !got ->
#if PLAIN_ANNOUNCE
           LOAD(me, parked, p);
           atomic { STORE(me, parked, p + 1); printf("@%d|announces parked %d (plain store, buffered)\n", me, p + 1) };
#else
           atomic {
             DRAINED(me) ->  /* lock xadd */
             mem[parked]++;
             printf("@%d|announces parked %d (lock xadd)\n", me, mem[parked])
           }
#endif
#if FENCE_PARK
           atomic { DRAINED(me) -> printf("@%d|fence\n", me) }
#endif
#if !RECHECK_FIRST
           try_pop(me, got, r, 1);
           if
           :: got ->
              atomic { DRAINED(me) -> mem[parked]-- }  /* not parking after all */
           :: else
           fi
#endif
        :: else
        fi;
        if
        :: !got ->
           /* Entering the kernel to sleep drains the buffer (the sleep path takes locks). */
           atomic { DRAINED(me) -> inrecv++; printf("@%d|blocks in recv\n", me) };
end_park:
           atomic { lane?r -> inrecv--; printf("@%d|woken by a poke\n", me) };
#if DECREMENT == 1
           atomic { DRAINED(me) -> mem[parked]--; printf("@%d|parked down to %d\n", me, mem[parked]) };
           atomic { wakes_in_flight--; printf("@%d|credit back to %d\n", me, wakes_in_flight) }
#elif DECREMENT == 2
           atomic { wakes_in_flight--; printf("@%d|credit back to %d\n", me, wakes_in_flight) };
           atomic { DRAINED(me) -> mem[parked]--; printf("@%d|parked down to %d\n", me, mem[parked]) }
#else
           atomic {
             DRAINED(me) ->
             mem[parked]--;
             wakes_in_flight--;
             printf("@%d|parked down to %d, credit back to %d (one word)\n", me, mem[parked], wakes_in_flight)
           }
#endif
        :: else
        fi
     :: else
     fi;
     if
     :: got ->
#if CHAIN
        /* still work in the ring and parked siblings: pass one wake on */
        atomic {
          LOAD(me, pushed, r);
          more = (r > popped);
          printf("@%d|still work in the ring: %d\n", me, more)
        };
        if
        :: more -> wake_one_if_parked(me, p, w)
        :: else
        fi;
#endif
        if
        :: true -> printf("@%d|runs the job\n", me)
        :: true ->
           printf("@%d|runs the job (a long handler: holds)\n", me);
end_hold:
           false
        fi
     :: else
     fi
  od
}

/* The property, checked where nothing else can move. */
#define NO_LOST_WAKE (inrecv == 0 || mem[pushed] == popped)
active proctype quiescence() {
  timeout ->
  if
  :: !NO_LOST_WAKE ->
     printf("@@|%d job(s) wait in the ring while %d thread(s) sleep in recv, and no poke is on its way\n",
            mem[pushed] - popped, inrecv)
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
