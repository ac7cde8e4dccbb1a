// tessel_compute_alu: the vector ALU of the compute module (docs/microarchitecture.md section 5.3,
// stage 3 "ALU op"; semantics docs/isa.md / sim/common/datapath.cc Datapath::alu).
//
// BATCH x BLOCK_OUT lanes of ACC_WIDTH-bit signed integers, one uop per cycle:
//
//   res[l] = op(x[l], y[l]),  x = ACC dst row, y = use_imm ? sign_extend(imm) : ACC src row
//
//   MIN / MAX  signed minimum / maximum
//   ADD        x + y, wrapping at ACC_WIDTH bits
//   SHR        y >= 0: x >>> min(y, ACC_WIDTH-1) (arithmetic);
//              y <  0: x << min(-y, ACC_WIDTH-1) (logical, wrapping)
//   MUL        low ACC_WIDTH bits of x * y
//   any other alu_opcode (rejected by the static checks before a run): res = x
//
//   cycle I+3 (stage 3)                      | I+4 (stage 4)
//   en, x, y (forwarded ACC rows), op, imm    -> res (registered)
//
// `res` holds its value while `en` is low.
module tessel_compute_alu
  import tessel_isa_pkg::*;
(
  input  logic                     clk,
  input  logic                     en,       // an ALU uop is in stage 3 this cycle
  input  logic [ALU_ALU_OPCODE_WIDTH-1:0] op,  // ALU_OPCODE_*
  input  logic                     use_imm,
  input  logic [ALU_IMM_WIDTH-1:0] imm,      // signed immediate of the instruction
  input  logic [ACC_ELEM_BITS-1:0] x,        // ACC dst row, newest value
  input  logic [ACC_ELEM_BITS-1:0] y,        // ACC src row, newest value (unused with use_imm)
  output logic [ACC_ELEM_BITS-1:0] res
);
  localparam int LANES = BATCH * BLOCK_OUT;
  // Shift amounts are clamped to this (31 for 32-bit lanes).
  localparam logic [ACC_WIDTH-1:0] MAX_SHIFT = ACC_WIDTH'(ACC_WIDTH - 1);
  localparam int SHW = $clog2(ACC_WIDTH);

  wire logic signed [ACC_WIDTH-1:0] imm_ext = ACC_WIDTH'($signed(imm));

  for (genvar l = 0; l < LANES; l++) begin : g_lane
    always_ff @(posedge clk) begin : lane_op
      logic signed [ACC_WIDTH-1:0] a, s, r;
      logic        [ACC_WIDTH-1:0] neg;
      if (en) begin
        a = $signed(x[l * ACC_WIDTH +: ACC_WIDTH]);
        s = use_imm ? imm_ext : $signed(y[l * ACC_WIDTH +: ACC_WIDTH]);
        unique case (op)
          ALU_OPCODE_MIN: r = a < s ? a : s;
          ALU_OPCODE_MAX: r = a > s ? a : s;
          ALU_OPCODE_ADD: r = a + s;
          ALU_OPCODE_SHR: begin
            if (!s[ACC_WIDTH-1]) begin
              r = a >>> (unsigned'(s) > MAX_SHIFT ? SHW'(MAX_SHIFT) : SHW'(s));
            end else begin
              neg = -unsigned'(s);  // 1 .. 2^(ACC_WIDTH-1)
              r = a << (neg > MAX_SHIFT ? SHW'(MAX_SHIFT) : SHW'(neg));
            end
          end
          ALU_OPCODE_MUL: r = a * s;
          default: r = a;
        endcase
        res[l * ACC_WIDTH +: ACC_WIDTH] <= r;
      end
    end
  end
endmodule
