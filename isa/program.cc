// The Program container: segments, binary serialisation, relocation.
//
// Serialised layout (all integers little-endian):
//   "TSLPROG1"                         8-byte magic; the trailing digit is the format version
//   u32 n, n bytes                     config as JSON (HwConfig::to_json)
//   u32 n, n bytes                     name
//   u32 n, n x 16 bytes                instructions, encoded by IsaSpec (word 0 first)
//   u32 n, n x 4 bytes                 micro-op table, encoded by IsaSpec
//   u32 n, n x segment                 segment = u32 len, name, u8 kind, u64 offset, u64 size
//   u64 n, n bytes                     DRAM image
// Nothing may follow the image.
#include "isa/program.h"

#include <cstring>
#include <limits>

#include "isa/spec.h"
#include "support/error.h"
#include "support/text.h"

namespace tessel::isa {

namespace {

constexpr char kMagic[8] = {'T', 'S', 'L', 'P', 'R', 'O', 'G', '1'};

uint64_t round_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

class Writer {
 public:
  void u8(uint8_t v) { out_.push_back(v); }
  void u32(uint32_t v) {
    for (int i = 0; i < 4; ++i) out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void u64(uint64_t v) {
    for (int i = 0; i < 8; ++i) out_.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  void bytes(const uint8_t* p, size_t n) { out_.insert(out_.end(), p, p + n); }
  void str(const std::string& s) {
    if (s.size() > std::numeric_limits<uint32_t>::max()) {
      throw_user_error("program serialisation: a string of {} bytes is too long", s.size());
    }
    u32(static_cast<uint32_t>(s.size()));
    bytes(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  }
  std::vector<uint8_t> take() { return std::move(out_); }

 private:
  std::vector<uint8_t> out_;
};

class Reader {
 public:
  explicit Reader(const std::vector<uint8_t>& b) : b_(b) {}
  void need(uint64_t n, const char* what) const {
    if (n > b_.size() - pos_) {
      throw_user_error("malformed program: truncated at byte {} reading {} ({} bytes needed, {} left)",
                       pos_, what, n, b_.size() - pos_);
    }
  }
  uint8_t u8(const char* what) {
    need(1, what);
    return b_[pos_++];
  }
  uint32_t u32(const char* what) {
    need(4, what);
    uint32_t v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t{b_[pos_++]} << (8 * i);
    return v;
  }
  uint64_t u64(const char* what) {
    need(8, what);
    uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v |= uint64_t{b_[pos_++]} << (8 * i);
    return v;
  }
  const uint8_t* bytes(uint64_t n, const char* what) {
    need(n, what);
    const uint8_t* p = b_.data() + pos_;
    pos_ += n;
    return p;
  }
  std::string str(const char* what) {
    const uint32_t n = u32(what);
    const uint8_t* p = bytes(n, what);
    return std::string(reinterpret_cast<const char*>(p), n);
  }
  // Reads an element count and checks that `elem_bytes` per element are still available.
  uint64_t count(uint64_t n, uint64_t elem_bytes, const char* what) const {
    if (elem_bytes != 0 && n > (b_.size() - pos_) / elem_bytes) {
      throw_user_error("malformed program: {} count {} needs {} bytes but only {} remain", what, n,
                       n * elem_bytes, b_.size() - pos_);
    }
    return n;
  }
  size_t pos() const { return pos_; }
  bool at_end() const { return pos_ == b_.size(); }

 private:
  const std::vector<uint8_t>& b_;
  size_t pos_ = 0;
};

// Segments: aligned, sorted, non-overlapping, inside the image, unique names.
void check_segments(const Program& p, const char* context) {
  for (size_t i = 0; i < p.segments.size(); ++i) {
    const Segment& s = p.segments[i];
    if (s.offset_bytes % kImageAlign != 0) {
      throw_user_error("{}: segment {} offset {} is not a multiple of {}", context, support::quote(s.name),
                       s.offset_bytes, kImageAlign);
    }
    if (static_cast<uint8_t>(s.kind) > static_cast<uint8_t>(SegmentKind::kScratch)) {
      throw_user_error("{}: segment {} has unknown kind {}", context, support::quote(s.name),
                       static_cast<int>(s.kind));
    }
    if (s.size_bytes > p.image.size() || s.offset_bytes > p.image.size() - s.size_bytes) {
      throw_user_error("{}: segment {} bytes {}..+{} exceed the {}-byte image", context, support::quote(s.name),
                       s.offset_bytes, s.size_bytes, p.image.size());
    }
    if (i > 0) {
      const Segment& prev = p.segments[i - 1];
      if (s.offset_bytes < prev.offset_bytes + prev.size_bytes) {
        throw_user_error("{}: segment {} at byte {} overlaps or precedes segment {} ({}..+{})",
                         context, support::quote(s.name), s.offset_bytes, support::quote(prev.name), prev.offset_bytes,
                         prev.size_bytes);
      }
    }
    for (size_t j = 0; j < i; ++j) {
      if (p.segments[j].name == s.name) {
        throw_user_error("{}: segment name {} appears twice", context, support::quote(s.name));
      }
    }
  }
}

// The decoded micro-op table and the image must tell one story: the simulators read micro-ops
// from the image (LOAD UOP), the tools show the table. When the Program has a segment named
// "uop", the table is its content: 4 bytes per micro-op, little-endian, from the segment's start,
// and every byte after the table is zero (the alignment padding assemble() writes), so that no
// micro-op a stream can load is missing from the table; a non-empty table needs that segment.
void check_uop_table(const Program& p, const IsaSpec& spec, const char* context) {
  const Segment* seg = nullptr;
  for (const Segment& s : p.segments) {
    if (s.name == "uop") seg = &s;
  }
  if (seg == nullptr) {
    if (!p.uops.empty()) {
      throw_user_error("{}: the micro-op table holds {} micro-ops but there is no segment 'uop' in the image for the "
                       "simulators to load them from",
                       context, p.uops.size());
    }
    return;
  }
  if (p.uops.size() > seg->size_bytes / 4) {
    throw_user_error("{}: the micro-op table holds {} micro-ops ({} bytes) but segment 'uop' has {} bytes", context,
                     p.uops.size(), p.uops.size() * 4, seg->size_bytes);
  }
  const uint8_t* base = p.image.data() + seg->offset_bytes;
  for (size_t i = 0; i < p.uops.size(); ++i) {
    uint32_t table = 0;
    try {
      table = spec.encode_uop(p.uops[i]);
    } catch (const UserError& err) {
      throw_user_error("{}: uop {}: {}", context, i, err.what());
    }
    const uint32_t image = static_cast<uint32_t>(base[4 * i]) | static_cast<uint32_t>(base[4 * i + 1]) << 8 |
                           static_cast<uint32_t>(base[4 * i + 2]) << 16 | static_cast<uint32_t>(base[4 * i + 3]) << 24;
    if (table != image) {
      throw_user_error("{}: micro-op {} of the table (0x{:08x}) differs from word {} of segment 'uop' in the image "
                       "(0x{:08x}), which the simulators would run",
                       context, i, table, i, image);
    }
  }
  for (uint64_t b = p.uops.size() * 4; b < seg->size_bytes; ++b) {
    if (base[b] != 0) {
      throw_user_error("{}: segment 'uop' holds a non-zero byte at offset {}, after the {} micro-ops of the table: "
                       "a LOAD UOP could run micro-ops the table does not show",
                       context, b, p.uops.size());
    }
  }
}

}  // namespace

std::string_view to_string(SegmentKind k) {
  switch (k) {
    case SegmentKind::kConst: return "const";
    case SegmentKind::kInput: return "input";
    case SegmentKind::kOutput: return "output";
    case SegmentKind::kScratch: return "scratch";
  }
  return "invalid";
}

const Segment& Program::segment(const std::string& seg_name) const {
  for (const auto& s : segments) {
    if (s.name == seg_name) return s;
  }
  std::string have;
  for (const auto& s : segments) have += (have.empty() ? "" : ", ") + s.name;
  throw_user_error("program {} has no segment {} (segments: {})", support::quote(name), support::quote(seg_name),
                   have.empty() ? "none" : have);
}

size_t Program::add_segment(const std::string& seg_name, SegmentKind kind, uint64_t size_bytes) {
  for (const auto& s : segments) {
    if (s.name == seg_name) throw_user_error("program {} already has a segment {}", support::quote(name), support::quote(seg_name));
  }
  if (size_bytes > (uint64_t{1} << 40)) {
    throw_user_error("segment {}: {} bytes is larger than the 1 TiB limit", support::quote(seg_name), size_bytes);
  }
  Segment s;
  s.name = seg_name;
  s.kind = kind;
  s.offset_bytes = round_up(image.size(), kImageAlign);
  s.size_bytes = round_up(size_bytes, kImageAlign);
  image.resize(s.offset_bytes + s.size_bytes, 0);
  segments.push_back(std::move(s));
  return segments.size() - 1;
}

std::vector<uint8_t> Program::serialize() const {
  const IsaSpec spec(config);
  check_segments(*this, "program serialisation");
  check_uop_table(*this, spec, "program serialisation");
  Writer w;
  w.bytes(reinterpret_cast<const uint8_t*>(kMagic), sizeof kMagic);
  w.str(config.to_json());
  w.str(name);
  w.u32(static_cast<uint32_t>(insns.size()));
  for (size_t i = 0; i < insns.size(); ++i) {
    EncodedInsn e;
    try {
      e = spec.encode(insns[i]);
    } catch (const UserError& err) {
      throw_user_error("program {} insn {}: {}", support::quote(name), i, err.what());
    }
    uint8_t b[16];
    IsaSpec::to_bytes(e, b);
    w.bytes(b, 16);
  }
  w.u32(static_cast<uint32_t>(uops.size()));
  for (size_t i = 0; i < uops.size(); ++i) {
    uint32_t u;
    try {
      u = spec.encode_uop(uops[i]);
    } catch (const UserError& err) {
      throw_user_error("program {} uop {}: {}", support::quote(name), i, err.what());
    }
    w.u32(u);
  }
  w.u32(static_cast<uint32_t>(segments.size()));
  for (const auto& s : segments) {
    w.str(s.name);
    w.u8(static_cast<uint8_t>(s.kind));
    w.u64(s.offset_bytes);
    w.u64(s.size_bytes);
  }
  w.u64(image.size());
  w.bytes(image.data(), image.size());
  return w.take();
}

Program Program::deserialize(const std::vector<uint8_t>& bytes) {
  Reader r(bytes);
  const uint8_t* magic = r.bytes(sizeof kMagic, "the magic");
  if (std::memcmp(magic, kMagic, 7) != 0) {
    throw_user_error("malformed program: the buffer does not start with 'TSLPROG'");
  }
  if (magic[7] != kMagic[7]) {
    throw_user_error("program format version {} is not supported (expected {})",
                     support::quote(std::string(1, static_cast<char>(magic[7]))),
                     support::quote(std::string(1, kMagic[7])));
  }
  Program p;
  const std::string config_json = r.str("the config");  // a truncation error names itself
  try {
    p.config = HwConfig::from_json(config_json);
  } catch (const UserError& e) {
    throw_user_error("malformed program: bad config: {}", e.what());
  }
  const IsaSpec spec(p.config);
  p.name = r.str("the name");
  const uint64_t n_insns = r.count(r.u32("the instruction count"), 16, "instruction");
  p.insns.reserve(n_insns);
  for (uint64_t i = 0; i < n_insns; ++i) {
    const EncodedInsn e = IsaSpec::from_bytes(r.bytes(16, "an instruction"));
    try {
      p.insns.push_back(spec.decode(e));
    } catch (const UserError& err) {
      throw_user_error("malformed program: insn {}: {}", i, err.what());
    }
  }
  const uint64_t n_uops = r.count(r.u32("the uop count"), 4, "uop");
  p.uops.reserve(n_uops);
  for (uint64_t i = 0; i < n_uops; ++i) p.uops.push_back(spec.decode_uop(r.u32("a uop")));
  const uint64_t n_segs = r.count(r.u32("the segment count"), 4 + 1 + 8 + 8, "segment");
  for (uint64_t i = 0; i < n_segs; ++i) {
    Segment s;
    s.name = r.str("a segment name");
    const uint8_t kind = r.u8("a segment kind");
    if (kind > static_cast<uint8_t>(SegmentKind::kScratch)) {
      throw_user_error("malformed program: segment {} has unknown kind {}", support::quote(s.name), kind);
    }
    s.kind = static_cast<SegmentKind>(kind);
    s.offset_bytes = r.u64("a segment offset");
    s.size_bytes = r.u64("a segment size");
    p.segments.push_back(std::move(s));
  }
  const uint64_t n_image = r.count(r.u64("the image size"), 1, "image byte");
  const uint8_t* img = r.bytes(n_image, "the image");
  p.image.assign(img, img + n_image);
  if (!r.at_end()) {
    throw_user_error("malformed program: {} unexpected bytes after the image", bytes.size() - r.pos());
  }
  check_segments(p, "malformed program");
  check_uop_table(p, spec, "malformed program");
  return p;
}

uint32_t dram_elem_bytes(const HwConfig& cfg, MemType type) {
  switch (type) {
    case MemType::kUop: return static_cast<uint32_t>(cfg.uop_elem_bytes());
    case MemType::kWgt: return static_cast<uint32_t>(cfg.wgt_elem_bytes());
    case MemType::kInp: return static_cast<uint32_t>(cfg.inp_elem_bytes());
    case MemType::kAcc: return static_cast<uint32_t>(cfg.acc_elem_bytes());
    case MemType::kOut: return static_cast<uint32_t>(cfg.out_elem_bytes());
    case MemType::kAcc8: return static_cast<uint32_t>(cfg.batch() * cfg.block_out());
  }
  throw_user_error("unknown memory type {}", static_cast<int>(type));
}

DramRow dram_row(const HwConfig& cfg, const Instruction& insn, uint32_t r) {
  const uint64_t e = dram_elem_bytes(cfg, insn.mem_type);
  const uint64_t first = (uint64_t{insn.dram_base} + uint64_t{r} * insn.x_stride) * e;
  return {first, first + uint64_t{insn.x_size} * e};
}

std::vector<Instruction> relocate(const HwConfig& cfg, const std::vector<Instruction>& insns,
                                  uint64_t base_bytes) {
  if (base_bytes % kImageAlign != 0) {
    throw_user_error("relocation base {} is not a multiple of the {}-byte image alignment",
                     base_bytes, kImageAlign);
  }
  std::vector<Instruction> out = insns;
  for (size_t i = 0; i < out.size(); ++i) {
    Instruction& in = out[i];
    if (in.opcode != Opcode::kLoad && in.opcode != Opcode::kStore) continue;
    const uint64_t elem = dram_elem_bytes(cfg, in.mem_type);
    const uint64_t moved = in.dram_base + base_bytes / elem;
    if (moved > std::numeric_limits<uint32_t>::max()) {
      throw_user_error(
          "insn {} ({} {}): relocated dram_base {} (base {} bytes / {}-byte elements) does not "
          "fit 32 bits",
          i, to_string(in.opcode), to_string(in.mem_type), moved, base_bytes, elem);
    }
    in.dram_base = static_cast<uint32_t>(moved);
  }
  return out;
}

}  // namespace tessel::isa
