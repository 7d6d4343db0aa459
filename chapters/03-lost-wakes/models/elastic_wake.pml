/* models/elastic_wake: chapter 03's elastic pool, each thread's own wake channel, on
 * x86-TSO (chapter 03).
 * Role: the wake protocol of code/pool/elastic_pool.cpp and code/sync/wake_channel.cpp,
 * with the parked count and the state words as the code keeps them, so that spin either
 * proves that no job is left in the ring while a thread that could take it sleeps with no
 * wake coming, and that the count stays true, or prints the interleaving that breaks it.
 *
 * The actors. The loop (column 0) submits NJOBS jobs: push (ElasticPool::submit), the
 * seq_cst fence, then wake_if_all_parked(): read `parked`, and only when every thread is
 * counted parked (rule 2) wake_newest(): read each thread's state word, choose the newest
 * PARKED one, CAS its word PARKED(ticket) -> WOKEN, and on success lower `parked` itself,
 * before it looks at the count again; a failed CAS (the thread cancelled) chooses again.
 * Between submits and after them the loop runs its passes, and in each the age check
 * (rule 3, check_age()): with jobs in the ring and the pop counter standing still since the
 * last pass, wake_newest() as above. NTHREADS pool threads (columns 1..) run thread_main():
 * pop a job or park(): take a ticket and count itself (`parked` up by one), announce
 * PARKED(ticket) on its own word (a release store: plain, buffered), fence, re-check the
 * ring; if it finds a job, cancel (CAS its word PARKED -> RUNNING, and lower `parked` only
 * if that CAS won: if it lost, the loop woke it and lowered the count); if not, sleep in
 * FUTEX_WAIT while its word says PARKED(ticket), then set RUNNING (WakeChannel::sleep).
 * A job's handler finishes at once or, with HOLD, may hold its thread for the rest of the
 * run: a thread in a long handler, which neither takes the next job nor counts as parked.
 *
 * Left out, and why. The idle spinner (rule 1) only repeats the pop, which the model lets
 * happen at any moment, and a spinner parks through the same park afterwards. The stop
 * flag is the same store-buffering shape as the push (flag, fence, read the words) with
 * wake_newest() repeated; the ticket and the count are taken in one step here (the ticket
 * ranks parks and orders nothing). The futex is the word: FUTEX_WAIT sleeps only while the
 * word in memory still says PARKED(ticket), and every successful CAS is followed by the
 * FUTEX_WAKE, so a sleeper can move exactly when its word does. The age check's passes
 * are taken only when one would act (jobs in the ring, a word in memory says PARKED): a
 * pass that changes nothing is left out, so that the loop can block and timeout judge the
 * end. With the age check on, then, the model checks what a pass does (its CAS against the
 * thread's cancel, the count), and that a held thread needs it; that the loop keeps passing
 * is the capped wait's job (max_wait_ms()), which the model takes as given.
 *
 * Temporaries are cleared once used (p = 0, r = 0, ...): spin would otherwise tell two
 * states apart by a value that no later step reads.
 *
 * Memory. `parked` and the ticket counter change only by locked RMWs (fetch_add,
 * fetch_sub): never buffered. A state word is stored plainly by its own thread
 * (announce_parked, set(RUNNING)) and CASed (locked) by the thread or the loop. The ring is
 * pool_wake.pml's: `pushed`, the loop's publishing store (buffered), and `popped` (CAS).
 *
 * The properties. (1) When nothing can move any more (timeout), no thread sleeps in
 * FUTEX_WAIT while a job sits in the ring (a wake on its way would let it move); (2) the
 * count is true: each park is counted once and lowered once, by exactly one side, and at
 * the end `parked` equals the threads asleep; (3) with ONE_WAKE (rule 2's promise), a
 * submit never wakes a thread while a thread it already woke still says WOKEN, so a burst
 * into a parked lane wakes one.
 *
 * Variants (spin -DNAME=value; each defaults to the protocol as it ships):
 *   FENCE_SUBMIT=0   no fence between the push and the read of `parked`
 *   FENCE_PARK=0     no fence between the announce and the re-check. Unlike chapter 02's
 *                    park, x86 does not hide this one: the count's fetch_add is locked, but
 *                    the announcement the waker chooses by is the word's plain store after it.
 *   WOKEN_LOWERS=1   the waker's successful CAS does not lower `parked`; the thread lowers
 *                    it itself once it is back from the park (woken, or its cancel lost)
 *   PLAIN_CANCEL=1   the cancel is a plain store of RUNNING and an unconditional decrement
 *   AGE_CHECK=0      the loop runs no age check (rule 2 alone)
 *   HOLD=0           every handler finishes: no thread is held in a long job
 *   ONE_WAKE=0       do not check property (3)
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
#ifndef WOKEN_LOWERS
#define WOKEN_LOWERS 0
#endif
#ifndef PLAIN_CANCEL
#define PLAIN_CANCEL 0
#endif
#ifndef AGE_CHECK
#define AGE_CHECK 1
#endif
#ifndef HOLD
#define HOLD 1
#endif
#ifndef ONE_WAKE
#define ONE_WAKE 1
#endif
#if NTHREADS > 2
#error "elastic_wake.pml names two state words: add word3 ... to mtype:word for more threads"
#endif

/* The state word's values (WakeChannel's kinds; PARKED carries the park's ticket). */
#define RUNNING 0
#define WOKEN 1
#define PARKED(t) (2 + (t))
#define IS_PARKED(v) ((v) >= 2)
#define TICKET(v) ((v) - 2)

/* The buffered words (each list is numbered from its end: pushed is 1, word1 is 2, ...). */
mtype:word = { word2, word1, pushed };
#define WORD(i) (1 + (i))
#define ANY_PARKED (IS_PARKED(mem[WORD(1)]) || IS_PARKED(mem[WORD(NTHREADS)]))
#define NPROC (NTHREADS + 1)
#define NADDR 4
#define BUFSZ 2
#define SHOW_DRAIN(me, a, v)                                                          \
  if                                                                                  \
  :: a == pushed -> printf("@%d|  (pushed = %d reaches memory)\n", me, v)             \
  :: a != pushed && v == RUNNING -> printf("@%d|  (its word = RUNNING reaches memory)\n", me) \
  :: a != pushed && IS_PARKED(v) ->                                                   \
     printf("@%d|  (its word = PARKED #%d reaches memory)\n", me, TICKET(v))          \
  :: else -> printf("@%d|  (%e = %d reaches memory)\n", me, a, v)                     \
  fi
#include "tso.pml"

byte popped;              /* MpmcRing's dequeue position: changed only by CAS */
byte parked;              /* Core::parked: changed only by fetch_add and fetch_sub */
byte tickets;             /* Core::park_seq: changed only by fetch_add */
byte asleep;              /* ghost: threads in FUTEX_WAIT */
byte counted[NTHREADS + 1];  /* ghost: thread i's parks counted and not yet lowered */

/* parked.fetch_sub(1) for a park of thread `whose`, by whichever side owns it: never more
 * often than it counted itself. (The loop lowers after its CAS, in a step of its own: the
 * woken thread may park again first, so `parked` can read one above the threads for a
 * moment; only the loop acts on the count, and it lowers before it looks again.) */
inline lower(who, whose) {
  atomic {
    DRAINED(who) ->  /* lock xadd */
    if
    :: counted[whose] == 0 && who == 0 ->
       printf("@!|the loop lowers parked for pool-%d's park a second time: from %d to %d, one below the truth\n",
              whose, parked, parked - 1)
    :: counted[whose] == 0 && who != 0 ->
       printf("@!|pool-%d lowers parked for its park, which the loop's wake lowered already: from %d to %d\n",
              whose, parked, parked - 1)
    :: else
    fi;
    assert(counted[whose] > 0 && parked > 0);
    counted[whose]--;
    parked--;
    if
    :: who == 0 -> printf("@0|lowers parked to %d for pool-%d\n", parked, whose)
    :: else -> printf("@%d|lowers parked to %d\n", who, parked)
    fi
  }
}

/* Core::wake_newest(): choose the newest PARKED word, CAS it to WOKEN; on success lower the
 * count (unless WOKEN_LOWERS), on a lost CAS choose again. `submit` turns on check (3). */
inline wake_newest(submit, i, best, w, bw) {
  do
  :: best = 0;
     i = 1;
     do
     :: i <= NTHREADS ->
        atomic {
          w = mem[WORD(i)];  /* parked_seq(): relaxed; the loop never buffers a word */
          if
          :: w == RUNNING -> printf("@0|reads pool-%d's word: RUNNING\n", i)
          :: w == WOKEN -> printf("@0|reads pool-%d's word: WOKEN\n", i)
          :: else -> printf("@0|reads pool-%d's word: PARKED #%d\n", i, TICKET(w))
          fi;
          if
          :: IS_PARKED(w) && (best == 0 || TICKET(w) > TICKET(bw)) -> best = i; bw = w
          :: else
          fi;
          i++
        }
     :: else -> break
     od;
     if
     :: best == 0 -> printf("@0|finds no word PARKED: wakes nobody\n"); break
     :: else
     fi;
     atomic {
       DRAINED(0) ->  /* lock cmpxchg */
       if
       :: mem[WORD(best)] == bw ->
#if ONE_WAKE
          i = 1;
          do
          :: i <= NTHREADS ->
             if
             :: submit && mem[WORD(i)] == WOKEN ->
                printf("@!|the submit wakes pool-%d as well, while pool-%d, woken by an earlier one, is not back: the burst wakes two\n",
                       best, i)
             :: else
             fi;
             assert(!submit || mem[WORD(i)] != WOKEN);
             i++
          :: else -> break
          od;
#endif
          mem[WORD(best)] = WOKEN;
          printf("@0|CAS pool-%d PARKED #%d -> WOKEN, FUTEX_WAKE\n", best, TICKET(bw));
          w = 1
       :: else ->
          printf("@0|CAS pool-%d PARKED #%d fails: it cancelled\n", best, TICKET(bw));
          w = 0
       fi
     };
     if
     :: w ->
#if !WOKEN_LOWERS
        lower(0, best);
#endif
        break
     :: else
     fi
  od;
  atomic { i = 0; best = 0; w = 0; bw = 0 }
}

/* MpmcRing::try_pop, as in pool_wake.pml. */
inline try_pop(me, got, r, recheck) {
  atomic {
    LOAD(me, pushed, r);
    if
    :: r > popped -> got = 1; r = 0
    :: else ->
       r = 0;
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
          if
          :: recheck -> printf("@%d|re-check: pops job %d\n", me, popped)
          :: else -> printf("@%d|pops job %d\n", me, popped)
          fi
       :: else -> got = 0  /* a sibling took it */
       fi
     }
  :: else
  fi
}

proctype loop() {
  byte n, p, last_pops = 255, i, best, w, bw;
  bit due;
end_loop:
  do
  :: n < NJOBS ->
     /* submit() */
     atomic { DRAINED(0) -> n++ }  /* the CAS on enqueue_pos */
     atomic { STORE(0, pushed, n); printf("@0|pushes job %d (buffered)\n", n) };
#if FENCE_SUBMIT
     atomic { DRAINED(0) -> printf("@0|fence\n") }
#endif
     /* wake_if_all_parked(): relaxed load of the count (never buffered: locked RMWs only) */
     atomic { p = parked; printf("@0|reads parked = %d\n", p) };
     if
     :: p >= NTHREADS -> p = 0; wake_newest(1, i, best, w, bw)
     :: else -> p = 0; printf("@0|not every thread parked: wakes nobody\n")
     fi
#if AGE_CHECK
  /* A later pass of the loop (its wait is capped while jobs wait), with jobs in the ring and
   * a thread parked: the passes in which the age check would act. A pass that can change
   * nothing is left out, so the loop blocks when it has nothing to do and timeout can
   * check the end state; the check below is the code's. */
  :: atomic {
       n > popped && ANY_PARKED ->
       p = popped;  /* jobs.pops() */
       if
       :: p != last_pops -> last_pops = p; p = 0; due = 0; printf("@0|age check: pops at %d, starts timing\n", last_pops)
       :: else -> p = 0; due = 1; printf("@0|age check: jobs wait and pops stood still for T\n")
       fi
     };
     if
     :: due -> due = 0; wake_newest(0, i, best, w, bw)
     :: else
     fi
#else
  :: n == NJOBS -> break
#endif
  od
}

proctype pool(byte me) {
  bit got, woken;
  byte r, t;
  do
  :: true ->
     try_pop(me, got, r, 0);
     if
     :: !got ->
        /* park(): ticket and count (two locked RMWs, one step here), announce, fence */
        atomic {
          DRAINED(me) ->  /* lock xadd */
          t = tickets;
          tickets++;
          counted[me]++;
          parked++;
          printf("@%d|takes ticket #%d, counts itself: parked = %d\n", me, t, parked)
        };
        atomic { STORE(me, WORD(me), PARKED(t)); printf("@%d|announces PARKED #%d (buffered)\n", me, t) };
#if FENCE_PARK
        atomic { DRAINED(me) -> printf("@%d|fence\n", me) };
#endif
        try_pop(me, got, r, 1);
        if
        :: got ->
           /* not parking after all: cancel_park() */
#if PLAIN_CANCEL
           atomic { STORE(me, WORD(me), RUNNING); printf("@%d|cancels: stores RUNNING (buffered)\n", me) };
           lower(me, me)
#else
           atomic {
             DRAINED(me) ->  /* lock cmpxchg */
             if
             :: mem[WORD(me)] == PARKED(t) ->
                mem[WORD(me)] = RUNNING;
                woken = 0;
                printf("@%d|cancels: CAS PARKED #%d -> RUNNING\n", me, t)
             :: else ->
                woken = 1;
                printf("@%d|cancel's CAS fails: the loop woke it\n", me)
             fi
           };
#if WOKEN_LOWERS
           lower(me, me);
#else
           if
           :: !woken -> lower(me, me)
           :: else
           fi;
#endif
           if
           :: woken -> atomic { STORE(me, WORD(me), RUNNING); printf("@%d|sets RUNNING (buffered)\n", me) }
           :: else
           fi
#endif
        :: else ->
           /* sleep(): FUTEX_WAIT while the word in memory says PARKED(t); the syscall
            * drains the buffer (the sleep path takes locks). */
           atomic {
             DRAINED(me) ->
             if
             :: mem[WORD(me)] == PARKED(t) -> woken = 0; asleep++; printf("@%d|sleeps in FUTEX_WAIT\n", me)
             :: else -> woken = 1; printf("@%d|word is WOKEN: FUTEX_WAIT returns at once\n", me)
             fi
           };
           if
           :: !woken ->
end_sleep:
              atomic { mem[WORD(me)] != PARKED(t) -> asleep--; printf("@%d|woken\n", me) }
           :: else
           fi;
#if WOKEN_LOWERS
           lower(me, me);
#endif
           atomic { STORE(me, WORD(me), RUNNING); printf("@%d|sets RUNNING (buffered)\n", me) }
        fi
     :: else
     fi;
     atomic { t = 0; woken = 0 };
     if
     :: got ->
        got = 0;
        if
        :: true -> printf("@%d|runs the job\n", me)
#if HOLD
        :: true ->
           printf("@%d|runs the job (a long handler: holds)\n", me);
end_hold:
           false
#endif
        fi
     :: else
     fi
  od
}

/* The properties at the end, where nothing else can move. */
#define NO_LOST_WAKE (asleep == 0 || mem[pushed] == popped)
#define COUNT_TRUE (parked == asleep)
active proctype quiescence() {
  timeout ->
  if
  :: !NO_LOST_WAKE ->
     printf("@@|%d job(s) wait in the ring while %d thread(s) sleep in FUTEX_WAIT, and no wake is on its way\n",
            mem[pushed] - popped, asleep)
  :: NO_LOST_WAKE && !COUNT_TRUE ->
     printf("@@|parked says %d while %d thread(s) sleep\n", parked, asleep)
  :: else
  fi;
  assert(NO_LOST_WAKE && COUNT_TRUE)
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
