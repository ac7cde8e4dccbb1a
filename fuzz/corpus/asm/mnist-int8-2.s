# program 'gemm_MatMul_quant', config 1x16_i8w8a32_15_15_18_17, 32 instructions, 22 uops
.name gemm_MatMul_quant
.config {"LOG_INP_WIDTH":3,"LOG_WGT_WIDTH":3,"LOG_ACC_WIDTH":5,"LOG_BATCH":0,"LOG_BLOCK_IN":4,"LOG_BLOCK_OUT":4,"LOG_UOP_BUFF_SIZE":15,"LOG_INP_BUFF_SIZE":15,"LOG_WGT_BUFF_SIZE":18,"LOG_ACC_BUFF_SIZE":17,"LOG_BUS_WIDTH":6,"CLOCK_MHZ":100.0,"DRAM_LATENCY":32,"CMD_QUEUE_DEPTH":512,"TOKEN_QUEUE_DEPTH":1024}
.uop 0 0 0
.uop 0 0 0
.uop 0 1 1
.uop 0 2 2
.uop 0 3 3
.uop 0 4 4
.uop 0 5 5
.uop 0 6 6
.uop 0 7 7
.uop 0 8 8
.uop 0 9 9
.uop 0 10 10
.uop 0 11 11
.uop 0 12 12
.uop 0 13 13
.uop 0 14 14
.uop 0 15 15
.uop 0 5 0
.uop 0 1 0
.uop 0 2 0
.uop 0 3 0
.uop 0 4 0
LOAD UOP sram=0 dram=4096 y=1 x=22 stride=22
LOAD INP sram=0 dram=0 y=1 x=1 stride=1
LOAD INP sram=1 dram=1 y=1 x=1 stride=1
LOAD INP sram=2 dram=2 y=1 x=1 stride=1
LOAD INP sram=3 dram=3 y=1 x=1 stride=1
LOAD INP sram=4 dram=4 y=1 x=1 stride=1
LOAD INP sram=5 dram=5 y=1 x=1 stride=1
LOAD INP sram=6 dram=6 y=1 x=1 stride=1
LOAD INP sram=7 dram=7 y=1 x=1 stride=1
LOAD INP sram=8 dram=8 y=1 x=1 stride=1
LOAD INP sram=9 dram=9 y=1 x=1 stride=1
LOAD INP sram=10 dram=10 y=1 x=1 stride=1
LOAD INP sram=11 dram=11 y=1 x=1 stride=1
LOAD INP sram=12 dram=12 y=1 x=1 stride=1
LOAD INP sram=13 dram=13 y=1 x=1 stride=1
LOAD INP sram=14 dram=14 y=1 x=1 stride=1
LOAD INP sram=15 dram=15 y=1 x=1 stride=1
LOAD WGT sram=0 dram=32 y=1 x=16 stride=16 deps=push_next
LOAD ACC sram=1 dram=192 y=1 x=5 stride=5
GEMM uop=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0 reset
GEMM uop=1:17 iter=1,1 dst=0,0 src=0,0 wgt=0,0 deps=pop_prev
ALU ADD uop=17:18 iter=1,1 dst=0,0 src=0,0
ALU MAX uop=18:19 iter=1,1 dst=0,0 src=0,0
ALU MIN uop=19:20 iter=1,1 dst=0,0 src=0,0
ALU MUL uop=20:21 iter=1,1 dst=0,0 src=0,0
ALU ADD uop=21:22 iter=1,1 dst=0,0 src=0,0
ALU SHR uop=0:1 iter=1,1 dst=0,0 src=0,0 imm=24 deps=push_next
STORE OUT sram=0 dram=256 y=1 x=1 stride=1 deps=pop_prev
LOAD INP sram=0 dram=0 y=0 x=0 stride=0 deps=push_next
STORE OUT sram=0 dram=0 y=0 x=0 stride=0 deps=push_prev
LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_prev|pop_next
FINISH
