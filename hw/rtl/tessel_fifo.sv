// tessel_fifo: a command or dependency-token queue (docs/microarchitecture.md sections 1 and 8).
//
// A FIFO of at most DEPTH entries of WIDTH bits whose occupancy `count` is a register:
//  * a push in cycle t is visible (count, nonempty, head) from t+1;
//  * a pop in cycle t frees room visible from t+1;
//  * push and pop in the same cycle are allowed (count unchanged).
// `room` = count < limit, with `limit` the run-time depth of the queue (1 .. DEPTH, the
// CMD_QUEUE_DEPTH / TOKEN_QUEUE_DEPTH of the run); `nonempty` = count != 0. `head` is the oldest
// entry (valid while nonempty). Pushing without room or popping an empty queue is the caller's
// error (the execution modules and fetch only act on room / nonempty).
// STORE_DATA = 0 builds a counter only (dependency tokens carry no data): push_data is ignored
// and head is 0.
//
// Units: limit and DEPTH in entries.
module tessel_fifo #(
    parameter  int WIDTH      = 1,    // bits per entry
    parameter  int DEPTH      = 2,    // built maximum entries
    parameter  bit STORE_DATA = 1'b1, // 0: a counter only
    localparam int CW         = $clog2(DEPTH + 1)
) (
    input  logic             clk,
    input  logic             rst_n,      // synchronous, active low: empties the queue
    input  logic [31:0]      limit,      // run-time depth, 1 .. DEPTH
    input  logic             push,
    input  logic [WIDTH-1:0] push_data,
    input  logic             pop,
    output logic [WIDTH-1:0] head,
    output logic             room,       // count < limit
    output logic             nonempty    // count != 0
);
  logic [CW-1:0] count;  // entries (the registered occupancy)
  always_ff @(posedge clk) begin
    if (!rst_n) count <= '0;
    else if (push && !pop) count <= count + CW'(1);
    else if (pop && !push) count <= count - CW'(1);
  end
  assign room = 32'(count) < limit;
  assign nonempty = count != '0;

  if (STORE_DATA) begin : g_data
    localparam int PW = DEPTH > 1 ? $clog2(DEPTH) : 1;
    logic [WIDTH-1:0] mem[DEPTH];
    logic [PW-1:0] rd_ptr, wr_ptr;
    function automatic logic [PW-1:0] next_ptr(logic [PW-1:0] p);
      return 32'(p) == DEPTH - 1 ? '0 : p + PW'(1);
    endfunction
    always_ff @(posedge clk) begin
      if (!rst_n) begin
        rd_ptr <= '0;
        wr_ptr <= '0;
      end else begin
        if (push) wr_ptr <= next_ptr(wr_ptr);
        if (pop) rd_ptr <= next_ptr(rd_ptr);
      end
    end
    always_ff @(posedge clk) begin
      if (push) mem[wr_ptr] <= push_data;
    end
    assign head = mem[rd_ptr];
  end else begin : g_count
    assign head = '0;
    logic unused_data;
    assign unused_data = ^push_data;
  end
endmodule
