// tessel_fetch: reads the instruction stream and dispatches it into the three command queues
// (docs/microarchitecture.md section 3; dispatch rule of docs/isa.md section 5).
//
//  * `launch` (cycle -1) latches insn_base (16-byte aligned byte address) and insn_count; the
//    first burst is requested from cycle 0.
//  * Burst k holds instructions [8k, min(8k+8, insn_count)): one burst (a one-burst sequence on
//    the master port, section 2.1 rule applied to their bytes). Its beats are written into the
//    instruction buffer as they arrive.
//  * From the cycle after the last beat, one instruction per cycle is pushed into its command
//    queue in the first cycle in which that queue has room (`room`, visible state); `dispatch`
//    pulses in every such cycle.
//  * Burst k+1 is requested from the cycle after the last dispatch of burst k. After FINISH (or
//    the last of insn_count instructions) fetch stops until the next launch; insn_count 0 fetches
//    nothing (the static checks reject a stream without FINISH, so the run would never end).
// Dispatch targets: STORE -> store; LOAD of INP or WGT -> load; everything else -> compute.
//
// Units: insn_base and req_addr in bytes, insn_count in instructions, req_len in beats - 1.
module tessel_fetch
  import tessel_isa_pkg::*;
#(
    localparam int Q_LOAD = 0,     // index of the load queue in push / room
    localparam int Q_COMPUTE = 1,  // ... compute
    localparam int Q_STORE = 2     // ... store
) (
    input  logic                 clk,
    input  logic                 rst_n,
    input  logic                 launch,
    input  logic [63:0]          insn_base,
    input  logic [31:0]          insn_count,
    // master port (section 8.1), read side
    output logic                 req_valid,
    output logic                 req_last,
    output logic                 req_write,
    output logic [63:0]          req_addr,
    output logic [7:0]           req_len,
    input  logic                 req_grant,
    input  logic                 rd_valid,
    input  logic [BUS_WIDTH-1:0] rd_data,
    // command queues
    input  logic [2:0]           room,       // visible room of the load / compute / store queue
    output logic [2:0]           push,
    output logic [INS_WIDTH-1:0] push_insn,
    output logic                 dispatch    // an instruction is pushed in this cycle
);
  localparam int BURST_INSNS = 8;
  localparam int IB = INS_WIDTH / 8;            // instruction bytes
  localparam int WB = BUS_WIDTH / 8;            // bus bytes
  localparam int LOG_IB = $clog2(IB);
  localparam int LOG_WB = $clog2(WB);
  localparam int SLOTS = WB > IB ? WB / IB : 1; // instructions per beat (bus wider than one)
  localparam int PARTS = WB < IB ? IB / WB : 1; // beats per instruction (bus narrower)
  localparam int LOG_PARTS = $clog2(PARTS);
  localparam int LOG_SLOTS = $clog2(SLOTS);
  localparam int JW = $clog2(BURST_INSNS);      // instruction index in a burst
  localparam int NW = $clog2(BURST_INSNS + 1);  // instruction count of a burst
  // Beats of a burst: its bytes plus at most one partial word at the start (bus wider than 16).
  localparam int MAX_BEATS = (BURST_INSNS * IB + WB - 1) / WB + 1;
  localparam int BW = $clog2(MAX_BEATS + 1);

  typedef enum logic [1:0] {
    IDLE,      // stopped (before launch, after FINISH)
    REQUEST,   // presenting the burst
    RECEIVE,   // waiting for its beats
    DISPATCH   // pushing its instructions
  } state_t;

  state_t state;
  logic [63:0] base_q;
  logic [31:0] count_q;
  logic [31:0] next_q;      // index of the burst's first instruction
  logic [NW-1:0] n_q;       // instructions in the burst (1 .. BURST_INSNS)
  logic [JW-1:0] j_q;       // next instruction of the burst to dispatch
  logic [BW-1:0] beats_left; // beats of the burst not yet received
  logic [BW-1:0] beat_q;     // beats received
  logic [BURST_INSNS-1:0][INS_WIDTH-1:0] buffer;

  // ---- the burst ----
  logic [63:0] b_addr;      // byte address of the burst's first instruction
  logic [NW-1:0] b_n;       // instructions
  logic [63:0] b_first_word, b_end_word;
  always_comb begin
    logic [31:0] rest;
    rest = count_q - next_q;
    b_n = rest > 32'(BURST_INSNS) ? NW'(BURST_INSNS) : NW'(rest);
    b_addr = base_q + (64'(next_q) << LOG_IB);
    b_first_word = b_addr >> LOG_WB;
    b_end_word = (b_addr + (64'(b_n) << LOG_IB) + 64'(WB) - 64'd1) >> LOG_WB;
  end
  assign req_valid = state == REQUEST;
  assign req_last = 1'b1;
  assign req_write = 1'b0;
  assign req_addr = b_first_word << LOG_WB;
  assign req_len = 8'(b_end_word - b_first_word - 64'd1);

  // ---- dispatch ----
  mem_insn_t head;
  logic [1:0] target;
  // Only the opcode and the memory type decide the queue.
  logic unused_head;
  assign unused_head = ^{head.x_pad_1, head.x_pad_0, head.y_pad_1, head.y_pad_0, head.x_stride,
                         head.x_size, head.y_size, head.pad_58, head.dram_base, head.sram_base,
                         head.push_next_dep, head.push_prev_dep, head.pop_next_dep,
                         head.pop_prev_dep};
  logic go;
  always_comb begin
    head = mem_insn_t'(buffer[j_q]);
    if (head.opcode == OPCODE_STORE) target = 2'(Q_STORE);
    else if (head.opcode == OPCODE_LOAD &&
             (head.memory_type == MEM_ID_INP || head.memory_type == MEM_ID_WGT)) target = 2'(Q_LOAD);
    else target = 2'(Q_COMPUTE);
    go = state == DISPATCH && room[target];
    push = '0;
    push[target] = go;
  end
  assign push_insn = buffer[j_q];
  assign dispatch = go;

  // ---- beats into the buffer ----
  localparam int OFFW = LOG_SLOTS > 0 ? LOG_SLOTS : 1;
  // Slot of the burst's first instruction in its first beat (bus wider than an instruction; the
  // base is only 16-byte aligned).
  logic [OFFW-1:0] off_q;
  logic beat;
  assign beat = state == RECEIVE && rd_valid;
  if (PARTS > 1) begin : g_parts
    // An instruction spans PARTS beats, the first one least significant.
    always_ff @(posedge clk) begin
      if (beat) buffer[JW'(beat_q >> LOG_PARTS)][32'(beat_q) % PARTS * BUS_WIDTH +: BUS_WIDTH] <= rd_data;
    end
    logic unused_off;
    assign unused_off = ^off_q;
  end else begin : g_slots
    // A beat holds SLOTS instructions; slot s of beat b is instruction b * SLOTS + s - off_q.
    always_ff @(posedge clk) begin
      if (beat) begin
        for (int s = 0; s < SLOTS; s++) begin
          logic [31:0] idx;
          idx = 32'(beat_q) * SLOTS + 32'(s) - 32'(off_q);
          if (32'(beat_q) * SLOTS + 32'(s) >= 32'(off_q) && idx < 32'(n_q))
            buffer[JW'(idx)] <= rd_data[s*INS_WIDTH+:INS_WIDTH];
        end
      end
    end
  end

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      state <= IDLE;
    end else if (launch) begin
      state <= insn_count != '0 ? REQUEST : IDLE;
      base_q <= insn_base;
      count_q <= insn_count;
      next_q <= '0;
    end else begin
      case (state)
        REQUEST: if (req_grant) begin
          state <= RECEIVE;
          n_q <= b_n;
          beats_left <= BW'(b_end_word - b_first_word);
          beat_q <= '0;
          off_q <= OFFW'(b_addr >> LOG_IB) & OFFW'(SLOTS - 1);
        end
        RECEIVE: if (rd_valid) begin
          beat_q <= beat_q + BW'(1);
          beats_left <= beats_left - BW'(1);
          if (beats_left == BW'(1)) begin
            state <= DISPATCH;
            j_q <= '0;
          end
        end
        DISPATCH: if (go) begin
          j_q <= j_q + JW'(1);
          if (head.opcode == OPCODE_FINISH) begin
            state <= IDLE;
          end else if (32'(j_q) + 1 == 32'(n_q)) begin
            next_q <= next_q + 32'(n_q);
            state <= next_q + 32'(n_q) == count_q ? IDLE : REQUEST;
          end
        end
        default: ;
      endcase
    end
  end
endmodule
