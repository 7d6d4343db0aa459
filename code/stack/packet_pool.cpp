// stack/packet_pool: the packet buffers a send fills, after Onload's non-blocking packet pool
// (chapter 05).
// Role: the product's pool, PacketPool<> (std::atomic), compiled here once; the template's
// code is in stack/packet_pool.h, where the relaxed-memory model instantiates it too.
#include "stack/packet_pool.h"

namespace handoff::stack {

template class PacketPool<>;

}  // namespace handoff::stack
