# program 'FULLY_CONNECTED__215', config 1x16_i8w8a32_15_15_18_17, 21 instructions, 9 uops
.name FULLY_CONNECTED__215
.config {"LOG_INP_WIDTH":3,"LOG_WGT_WIDTH":3,"LOG_ACC_WIDTH":5,"LOG_BATCH":0,"LOG_BLOCK_IN":4,"LOG_BLOCK_OUT":4,"LOG_UOP_BUFF_SIZE":15,"LOG_INP_BUFF_SIZE":15,"LOG_WGT_BUFF_SIZE":18,"LOG_ACC_BUFF_SIZE":17,"LOG_BUS_WIDTH":6,"CLOCK_MHZ":100.0,"DRAM_LATENCY":32,"CMD_QUEUE_DEPTH":512,"TOKEN_QUEUE_DEPTH":1024}
.uop 0 0 0
.uop 0 0 0
.uop 0 1 1
.uop 0 2 2
.uop 0 3 3
.uop 0 4 0
.uop 0 1 0
.uop 0 2 0
.uop 0 3 0
LOAD UOP sram=0 dram=4096 y=1 x=9 stride=9
LOAD INP sram=0 dram=0 y=1 x=1 stride=1
LOAD INP sram=1 dram=1 y=1 x=1 stride=1
LOAD INP sram=2 dram=2 y=1 x=1 stride=1
LOAD INP sram=3 dram=3 y=1 x=1 stride=1
LOAD WGT sram=0 dram=32 y=1 x=4 stride=4 deps=push_next
LOAD ACC sram=1 dram=192 y=1 x=4 stride=4
GEMM uop=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0 reset
GEMM uop=1:5 iter=1,1 dst=0,0 src=0,0 wgt=0,0 deps=pop_prev
ALU ADD uop=5:6 iter=1,1 dst=0,0 src=0,0
ALU MUL uop=6:7 iter=1,1 dst=0,0 src=0,0
ALU ADD uop=7:8 iter=1,1 dst=0,0 src=0,0
ALU SHR uop=8:9 iter=1,1 dst=0,0 src=0,0
ALU ADD uop=0:1 iter=1,1 dst=0,0 src=0,0 imm=14
ALU MAX uop=0:1 iter=1,1 dst=0,0 src=0,0 imm=-128
ALU MIN uop=0:1 iter=1,1 dst=0,0 src=0,0 imm=127 deps=push_next
STORE OUT sram=0 dram=256 y=1 x=1 stride=1 deps=pop_prev
LOAD INP sram=0 dram=0 y=0 x=0 stride=0 deps=push_next
STORE OUT sram=0 dram=0 y=0 x=0 stride=0 deps=push_prev
LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_prev|pop_next
FINISH
