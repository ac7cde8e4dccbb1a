// tessel_compute_gemm: the GEMM core of the compute module (docs/microarchitecture.md section 5.3,
// stage 3 "multiply + adder tree"; semantics docs/isa.md / sim/common/datapath.cc Datapath::gemm).
//
// One uop per cycle: BATCH x BLOCK_OUT dot products of BLOCK_IN int8 x int8 products each
// (MACS_PER_UOP multipliers), every dot product summed by a balanced adder tree and added to the
// (forwarded) ACC lane with ACC_WIDTH-bit wrap-around:
//
//   res[b][o] = acc[b][o] + sum_c inp[b][c] * wgt[o][c]
//
// Lane layouts (the DRAM element layouts of isa.md section 1): INP row lane b*BLOCK_IN + c, WGT row
// lane o*BLOCK_IN + c, ACC row lane b*BLOCK_OUT + o; lane k of a row occupies bits
// [k*LANE_WIDTH +: LANE_WIDTH].
//
//   cycle I+3 (stage 3)          | I+4 (stage 4)
//   en, inp, wgt, acc (forwarded) -> res (registered, written back to ACC/OUT by the caller)
//
// `res` holds its value while `en` is low, so an idle core costs nothing per cycle in simulation.
module tessel_compute_gemm
  import tessel_isa_pkg::*;
(
  input  logic                     clk,
  input  logic                     en,   // a non-reset GEMM uop is in stage 3 this cycle
  input  logic [INP_ELEM_BITS-1:0] inp,  // INP row of the uop (src)
  input  logic [WGT_ELEM_BITS-1:0] wgt,  // WGT row of the uop
  input  logic [ACC_ELEM_BITS-1:0] acc,  // ACC row of the uop (dst), newest value
  output logic [ACC_ELEM_BITS-1:0] res   // acc + inp x wgt^T, from the cycle after `en`
);
  // Nodes of one lane's adder tree: leaves 0 .. BLOCK_IN-1 are the products, internal node
  // BLOCK_IN + k is the sum of nodes 2k and 2k+1, the root is node 2*BLOCK_IN - 2.
  localparam int NODES = 2 * BLOCK_IN - 1;

  for (genvar b = 0; b < BATCH; b++) begin : g_batch
    for (genvar o = 0; o < BLOCK_OUT; o++) begin : g_out
      localparam int LANE = b * BLOCK_OUT + o;
      always_ff @(posedge clk) begin : mac
        logic signed [ACC_WIDTH-1:0] node [NODES];
        if (en) begin
          for (int c = 0; c < BLOCK_IN; c++) begin
            node[c] = $signed(inp[(b * BLOCK_IN + c) * INP_WIDTH +: INP_WIDTH]) *
                      $signed(wgt[(o * BLOCK_IN + c) * WGT_WIDTH +: WGT_WIDTH]);
          end
          for (int k = 0; k < BLOCK_IN - 1; k++) begin
            node[BLOCK_IN + k] = node[2 * k] + node[2 * k + 1];
          end
          res[LANE * ACC_WIDTH +: ACC_WIDTH] <=
              acc[LANE * ACC_WIDTH +: ACC_WIDTH] + node[NODES - 1];
        end
      end
    end
  end
endmodule
