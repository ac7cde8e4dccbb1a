// tessel_row_bursts: the bursts of a LOAD or STORE, one after another (docs/microarchitecture.md
// section 2.1). Shared by the request side of tessel_dma_read and by both the AW side and the W
// side of tessel_store, so the burst rule is stated once.
//
// The instruction moves y_size rows; row r covers DRAM bytes [A_r, A_r + x_size*E) with
// A_r = (dram_base + r*x_stride) * E and E = ELEM_BITS/8. Every row is its own bursts: its beats
// are the aligned bus words it touches, b_r = ceil((A_r + x_size*E)/W) - floor(A_r/W), split into
// bursts of at most 256 beats; a burst's address is its first word's byte address.
//
// Protocol: `start` (cycle S, operands valid then) loads the instruction; from S+1 `valid` is high
// while bursts remain and addr / len / last describe the current one; `next` (only while valid)
// moves to the following burst from the next cycle. x_size or y_size 0: no bursts.
//
// Units: dram_base and x_stride in elements, x_size in elements, y_size in rows; addr in bytes
// (bus aligned), len in beats - 1.
module tessel_row_bursts
  import tessel_isa_pkg::*;
#(
    parameter int ELEM_BITS = INP_ELEM_BITS  // DRAM bits of one element (a power of two bytes)
) (
    input  logic                           clk,
    input  logic                           rst_n,
    input  logic                           start,
    input  logic [MEM_DRAM_BASE_WIDTH-1:0] dram_base,
    input  logic [MEM_Y_SIZE_WIDTH-1:0]    y_size,
    input  logic [MEM_X_SIZE_WIDTH-1:0]    x_size,
    input  logic [MEM_X_STRIDE_WIDTH-1:0]  x_stride,
    output logic                           valid,  // a burst remains
    output logic                           last,   // the current burst is the instruction's last
    output logic [63:0]                    addr,   // its byte address
    output logic [7:0]                     len,    // its beats - 1
    input  logic                           next    // the current burst is done with
);
  localparam int LOG_W = $clog2(BUS_WIDTH / 8);
  localparam int LOG_E = $clog2(ELEM_BITS / 8);
  localparam bit NARROW = ELEM_BITS < BUS_WIDTH;
  localparam int LOG_LANES = NARROW ? LOG_W - LOG_E : 0;  // log2 elements per bus word
  localparam int LOG_BPE = NARROW ? 0 : LOG_E - LOG_W;    // log2 words per element
  localparam int LW = LOG_LANES > 0 ? LOG_LANES : 1;
  localparam int YW = MEM_Y_SIZE_WIDTH;
  localparam int XW = MEM_X_SIZE_WIDTH;
  localparam int MAX_BURST = 256;  // AXI4 INCR beats per burst

  // First bus word and beats of a row whose first element is at element address `elem`.
  function automatic logic [63:0] first_word(logic [63:0] elem);
    if (NARROW) return elem >> LOG_LANES;
    else return elem << LOG_BPE;
  endfunction
  function automatic logic [31:0] row_beats(logic [LW-1:0] elem_low, logic [XW-1:0] xs);
    // elem_low: the low bits of the element address, i.e. the row's lane in its first word
    if (NARROW) return (32'(elem_low) + 32'(xs) + 32'((1 << LOG_LANES) - 1)) >> LOG_LANES;
    else return 32'(xs) << LOG_BPE;
  endfunction

  logic [XW-1:0] x_size_q;
  logic [63:0]   x_stride_q;
  logic [YW-1:0] rows_left;  // rows with bursts left (the current one included)
  logic [63:0]   elem;       // element address of the current row
  logic [63:0]   word;       // bus word of the current burst
  logic [31:0]   left;       // beats of the current row from the current burst on
  logic [63:0]   next_elem;

  assign next_elem = elem + x_stride_q;
  assign valid = rows_left != '0;
  assign last = rows_left == YW'(1) && left <= 32'(MAX_BURST);
  assign addr = word << LOG_W;
  assign len = 8'((left > 32'(MAX_BURST) ? 32'(MAX_BURST) : left) - 32'd1);

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      rows_left <= '0;
    end else if (start) begin
      x_size_q <= x_size;
      x_stride_q <= 64'(x_stride);
      rows_left <= x_size != '0 ? y_size : '0;
      elem <= 64'(dram_base);
      word <= first_word(64'(dram_base));
      left <= row_beats(LW'(dram_base), x_size);
    end else if (valid && next) begin
      if (left > 32'(MAX_BURST)) begin
        left <= left - 32'(MAX_BURST);
        word <= word + 64'(MAX_BURST);
      end else begin
        rows_left <= rows_left - YW'(1);
        elem <= next_elem;
        word <= first_word(next_elem);
        left <= row_beats(LW'(next_elem), x_size_q);
      end
    end
  end
endmodule
