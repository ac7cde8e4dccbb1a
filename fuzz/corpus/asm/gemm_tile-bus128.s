# program 'gemm_tile', config 1x16_i8w8a32_15_15_18_17 (LOG_BUS_WIDTH=7), 7 instructions, 1 uops
.name gemm_tile
.config {"LOG_INP_WIDTH":3,"LOG_WGT_WIDTH":3,"LOG_ACC_WIDTH":5,"LOG_BATCH":0,"LOG_BLOCK_IN":4,"LOG_BLOCK_OUT":4,"LOG_UOP_BUFF_SIZE":15,"LOG_INP_BUFF_SIZE":15,"LOG_WGT_BUFF_SIZE":18,"LOG_ACC_BUFF_SIZE":17,"LOG_BUS_WIDTH":7,"CLOCK_MHZ":100.0,"DRAM_LATENCY":32,"CMD_QUEUE_DEPTH":512,"TOKEN_QUEUE_DEPTH":1024}
.uop 0 0 0
LOAD INP sram=0 dram=256 y=1 x=1 stride=1
LOAD WGT sram=0 dram=32 y=1 x=1 stride=1 deps=push_next
LOAD UOP sram=0 dram=0 y=1 x=1 stride=1
GEMM uop=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0 reset
GEMM uop=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0 deps=pop_prev|push_next
STORE OUT sram=0 dram=768 y=1 x=1 stride=1 deps=pop_prev|push_prev
FINISH deps=pop_next
