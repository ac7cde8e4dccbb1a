// Bounded command and dependency-token queues, and the token-protocol rules of
// ../shared/reference/isa.md section 4, shared by fsim and the cycle-level model so both apply the
// same rule in the same words.
//
// Tessel's rule for full queues (isa.md section 3, "command/token queue capacity"): fetch blocks
// when a command queue is full, and a module does not start an instruction whose push would find
// its token queue full; it waits. A queue that stays full with nothing else able to progress is a
// deadlock, which the simulators report as a SimError ("... waits on l2g (full, depth 1) ...").
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "isa/instruction.h"
#include "sim/common/simulator.h"

namespace tessel::sim {

/// A bounded FIFO (ring buffer). `T` must be default-constructible and copyable.
/// The capacity is a limit, not an allocation: storage starts small and doubles as entries
/// arrive, so memory follows the entries actually queued (a legal CMD_QUEUE_DEPTH of 2^24 costs
/// nothing until a program fills it).
template <typename T>
class BoundedQueue {
 public:
  /// A queue of at most `capacity` entries (>= 1; throws InternalError otherwise).
  explicit BoundedQueue(uint32_t capacity = 1) : capacity_(capacity) {
    TESSEL_CHECK(capacity >= 1, "queue capacity {} must be at least 1", capacity);
  }
  uint32_t capacity() const { return capacity_; }
  uint32_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  bool full() const { return size_ == capacity_; }
  /// Entries the storage holds now (<= capacity(); grows on demand). For tests of the above.
  size_t allocated() const { return slots_.size(); }
  /// Appends `v`; the caller checks full() first (pushing onto a full queue is an InternalError).
  void push(const T& v) {
    TESSEL_CHECK(!full(), "push onto a full queue of capacity {}", capacity());
    if (size_ == slots_.size()) grow();
    size_t tail = head_ + size_;
    if (tail >= slots_.size()) tail -= slots_.size();
    slots_[tail] = v;
    ++size_;
  }
  /// The oldest entry; the queue must not be empty.
  const T& front() const { return slots_[head_]; }
  T& front() { return slots_[head_]; }
  /// Removes the oldest entry; the queue must not be empty (InternalError otherwise).
  void pop() {
    TESSEL_CHECK(size_ > 0, "pop from an empty queue");
    if (++head_ == slots_.size()) head_ = 0;
    --size_;
  }
  /// Empties the queue, keeping its capacity (and the storage it has grown).
  void clear() { head_ = 0; size_ = 0; }

 private:
  // Doubles the storage (at least 8 entries, at most the capacity), unrolling the ring so the
  // oldest entry is first.
  void grow() {
    const size_t want = std::min<size_t>(capacity_, std::max<size_t>(8, slots_.size() * 2));
    std::vector<T> next(want);
    for (uint32_t i = 0; i < size_; ++i) {
      size_t k = head_ + i;
      if (k >= slots_.size()) k -= slots_.size();
      next[i] = slots_[k];
    }
    slots_ = std::move(next);
    head_ = 0;
  }

  std::vector<T> slots_;
  uint32_t capacity_;
  size_t head_ = 0;
  uint32_t size_ = 0;
};

/// A dependency-token queue: tokens carry no data, so it is a bounded counter.
class TokenCounter {
 public:
  explicit TokenCounter(uint32_t capacity = 1) : capacity_(capacity) {}
  uint32_t capacity() const { return capacity_; }
  uint32_t count() const { return count_; }
  bool empty() const { return count_ == 0; }
  bool full() const { return count_ >= capacity_; }
  /// Adds a token; the caller checks full() first (InternalError otherwise).
  void push() {
    TESSEL_CHECK(count_ < capacity_, "token push onto a full queue of depth {}", capacity_);
    ++count_;
  }
  /// Removes a token; the caller checks empty() first (InternalError otherwise).
  void pop() {
    TESSEL_CHECK(count_ > 0, "token pop from an empty queue");
    --count_;
  }
  void clear() { count_ = 0; }

 private:
  uint32_t capacity_;
  uint32_t count_ = 0;
};

/// The token queue that module `m` pops when its pop_prev (prev = true) or pop_next (prev = false)
/// flag is set: load pops g2l (next); compute pops l2g (prev) and s2g (next); store pops g2s
/// (prev). Returns nullopt for the illegal combinations (load prev, store next).
std::optional<isa::TokenQueue> pop_queue(isa::Module m, bool prev);
/// The token queue that module `m` pushes for push_prev / push_next: load pushes l2g (next);
/// compute pushes g2l (prev) and g2s (next); store pushes s2g (prev). nullopt when illegal.
std::optional<isa::TokenQueue> push_queue(isa::Module m, bool prev);

/// The queues one instruction pops and pushes, each list in flag order (prev before next).
struct TokenPorts {
  isa::TokenQueue pops[2];
  uint32_t n_pops = 0;
  isa::TokenQueue pushes[2];
  uint32_t n_pushes = 0;
};

/// Resolves the dependency flags of `insn` for the module that executes it (insn.module()).
/// Throws SimError when the module may not use a flag (load: pop_prev/push_prev; store:
/// pop_next/push_next), e.g. "load module: insn 3 (LOAD INP) sets pop_prev, which the load
/// module does not have (it has no previous module)".
TokenPorts token_ports(const isa::Instruction& insn, uint32_t insn_index);

/// A short description of an instruction for messages: "LOAD INP", "STORE", "GEMM",
/// "GEMM reset", "ALU ADD", "FINISH".
std::string describe(const isa::Instruction& insn);

}  // namespace tessel::sim
