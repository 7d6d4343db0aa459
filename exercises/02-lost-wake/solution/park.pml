/* exercises/02-lost-wake/solution/park.pml: announce, fence, re-check, block. The
   negative control PARK_WITHOUT_FENCE (CMakeLists.txt, MODEL_MUTANTS) drops the fence,
   and spin must find the lost wake. */
inline park() {
  announce();
#ifndef PARK_WITHOUT_FENCE
  fence();
#endif
  recheck();
  block()
}
