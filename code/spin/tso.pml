/* code/spin/tso: x86-TSO memory for the wake models (chapter 03).
 * Role: give every thread of a model a store buffer, so that a store followed by a load of
 * another word can run as "load first, store later": the reordering a seq_cst fence exists
 * to forbid, and the one release/acquire does not.
 *
 * The machine. Words live in mem[]. A plain store (any C++ store on x86: relaxed, release
 * or seq_cst-by-fence alike compile to a mov) goes into the storing thread's FIFO buffer,
 * sb[me], and reaches mem[] later, at a moment of the drainer's choosing, in order. A load
 * reads the thread's own newest buffered store of that word if there is one (store
 * forwarding), else mem[]. A fence (mfence, or the locked instruction a seq_cst fence
 * compiles to) waits until the thread's buffer is empty. So does every locked
 * read-modify-write (lock xadd, lock cmpxchg, xchg): fetch_add, compare_exchange and
 * exchange drain the buffer before they act on mem[] and act on it at once. That is why
 * x86 hides some missing fences: a thread whose store is itself a locked RMW has nothing
 * left in its buffer when its next load runs. The C++ model promises no such thing for a
 * relaxed RMW, so the code keeps its fences; the models show which ones x86 needs.
 *
 * A model names its buffered words in `mtype:word = { ... }` (so that a trail prints
 * their names), defines NPROC (threads with a buffer, numbered 0..NPROC-1, the number a
 * trail uses as the thread's column), NADDR (one more than the number of words: mtype
 * values start at 1) and BUFSZ before including this file, and starts one drainer per
 * thread. Words changed only by locked RMWs never sit in a buffer; a model keeps those as
 * plain globals and reads them directly. A model whose stored values mean more than their
 * number may define SHOW_DRAIN(me, a, v), the trail line of a store reaching memory.
 */

#ifndef SHOW_DRAIN
#define SHOW_DRAIN(me, a, v) printf("@%d|  (%e = %d reaches memory)\n", me, a, v)
#endif

chan sb[NPROC] = [BUFSZ] of { mtype:word, byte };  /* per thread: (word, value) pending */
byte mem[NADDR];
byte pend[NPROC * NADDR];  /* per thread and word: how many stores are pending */
byte last[NPROC * NADDR];  /* per thread and word: the newest pending value */

/* A plain store: into the buffer, not yet visible to any other thread. */
inline STORE(me, a, v) {
  atomic {
    sb[me]!a,v;
    pend[me * NADDR + a]++;
    last[me * NADDR + a] = v
  }
}

/* A plain load: the own newest pending store of the word, else memory. */
inline LOAD(me, a, r) {
  atomic {
    if
    :: pend[me * NADDR + a] > 0 -> r = last[me * NADDR + a]
    :: else -> r = mem[a]
    fi
  }
}

/* A seq_cst fence: wait until every earlier store of this thread is in memory. A locked
 * RMW starts with the same wait: models write atomic { DRAINED(me) -> ... }. */
#define DRAINED(me) empty(sb[me])

/* The store buffer of thread `me` drains one store at a time, whenever it likes. */
proctype drainer(byte me) {
  mtype:word a;
  byte v;
end:
  do
  :: atomic {
       sb[me]?a,v ->
       mem[a] = v;
       pend[me * NADDR + a]--;
       SHOW_DRAIN(me, a, v)
     }
  od
}
