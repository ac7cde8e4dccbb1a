# program 'Convolution110_quant', config 1x16_i8w8a32_15_15_18_17, 16 instructions, 30 uops
.name Convolution110_quant
.config {"LOG_INP_WIDTH":3,"LOG_WGT_WIDTH":3,"LOG_ACC_WIDTH":5,"LOG_BATCH":0,"LOG_BLOCK_IN":4,"LOG_BLOCK_OUT":4,"LOG_UOP_BUFF_SIZE":15,"LOG_INP_BUFF_SIZE":15,"LOG_WGT_BUFF_SIZE":18,"LOG_ACC_BUFF_SIZE":17,"LOG_BUS_WIDTH":6,"CLOCK_MHZ":100.0,"DRAM_LATENCY":32,"CMD_QUEUE_DEPTH":512,"TOKEN_QUEUE_DEPTH":1024}
.uop 0 0 0
.uop 0 1 1
.uop 0 2 2
.uop 0 3 3
.uop 0 4 4
.uop 0 18 5
.uop 0 19 6
.uop 0 20 7
.uop 0 21 8
.uop 0 22 9
.uop 0 36 10
.uop 0 37 11
.uop 0 38 12
.uop 0 39 13
.uop 0 40 14
.uop 0 54 15
.uop 0 55 16
.uop 0 56 17
.uop 0 57 18
.uop 0 58 19
.uop 0 72 20
.uop 0 73 21
.uop 0 74 22
.uop 0 75 23
.uop 0 76 24
.uop 0 196 0
.uop 0 197 0
.uop 0 198 0
.uop 0 199 0
.uop 0 0 0
LOAD UOP sram=0 dram=9216 y=1 x=30 stride=30
LOAD INP sram=0 dram=0 y=14 x=14 stride=14 pad=2,2,2,2
LOAD WGT sram=0 dram=32 y=1 x=25 stride=25 deps=push_next
LOAD ACC sram=196 dram=256 y=1 x=4 stride=4
LOAD ACC sram=0 dram=320 y=14 x=14 stride=14
GEMM uop=0:25 iter=14,14 dst=14,1 src=18,1 wgt=0,0 deps=pop_prev
ALU MAX uop=25:26 iter=1,196 dst=0,1 src=0,0
ALU MIN uop=26:27 iter=1,196 dst=0,1 src=0,0
ALU MUL uop=27:28 iter=1,196 dst=0,1 src=0,0
ALU ADD uop=28:29 iter=1,196 dst=0,1 src=0,0
ALU SHR uop=29:30 iter=1,196 dst=0,1 src=0,0 imm=24 deps=push_next
STORE OUT sram=0 dram=256 y=14 x=14 stride=14 deps=pop_prev
LOAD INP sram=0 dram=0 y=0 x=0 stride=0 deps=push_next
STORE OUT sram=0 dram=0 y=0 x=0 stride=0 deps=push_prev
LOAD UOP sram=0 dram=0 y=0 x=0 stride=0 deps=pop_prev|pop_next
FINISH
